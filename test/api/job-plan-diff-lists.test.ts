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
    // Tags are a set, as Nomad's stringSetDiff compares them: one block of the values deleted and added.
    expect(web.Fields).toBeNull();
    expect(web.Objects).toEqual([
      expect.objectContaining({ Name: 'Check', Fields: [expect.objectContaining({ Name: 'Interval', New: '10000000000' })] }),
      { Type: 'Edited', Name: 'Tags', Fields: [{ Type: 'Added', Name: 'Tags', Old: '', New: 'green', Annotations: null }, { Type: 'Deleted', Name: 'Tags', Old: 'blue', New: '', Annotations: null }], Objects: null },
    ]);
    expect(byType('Added').map((o) => o.Fields?.find((f) => f.Name === 'Name')?.New)).toEqual(['api']);
    expect(byType('Deleted').map((o) => o.Fields?.find((f) => f.Name === 'Name')?.Old)).toEqual(['admin']);
  });

  it.each<[string, unknown, unknown, unknown]>([
    ['reordered: no change', ['dc1', 'dc2'], ['dc2', 'dc1'], undefined],
    ['one added', ['dc1'], ['dc1', 'dc2'], { Type: 'Added', Name: 'Datacenters', Fields: [{ Type: 'Added', Name: 'Datacenters', Old: '', New: 'dc2', Annotations: null }], Objects: null }],
    ['one replaced', ['*'], ['west-*'], { Type: 'Edited', Name: 'Datacenters', Fields: [
      { Type: 'Added', Name: 'Datacenters', Old: '', New: 'west-*', Annotations: null },
      { Type: 'Deleted', Name: 'Datacenters', Old: '*', New: '', Annotations: null },
    ], Objects: null }],
  ])('diffs a job\'s datacenters as a set, as Nomad does: %s', (_name, before, after, expected) => {
    const diff = jobDiff({ ...job([]), Datacenters: before }, { ...job([]), Datacenters: after }, {});
    expect(((diff['Objects'] ?? []) as unknown[]).find((o) => (o as { Name: string }).Name === 'Datacenters')).toEqual(expected);
    expect(diff['Fields']).toBeNull();
  });

  it('finds no change in the same lists', () => {
    const a = job([svc('web', ['blue'])]);
    expect(jobDiff(a, structuredClone(a), {})['Type']).toBe('None');
  });
});
