import { describe, expect, it } from 'vitest';
import { jobDiff } from '../../src/api/job-plan-diff.ts';

const job = (services: unknown[]) => ({ ID: 'web', TaskGroups: [{ Name: 'app', Services: services, Tasks: [{ Name: 't', Driver: 'mock', Config: {} }] }] });
const svc = (name: string, tags: string[], checks: unknown[] = []) => ({ Name: name, Provider: 'nomad', PortLabel: 'http', Tags: tags, Checks: checks });

describe('the plan diff of lists of blocks', () => {
  it('diffs each service as one block, matched by name, its checks nested', () => {
    const before = job([svc('web', ['blue'], [{ Name: 'alive', Type: 'tcp', Interval: 5e9, Timeout: 1e9 }]), svc('admin', [])]);
    const after = job([svc('web', ['green'], [{ Name: 'alive', Type: 'tcp', Interval: 10e9, Timeout: 1e9 }]), svc('api', [])]);
    const group = (jobDiff(before, after, {})['TaskGroups'] as { Objects: { Type: string; Name: string; Fields: { Name: string; Old: string; New: string }[] | null; Objects: { Name: string; Fields: { Name: string; New: string }[] }[] | null }[] }[])[0]!;
    const byType = (t: string) => group.Objects.filter((o) => o.Type === t);
    expect(byType('Edited')).toHaveLength(1);
    const web = byType('Edited')[0]!;
    expect(web.Name).toBe('Service');
    expect(web.Fields).toEqual([expect.objectContaining({ Name: 'Tags[0]', Old: 'blue', New: 'green' })]);
    expect(web.Objects).toEqual([expect.objectContaining({ Name: 'Check', Fields: [expect.objectContaining({ Name: 'Interval', New: '10000000000' })] })]);
    expect(byType('Added').map((o) => o.Fields?.find((f) => f.Name === 'Name')?.New)).toEqual(['api']);
    expect(byType('Deleted').map((o) => o.Fields?.find((f) => f.Name === 'Name')?.Old)).toEqual(['admin']);
  });

  it('finds no change in the same lists', () => {
    const a = job([svc('web', ['blue'])]);
    expect(jobDiff(a, structuredClone(a), {})['Type']).toBe('None');
  });
});
