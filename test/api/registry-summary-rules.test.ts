/**
 * The registry's job summary and status (src/api/job-registry.ts), rule by rule, through a served agent in
 * process (mock tasks): each client status counted under its own counter, Queued as what the job wants and
 * has not placed, the job's status from its allocations, and the summary's index, which moves only when the
 * counts or the status do.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { call, waitForAllocs, type Alloc } from './agent-process.ts';
import { cleanUp, mockJob, runJob, serve, until, type Served } from './in-process-agent.ts';

afterEach(cleanUp);

const summaryOf = async (s: Served, id: string) => (await call(s.socket, 'GET', `/v1/job/${id}/summary`)).json<{ Summary: Record<string, Record<string, number>>; ModifyIndex: number; CreateIndex: number }>();
const statusOf = async (s: Served, id: string) => (await call(s.socket, 'GET', `/v1/job/${id}`)).json<{ Status: string; ModifyIndex: number }>().Status;

/** A job of three groups: one whose task runs, one that completes, one that fails (no restarts). */
function mixed(id: string) {
  const group = (Name: string, Config: Record<string, unknown>) => ({
    Name, Count: 1, RestartPolicy: { Attempts: 0, Mode: 'fail', Interval: 600e9, Delay: 1e9 }, ReschedulePolicy: { Attempts: 0, Unlimited: false },
    Tasks: [{ Name: 't', Driver: 'mock', Config }],
  });
  return { Job: { ID: id, Type: 'batch', TaskGroups: [group('runs', { run_for: '1h' }), group('ends', { run_for: '10ms' }), group('fails', { run_for: '10ms', exit_code: 3 })] } };
}

