/**
 * The `update` block: merged group over job over Nomad's defaults into AllocSpec.update (what the
 * client's health watcher uses), checked with Nomad's UpdateStrategy and TaskGroup rules, from HCL and
 * from Nomad's API JSON.
 */
import { describe, expect, it } from 'vitest';
import { specError } from './spec-error-of.ts';
import { parseJob, parseJobText, validateAllocSpec, SpecError } from '../../src/jobspec/index.ts';

const hcl = (text: string) => parseJobText(text, { format: 'hcl', file: 'job.nomad' });

function jobWith({ type = 'service', job = '', group = '' }: { type?: string; job?: string; group?: string }): string {
  return `job "j" {\n type = "${type}"\n${job}\n  group "g" {\n${group}\n    task "t" {\n driver = "mock"\n    }\n  }\n}\n`;
}

describe('the update block', () => {
  it('fills the fields a block leaves out with Nomad\'s defaults (10s healthy, 5m deadline, checks)', async () => {
    const [alloc] = await hcl(jobWith({ group: 'update {\n max_parallel = 2\n}' }));
    expect(alloc!.update).toEqual({ minHealthyTime: 10_000, healthyDeadline: 300_000, healthCheck: 'checks' });
  });

  it('merges the group\'s fields over the job\'s, field by field', async () => {
    const [alloc] = await hcl(
      jobWith({ job: 'update {\n min_healthy_time = "3s"\n health_check = "task_states"\n}', group: 'update {\n healthy_deadline = "1m"\n}' }),
    );
    expect(alloc!.update).toEqual({ minHealthyTime: 3_000, healthyDeadline: 60_000, healthCheck: 'task_states' });
  });

  it('gives every group the job-level block when the group has none', async () => {
    const [alloc] = await hcl(jobWith({ job: 'update {\n min_healthy_time = "2s"\n}' }));
    expect(alloc!.update?.minHealthyTime).toBe(2_000);
  });

  it('has no deployment without a block, or with max_parallel = 0 (Nomad turns deployments off)', async () => {
    const [none] = await hcl(jobWith({}));
    expect(none!.update).toBeUndefined();
    const [off] = await hcl(jobWith({ group: 'update {\n max_parallel = 0\n}' }));
    expect(off!.update).toBeUndefined();
  });

  it('refuses an update block on a batch job, naming the block', async () => {
    const err = await specError(hcl(jobWith({ type: 'batch', group: 'update {\n min_healthy_time = "2s"\n}' })));
    expect(err.problems).toEqual([
      expect.objectContaining({ path: 'job.j.group.g.update', message: expect.stringContaining('job type "batch" does not allow an update block') }),
    ]);
    // max_parallel = 0 is "no deployments", which a batch job may say (Nomad's API writes it so).
    await expect(hcl(jobWith({ type: 'batch', group: 'update {\n max_parallel = 0\n}' }))).resolves.toHaveLength(1);
  });

  it('refuses a min_healthy_time that is not below healthy_deadline, at the field and its line', async () => {
    const err = await specError(hcl(jobWith({ group: 'update {\n min_healthy_time = "5m"\n healthy_deadline = "1m"\n}' })));
    expect(err.problems).toHaveLength(1);
    expect(err.problems[0]).toMatchObject({ path: 'job.j.group.g.update.min_healthy_time', file: 'job.nomad', line: 6 });
    expect(err.problems[0]!.message).toBe('min_healthy_time (5m0s) must be less than healthy_deadline (1m0s)');
  });

  it('checks the merged block: a job-level deadline under the group\'s min_healthy_time is caught', async () => {
    const err = await specError(hcl(jobWith({ job: 'update {\n healthy_deadline = "20s"\n}', group: 'update {\n min_healthy_time = "30s"\n}' })));
    expect(err.problems.map((p) => p.path)).toEqual(['job.j.group.g.update.min_healthy_time']);
  });

  it('refuses a healthy_deadline not below progress_deadline, an unknown health_check and a typo', async () => {
    const err = await specError(
      hcl(jobWith({ group: 'update {\n healthy_deadline = "20m"\n health_check = "tcp"\n min_healty_time = "1s"\n}' })),
    );
    const paths = err.problems.map((p) => p.path).sort();
    expect(paths).toEqual(['job.j.group.g.update.health_check', 'job.j.group.g.update.min_healty_time']);
    expect(err.problems.find((p) => p.path.endsWith('min_healty_time'))!.message).toContain('min_healthy_time');
    const deadline = await specError(hcl(jobWith({ group: 'update {\n healthy_deadline = "20m"\n}' })));
    expect(deadline.problems[0]).toMatchObject({
      path: 'job.j.group.g.update.healthy_deadline',
      message: 'healthy_deadline (20m0s) must be less than progress_deadline (10m0s)',
    });
  });

  it('warns about the rollout fields allocrun does not act on (stagger, with Nomad\'s reason), not about canary, auto_revert, max_parallel and progress_deadline, which it does', async () => {
    const { allocs, warnings } = await parseJob(jobWith({ group: 'update {\n canary = 1\n auto_revert = true\n max_parallel = 1\n progress_deadline = "15m"\n stagger = "10s"\n}' }), {
      format: 'hcl',
      file: 'job.nomad',
    });
    expect(allocs[0]!.update).toBeDefined();
    expect(warnings.map((w) => w.path)).toEqual(['job.j.group.g.update.stagger']);
    expect(warnings[0]!.message).toContain('Nomad applies "stagger" only between the max_parallel sets of a system job\'s update');
  });

  it('takes progress_deadline = 0 (no deadline) with any healthy_deadline, and refuses one not above a healthy_deadline set at the job level', async () => {
    const off = await parseJob(jobWith({ group: 'update {\n healthy_deadline = "20m"\n progress_deadline = "0s"\n}' }), { format: 'hcl', file: 'job.nomad' });
    expect(off.warnings).toEqual([]);
    const err = await specError(hcl(jobWith({ job: 'update {\n healthy_deadline = "6m"\n}', group: 'update {\n progress_deadline = "6m"\n}' })));
    expect(err.problems).toEqual([expect.objectContaining({ path: 'job.j.group.g.update', message: 'healthy_deadline (6m0s) must be less than progress_deadline (6m0s)' })]);
  });

  it('reads Nomad\'s API JSON Update (nanoseconds), without warning about the defaults it always fills in', async () => {
    const api = {
      Job: {
        ID: 'j',
        Type: 'service',
        Update: { MaxParallel: 1, Stagger: 30e9, HealthCheck: 'checks', MinHealthyTime: 10e9, HealthyDeadline: 300e9, ProgressDeadline: 600e9, Canary: 0, AutoRevert: false },
        TaskGroups: [
          {
            Name: 'g',
            Count: 1,
            Update: { MaxParallel: 1, Stagger: 30e9, HealthCheck: 'task_states', MinHealthyTime: 4e9, HealthyDeadline: 60e9, ProgressDeadline: 600e9, Canary: 0 },
            Tasks: [{ Name: 't', Driver: 'mock', Config: {} }],
          },
        ],
      },
    };
    const { allocs, warnings } = await parseJob(JSON.stringify(api), { format: 'json', file: 'job.json' });
    expect(allocs[0]!.update).toEqual({ minHealthyTime: 4_000, healthyDeadline: 60_000, healthCheck: 'task_states' });
    expect(warnings.filter((w) => w.path.includes('Update'))).toEqual([]);
  });
});

describe('AllocSpec.update and desiredStatus in code', () => {
  const base = { id: 'a', job: 'j', group: 'g', type: 'service', tasks: [{ name: 't', driver: 'mock', config: {} }] };

  it('accepts an update strategy and an evicted allocation', () => {
    expect(() => validateAllocSpec({ ...base, update: { minHealthyTime: 1_000, healthyDeadline: 5_000, healthCheck: 'manual' } })).not.toThrow();
    expect(() => validateAllocSpec({ ...base, desiredStatus: 'evict' })).not.toThrow();
  });

  it('names what is wrong in an update strategy', () => {
    let err: unknown;
    try {
      validateAllocSpec({ ...base, update: { minHealthyTime: 9_000, healthyDeadline: 5_000, healthCheck: 'tcp', minHealthy: 1 } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SpecError);
    const paths = (err as SpecError).problems.map((p) => p.path).sort();
    expect(paths).toEqual(['update.healthCheck', 'update.minHealthy']);
  });
});