describe('the job summary', () => {
  it('counts each allocation under its client status, per group', async () => {
    const s = await serve();
    await call(s.socket, 'PUT', '/v1/jobs', mixed('mix'));
    await waitForAllocs(s.socket, '/v1/job/mix/allocations', (l) => l.length === 3 && ['running', 'complete', 'failed'].every((c) => l.some((a) => a.ClientStatus === c)));
    const zero = { Queued: 0, Complete: 0, Failed: 0, Running: 0, Starting: 0, Lost: 0, Unknown: 0 };
    expect((await summaryOf(s, 'mix')).Summary).toEqual({
      runs: { ...zero, Running: 1 }, ends: { ...zero, Complete: 1 }, fails: { ...zero, Failed: 1 },
    });
    expect(await statusOf(s, 'mix')).toBe('running');
  });

  it('counts a placed allocation that has not started as Starting, and a wanted one not placed as Queued', async () => {
    const s = await serve();
    s.api.registry.capacity = { cpu: 0, cores: 1, memoryMB: 100 };
    const body = mockJob('web', { t: { run_for: '1h', start_block_for: '1h' } });
    (body.Job.TaskGroups[0] as Record<string, unknown>)['Count'] = 2;
    (body.Job.TaskGroups[0]!.Tasks[0] as Record<string, unknown>)['Resources'] = { MemoryMB: 60 };
    await call(s.socket, 'PUT', '/v1/jobs', body);
    // One fits (60 of 100 MB), the other waits: Starting 1, Queued 1; the job is pending.
    const summary = await until(() => summaryOf(s, 'web'), (v) => v.Summary['g']?.['Starting'] === 1, 'the placed allocation to be starting');
    expect(summary.Summary['g']).toMatchObject({ Queued: 1, Starting: 1, Running: 0 });
    expect(await statusOf(s, 'web')).toBe('pending');
  });

  it('counts a replacement waiting in a blocked evaluation as Queued while the allocation it replaces still runs', async () => {
    const s = await serve();
    s.api.registry.capacity = { cpu: 0, cores: 1, memoryMB: 100 };
    const sized = (memoryMB: number) => {
      const body = mockJob('web');
      (body.Job.TaskGroups[0]!.Tasks[0] as Record<string, unknown>)['Resources'] = { MemoryMB: memoryMB };
      return body;
    };
    await call(s.socket, 'PUT', '/v1/jobs', sized(60));
    await waitForAllocs(s.socket, '/v1/job/web/allocations', (l) => l[0]?.ClientStatus === 'running');
    // The new version fits nowhere: its allocation is not placed and the old one runs on (Nomad's scheduler).
    expect((await call(s.socket, 'PUT', '/v1/jobs', sized(150))).status).toBe(200);
    const evals = await until(async () => (await call(s.socket, 'GET', '/v1/job/web/evaluations')).json<{ Status: string }[]>(), (l) => l.some((e) => e.Status === 'blocked'), 'a blocked evaluation');
    expect(evals.some((e) => e.Status === 'blocked')).toBe(true);
    expect((await summaryOf(s, 'web')).Summary['g']).toMatchObject({ Queued: 1, Running: 1 });
  });

  it('queues nothing for a stopped job, whose status is dead once its allocation has ended', async () => {
    const s = await serve();
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('web'));
    await waitForAllocs(s.socket, '/v1/job/web/allocations', (l) => l[0]?.ClientStatus === 'running');
    await call(s.socket, 'DELETE', '/v1/job/web');
    const ended = await waitForAllocs(s.socket, '/v1/job/web/allocations', (l: Alloc[]) => l[0]?.ClientStatus === 'complete');
    expect(ended).toHaveLength(1);
    expect((await summaryOf(s, 'web')).Summary['g']).toMatchObject({ Queued: 0, Complete: 1, Running: 0 });
    expect(await statusOf(s, 'web')).toBe('dead');
  });

  it('is pending with no allocation at all, and dead once every allocation has ended', async () => {
    const s = await serve();
    s.api.registry.capacity = { cpu: 0, cores: 1, memoryMB: 10 };
    const big = mockJob('big');
    (big.Job.TaskGroups[0]!.Tasks[0] as Record<string, unknown>)['Resources'] = { MemoryMB: 64 };
    await call(s.socket, 'PUT', '/v1/jobs', big);
    expect(await statusOf(s, 'big')).toBe('pending');
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('short', { t: { run_for: '10ms' } }, { Type: 'batch' }));
    await waitForAllocs(s.socket, '/v1/job/short/allocations', (l) => l[0]?.ClientStatus === 'complete');
    expect(await statusOf(s, 'short')).toBe('dead');
  });

  it('moves its index with its counts, not with an allocation update that leaves them, and forgets a purged job\'s', async () => {
    const s = await serve();
    const reg = s.api.registry;
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('web'));
    const job = reg.getJob('web')!;
    const registered = reg.summaryIndexOf('web');
    expect(registered).toBe(job.modifyIndex);
    await waitForAllocs(s.socket, '/v1/job/web/allocations', (l) => l[0]?.ClientStatus === 'running');
    const runningAt = reg.summaryIndexOf('web');
    expect(runningAt).toBeGreaterThan(registered);
    expect(reg.summaryIndex).toBe(runningAt);
    const summary = await summaryOf(s, 'web');
    expect(summary.ModifyIndex).toBe(runningAt);
    expect(summary.CreateIndex).toBe(job.createIndex);

    // Another job's changes move the overall index, not this job's.
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('other'));
    await waitForAllocs(s.socket, '/v1/job/other/allocations', (l) => l[0]?.ClientStatus === 'running');
    expect(reg.summaryIndexOf('web')).toBe(runningAt);
    expect(reg.summaryIndex).toBeGreaterThan(runningAt);

    const purge = (await call(s.socket, 'DELETE', '/v1/job/web?purge=true')).json<{ Index: number }>();
    expect(reg.summaryIndexOf('web')).toBe(0);
    expect(reg.summaryIndex).toBeGreaterThanOrEqual(purge.Index);
  });

  it('moves its index when the counts change and the status does not: a second group starting in a running job', async () => {
    const s = await serve();
    const body = mockJob('two');
    body.Job.TaskGroups.push({ Name: 'late', Count: 1, Tasks: [{ Name: 't', Driver: 'mock', Config: { run_for: '1h', start_block_for: '300ms' } }] });
    await call(s.socket, 'PUT', '/v1/jobs', body);
    const both = await waitForAllocs(s.socket, '/v1/job/two/allocations', (l) => l.length === 2 && l.every((a) => a.ClientStatus === 'running'));
    expect(s.api.registry.summaryIndexOf('two')).toBe(Math.max(...both.map((a) => a.ModifyIndex)));
  });

  it('does not count a stopped allocation against Queued: its replacement does', async () => {
    const s = await serve();
    s.api.registry.capacity = { cpu: 0, cores: 1, memoryMB: 100 };
    const body = mockJob('web');
    (body.Job.TaskGroups[0] as Record<string, unknown>)['Count'] = 2;
    (body.Job.TaskGroups[0]!.Tasks[0] as Record<string, unknown>)['Resources'] = { MemoryMB: 60 };
    await call(s.socket, 'PUT', '/v1/jobs', body);
    const [first] = await waitForAllocs(s.socket, '/v1/job/web/allocations', (l) => l.length === 1 && l[0]!.ClientStatus === 'running');
    expect((await summaryOf(s, 'web')).Summary['g']).toMatchObject({ Queued: 1, Running: 1 });
    await call(s.socket, 'POST', `/v1/allocation/${first!.ID}/stop`);
    await waitForAllocs(s.socket, '/v1/job/web/allocations', (l) => l.length === 2 && l.some((a) => a.DesiredStatus === 'run' && a.ClientStatus === 'running'));
    expect((await summaryOf(s, 'web')).Summary['g']).toMatchObject({ Queued: 1 });
  });
});

describe('the jobs list index across an agent restart', () => {
  it('is never smaller in the agent that takes over the data dir than in the one before it', async () => {
    const s = await serve();
    const alloc = await runJob(s, mockJob('web'));
    await call(s.socket, 'POST', `/v1/allocation/${alloc.ID}/stop`);
    await waitForAllocs(s.socket, '/v1/job/web/allocations', (l) => l.some((a) => a.ID === alloc.ID && a.ClientStatus === 'complete'));
    const before = Number((await call(s.socket, 'GET', '/v1/jobs')).headers['x-nomad-index']);
    const summaryBefore = (await summaryOf(s, 'web')).ModifyIndex;
    await s.stop();

    const next = await serve(s.dataDir);
    expect(Number((await call(next.socket, 'GET', '/v1/jobs')).headers['x-nomad-index'])).toBeGreaterThanOrEqual(before);
    expect((await summaryOf(next, 'web')).ModifyIndex).toBeGreaterThanOrEqual(summaryBefore);
  });
});
