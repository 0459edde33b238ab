/**
 * How the registry plans and applies a write (src/api/job-registry.ts: reconcile, place, stop, write, persist,
 * start, watch), rule by rule, through one served agent in process (mock tasks; each test its own job IDs):
 * which allocations an update keeps, updates in place or replaces, what the store keeps of each, the batch of
 * events a write publishes (Nomad's topics, types and payloads), and a runner that cannot start.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EventBatch } from '../../src/api/event-broker.ts';
import { recordPublishedBatches } from './published-batches.ts';
import { heldMockDriver } from './held-mock-driver.ts';
import { call, waitForAllocs, type Alloc } from './agent-process.ts';
import { cleanUp, mockJob, runJob, serve, type Served, SUITE_TIMEOUT, until, serveWithRoom } from './in-process-agent.ts';

type Json = Record<string, any>;

let s: Served;
const batches: EventBatch[] = [];
const log: string[] = [];
beforeAll(async () => {
  s = await serveWithRoom();
  s.api.registry.log = (line) => log.push(line);
  recordPublishedBatches(batches);
});
afterEach(() => {
  log.splice(0);
});
afterAll(async () => {
  vi.restoreAllMocks();
  await cleanUp();
});

const get = async <T = Json>(path: string) => (await call(s.socket, 'GET', path)).json<T>();
const put = async (path: string, body?: unknown) => {
  const res = await call(s.socket, 'PUT', path, body);
  expect(res.status, res.text).toBe(200);
  return res.json<Json>();
};
const allocsOf = (id: string) => get<(Alloc & Json)[]>(`/v1/job/${id}/allocations`);
const batchAt = (index: number) => batches.find((b) => b.Index === index);
const withTask = (body: ReturnType<typeof mockJob>, fields: Json) => (Object.assign(body.Job.TaskGroups[0]!.Tasks[0]!, fields), body);

describe('a registration\'s events', { timeout: SUITE_TIMEOUT }, () => {
  it('are one batch at its index: the evaluation first, then the job registered, then each placement, in Nomad\'s shapes', async () => {
    const reg = await put('/v1/jobs', mockJob('evented'));
    // The evaluations list moves to the write's index with it.
    expect(Number((await call(s.socket, 'GET', '/v1/evaluations')).headers['x-nomad-index'])).toBeGreaterThanOrEqual(reg['Index']);
    const [alloc] = await allocsOf('evented');
    const batch = batchAt(reg['Index'])!;
    expect(batch.Events.map((e) => [e.Topic, e.Type, e.Key, e.Index])).toEqual([
      ['Evaluation', 'EvaluationUpdated', reg['EvalID'], reg['Index']],
      ['Job', 'JobRegistered', 'evented', reg['Index']],
      ['Allocation', 'PlanResult', alloc!.ID, reg['Index']],
    ]);
    const [evaluation, job, placed] = batch.Events as Json[];
    expect(evaluation).toMatchObject({ Namespace: 'default', FilterKeys: ['evented'], Payload: { Evaluation: { ID: reg['EvalID'], JobID: 'evented', Status: 'complete', StatusDescription: '', TriggeredBy: 'job-register', Priority: 50, Type: 'service', JobModifyIndex: reg['Index'] } } });
    expect(job).toMatchObject({ Namespace: 'default', FilterKeys: [], Payload: { Job: { ID: 'evented', Version: 0, JobModifyIndex: reg['Index'] } } });
    expect(placed).toMatchObject({ Namespace: 'default', FilterKeys: ['evented'], Payload: { Allocation: { ID: alloc!.ID, JobID: 'evented', DesiredStatus: 'run' } } });
  });

  it('are followed by one AllocationUpdated batch per runner state change, each at the next index, the allocation moving with it', async () => {
    const reg = await put('/v1/jobs', mockJob('watched'));
    const [alloc] = await waitForAllocs(s.socket, '/v1/job/watched/allocations', (l) => l[0]?.ClientStatus === 'running');
    const updates = batches.filter((b) => b.Index > reg['Index'] && b.Events.some((e) => e.Key === alloc!.ID));
    expect(updates.length).toBeGreaterThan(0);
    for (const b of updates) expect(b.Events.map((e) => [e.Topic, e.Type, e.FilterKeys])).toEqual([['Allocation', 'AllocationUpdated', ['watched']]]);
    const last = updates.at(-1)!;
    expect((last.Events[0] as Json)['Payload']['Allocation']['ClientStatus']).toBe('running');
    const read = await get(`/v1/allocation/${alloc!.ID}`);
    expect(read['ModifyIndex']).toBe(last.Index);
    // ModifyTime in nanoseconds, now.
    expect(read['ModifyTime']).toBeGreaterThan((Date.now() - 60_000) * 1e6);
    expect(read['AllocModifyIndex']).toBe(reg['Index']);
  });
});

describe('an allocation\'s ModifyTime', { timeout: SUITE_TIMEOUT }, () => {
  it('moves to now with each runner state change', async () => {
    // Started 200 ms after its placement (the mock's start_block_for, on the agent's clock).
    await put('/v1/jobs', mockJob('retimed', { t: { run_for: '1h', start_block_for: '200ms' } }));
    const [alloc] = await waitForAllocs(s.socket, '/v1/job/retimed/allocations', (l) => l[0]?.ClientStatus === 'running');
    const read = await get(`/v1/allocation/${alloc!.ID}`);
    expect(read['ModifyTime'] - read['CreateTime']).toBeGreaterThanOrEqual(200e6);
  });

  it('moves, with its index, for a signal\'s task event, while the job summary\'s own index stays', async () => {
    const alloc = await runJob(s, mockJob('restarted'));
    const summaryAt = s.api.registry.summaryIndexOf('restarted');
    const before = (await get(`/v1/allocation/${alloc.ID}`))['ModifyIndex'];
    // A signal the task takes: a task event, the allocation still running.
    expect((await call(s.socket, 'POST', `/v1/client/allocation/${alloc.ID}/signal`, { Task: 't', Signal: 'SIGHUP' })).status).toBe(200);
    const after = await until(() => get(`/v1/allocation/${alloc.ID}`), (a) => a['ModifyIndex'] > before, 'the signal\'s task event');
    expect(after['ClientStatus']).toBe('running');
    expect(after['ModifyIndex']).toBeGreaterThan(summaryAt);
    expect(s.api.registry.summaryIndexOf('restarted')).toBe(summaryAt);
  });

  it('moves to now with a stop, in the stop\'s own event', async () => {
    const alloc = await runJob(s, mockJob('stoptimed'));
    const runningAt = (await get(`/v1/allocation/${alloc.ID}`))['ModifyTime'] as number;
    await until(async () => Date.now() * 1e6, (now) => now > runningAt, 'the clock to pass the running update');
    const before = Date.now() * 1e6;
    const stop = await put(`/v1/allocation/${alloc.ID}/stop`);
    const told = batchAt(stop['Index'])!.Events.find((e) => e.Key === alloc.ID) as Json;
    expect(told['Payload']['Allocation']['ModifyTime']).toBeGreaterThanOrEqual(before);
  });
});

describe('an update', { timeout: SUITE_TIMEOUT }, () => {
  it('that drops a group stops that group\'s allocation as not needed and leaves the other group\'s as it is', async () => {
    const two = mockJob('regrouped');
    two.Job.TaskGroups.push({ ...two.Job.TaskGroups[0]!, Name: 'gone' });
    await put('/v1/jobs', two);
    const both = await waitForAllocs(s.socket, '/v1/job/regrouped/allocations', (l) => l.length === 2 && l.every((a) => a.ClientStatus === 'running'));
    const up = await put('/v1/jobs', mockJob('regrouped'));
    const after = await allocsOf('regrouped');
    expect(after.map((a) => a.ID).sort()).toEqual(both.map((a) => a.ID).sort());
    expect(after.find((a) => a.TaskGroup === 'gone')).toMatchObject({ DesiredStatus: 'stop', DesiredDescription: 'alloc not needed due to job update', AllocModifyIndex: up['Index'] });
    expect(after.find((a) => a.TaskGroup === 'g')).toMatchObject({ DesiredStatus: 'run', JobVersion: 1 });
    const gone = after.find((a) => a.TaskGroup === 'gone')!;
    expect(batchAt(up['Index'])!.Events.filter((e) => e.Topic === 'Allocation').map((e) => [e.Type, e.Key])).toEqual([['PlanResult', gone.ID]]);
  });

  it('that adds a group places its allocation beside the other group\'s, whatever their instance numbers', async () => {
    const kept = await runJob(s, mockJob('grown'));
    const two = mockJob('grown');
    two.Job.TaskGroups.push({ ...two.Job.TaskGroups[0]!, Name: 'added' });
    const up = await put('/v1/jobs', two);
    const after = await allocsOf('grown');
    expect(after.map((a) => [a.TaskGroup, a.DesiredStatus])).toEqual([['g', 'run'], ['added', 'run']]);
    expect(after[0]!.ID).toBe(kept.ID);
    expect(after[1]).toMatchObject({ CreateIndex: up['Index'], EvalID: up['EvalID'] });
  });

  it('that is destructive replaces a running batch allocation (only a completed one is left alone)', async () => {
    const old = await runJob(s, mockJob('batchrun', undefined, { Type: 'batch', Meta: { v: '1' } }));
    const up = await put('/v1/jobs', mockJob('batchrun', undefined, { Type: 'batch', Meta: { v: '2' } }));
    expect(await get(`/v1/allocation/${old.ID}`)).toMatchObject({ DesiredStatus: 'stop', DesiredDescription: 'alloc is being updated due to job update' });
    expect((await allocsOf('batchrun')).find((a) => a.ID !== old.ID)).toMatchObject({ PreviousAllocation: old.ID, JobVersion: 1, CreateIndex: up['Index'] });
    // Its evaluation is of the job's type.
    expect(await get(`/v1/evaluation/${up['EvalID']}`)).toMatchObject({ Type: 'batch', JobID: 'batchrun' });
  });

  it('to a count of 0 is evaluated as of the job\'s type, with no instance to take it from', async () => {
    await runJob(s, mockJob('emptied', undefined, { Type: 'batch' }));
    const none = mockJob('emptied', undefined, { Type: 'batch' });
    (none.Job.TaskGroups[0] as Json)['Count'] = 0;
    const up = await put('/v1/jobs', none);
    expect(await get(`/v1/evaluation/${up['EvalID']}`)).toMatchObject({ Type: 'batch', JobID: 'emptied' });
    expect((await allocsOf('emptied')).map((a) => a.DesiredStatus)).toEqual(['stop']);
  });


  it('in place keeps the allocation, its ports and its runner, which takes the new spec at the update\'s index', async () => {
    const body = () => ({ Job: { ...mockJob('inplace').Job, TaskGroups: [{ ...mockJob('inplace').Job.TaskGroups[0]!, Networks: [{ Mode: 'host', DynamicPorts: [{ Label: 'http' }] }] }] } });
    await put('/v1/jobs', body());
    const [alloc] = await waitForAllocs(s.socket, '/v1/job/inplace/allocations', (l) => l[0]?.ClientStatus === 'running');
    const before = await get(`/v1/allocation/${alloc!.ID}`);
    const updated = body();
    Object.assign(updated.Job.TaskGroups[0]!.Tasks[0]!, { KillTimeout: 7e9 });
    const up = await put('/v1/jobs', updated);
    const after = await allocsOf('inplace');
    expect(after.map((a) => a.ID)).toEqual([alloc!.ID]);
    const read = await get(`/v1/allocation/${alloc!.ID}`);
    expect(read).toMatchObject({ JobVersion: 1, AllocModifyIndex: up['Index'], DesiredStatus: 'run' });
    expect(before['AllocatedResources']['Shared']['Ports']).toHaveLength(1);
    expect(read['AllocatedResources']['Shared']['Ports']).toEqual(before['AllocatedResources']['Shared']['Ports']);
    const running = (s.agent.get(alloc!.ID)!.actor.getSnapshot().context as { alloc: { modifyIndex: number; tasks: { killTimeoutMs?: number }[] } }).alloc;
    expect(running.modifyIndex).toBe(up['Index']);
    expect(batchAt(up['Index'])!.Events.filter((e) => e.Topic === 'Allocation').map((e) => [e.Type, e.Key])).toEqual([['PlanResult', alloc!.ID]]);
    expect((s.store.get('allocs', alloc!.ID) as Json)['spec']['modifyIndex']).toBe(up['Index']);
  });

  it('that is destructive stops the allocation, in its words, and places a replacement at the new version, linked both ways', async () => {
    const old = await runJob(s, mockJob('destroyed', undefined, { Meta: { v: '1' } }));
    const up = await put('/v1/jobs', mockJob('destroyed', undefined, { Meta: { v: '2' } }));
    const allocs = await allocsOf('destroyed');
    const next = allocs.find((a) => a.ID !== old.ID)!;
    expect(await get(`/v1/allocation/${old.ID}`)).toMatchObject({ DesiredStatus: 'stop', DesiredDescription: 'alloc is being updated due to job update', NextAllocation: next.ID, AllocModifyIndex: up['Index'] });
    expect(next).toMatchObject({ PreviousAllocation: old.ID, JobVersion: 1, EvalID: up['EvalID'], CreateIndex: up['Index'], DesiredStatus: 'run', DesiredDescription: '' });
    const stored = s.store.get('allocs', old.ID) as Json;
    expect(stored).toMatchObject({ desired: 'stop', desiredDescription: 'alloc is being updated due to job update', allocModifyIndex: up['Index'], spec: { desiredStatus: 'stop', modifyIndex: up['Index'] } });
    // What the store keeps of an allocation: never its runner, its live state or the indexes of its client updates.
    for (const k of ['runner', 'lastState', 'modifyIndex', 'modifyTime', 'unrecorded']) expect(stored).not.toHaveProperty(k);
    // The stopped runner is told, and ends.
    await waitForAllocs(s.socket, '/v1/job/destroyed/allocations', (l) => l.find((a) => a.ID === old.ID)?.ClientStatus === 'complete');
    const stop = batchAt(up['Index'])!.Events.filter((e) => e.Topic === 'Allocation').map((e) => [e.Type, e.Key]);
    expect(stop).toEqual([['PlanResult', old.ID], ['PlanResult', next.ID]]);
  });

  it('leaves a completed batch allocation that a destructive change would replace, at the new version', async () => {
    const body = (v: string) => withTask(mockJob('finished', { t: { run_for: '10ms' } }, { Type: 'batch', Meta: { v } }), {});
    await put('/v1/jobs', body('1'));
    const [done] = await waitForAllocs(s.socket, '/v1/job/finished/allocations', (l) => l[0]?.ClientStatus === 'complete');
    const up = await put('/v1/jobs', body('2'));
    const after = await allocsOf('finished');
    expect(after.map((a) => [a.ID, a.DesiredStatus])).toEqual([[done!.ID, 'run']]);
    expect((await get(`/v1/allocation/${done!.ID}`))['JobVersion']).toBe(1);
    // Only the job changed: the allocation's own index did not move (no runner told anything).
    expect((await get(`/v1/allocation/${done!.ID}`))['AllocModifyIndex']).toBeLessThan(up['Index']);
    expect(batchAt(up['Index'])!.Events.filter((e) => e.Topic === 'Allocation')).toEqual([]);
  });

  it('in place tells a finished allocation nothing, yet moves it to the new version', async () => {
    await put('/v1/jobs', mockJob('ended', { t: { run_for: '10ms' } }, { Type: 'batch' }));
    const [done] = await waitForAllocs(s.socket, '/v1/job/ended/allocations', (l) => l[0]?.ClientStatus === 'complete');
    const up = await put('/v1/jobs', withTask(mockJob('ended', { t: { run_for: '10ms' } }, { Type: 'batch' }), { KillTimeout: 9e9 }));
    const read = await get(`/v1/allocation/${done!.ID}`);
    expect(read).toMatchObject({ JobVersion: 1, ClientStatus: 'complete' });
    expect(read['AllocModifyIndex']).toBeLessThan(up['Index']);
    expect(batchAt(up['Index'])!.Events.filter((e) => e.Topic === 'Allocation')).toEqual([]);
  });
});

describe('a new version that leaves an allocation as it is', { timeout: SUITE_TIMEOUT }, () => {
  it('moves it to the new version in the lists as in its own read, at the write\'s index', async () => {
    const alloc = await runJob(s, mockJob('bumped'));
    const listed = await call(s.socket, 'GET', '/v1/job/bumped/allocations');
    const summaryAt = s.api.registry.summaryIndexOf('bumped');
    const up = await put('/v1/jobs', mockJob('bumped', undefined, { Priority: 80 }));
    // Its counts and status are as they were: the summary's own index stays (the job's ModifyIndex moves).
    expect(s.api.registry.summaryIndexOf('bumped')).toBe(summaryAt);
    expect((await get(`/v1/allocation/${alloc.ID}`))['JobVersion']).toBe(1);
    // A watcher of the list at the index it read is answered with the new version, not left waiting.
    const next = await call(s.socket, 'GET', `/v1/job/bumped/allocations?index=${listed.headers['x-nomad-index']}&wait=5s`);
    expect(next.json<Alloc[]>().map((a) => [a.ID, a.JobVersion])).toEqual([[alloc.ID, 1]]);
    expect(Number(next.headers['x-nomad-index'])).toBe(up['Index']);
    expect((await get<Alloc[]>('/v1/allocations')).find((a) => a.ID === alloc.ID)!.JobVersion).toBe(1);
  });
});

describe('an evaluation of a job that lacks nothing', { timeout: SUITE_TIMEOUT }, () => {
  it('writes only itself: no allocation, and no index of theirs, moves', async () => {
    const alloc = await runJob(s, mockJob('steady'));
    const listed = await call(s.socket, 'GET', '/v1/job/steady/allocations');
    const before = await get(`/v1/allocation/${alloc.ID}`);
    const evaluated = await put('/v1/job/steady/evaluate', {});
    expect(batchAt(evaluated['Index'])!.Events.map((e) => [e.Topic, e.Key])).toEqual([['Evaluation', evaluated['EvalID']]]);
    expect(await get(`/v1/allocation/${alloc.ID}`)).toMatchObject({ ModifyIndex: before['ModifyIndex'], AllocModifyIndex: before['AllocModifyIndex'] });
    expect((await call(s.socket, 'GET', '/v1/job/steady/allocations')).headers['x-nomad-index']).toBe(listed.headers['x-nomad-index']);
    // The allocations table's index is the newest allocation change's (each has an index of its own), never the evaluation's.
    expect(Number((await call(s.socket, 'GET', '/v1/allocations')).headers['x-nomad-index'])).not.toBe(evaluated['Index']);
  });
});

describe('stops', { timeout: SUITE_TIMEOUT }, () => {
  it('of an allocation by the user publish AllocationUpdateDesiredStatus; of a job, PlanResult and JobDeregistered', async () => {
    const alloc = await runJob(s, mockJob('told'));
    const stop = await put(`/v1/allocation/${alloc.ID}/stop`);
    const events = batchAt(stop['Index'])!.Events.map((e) => [e.Topic, e.Type, e.Key]);
    const next = (await allocsOf('told')).find((a) => a.ID !== alloc.ID)!;
    expect(events).toEqual([['Evaluation', 'EvaluationUpdated', stop['EvalID']], ['Allocation', 'AllocationUpdateDesiredStatus', alloc.ID], ['Allocation', 'PlanResult', next.ID]]);
    const dereg = (await call(s.socket, 'DELETE', '/v1/job/told')).json<Json>();
    expect(batchAt(dereg['Index'])!.Events.map((e) => [e.Topic, e.Type, e.Key])).toEqual([['Evaluation', 'EvaluationUpdated', dereg['EvalID']], ['Job', 'JobDeregistered', 'told'], ['Allocation', 'PlanResult', next.ID]]);
    expect(s.store.get('jobs', 'told')).toMatchObject({ stop: true });
  });

  it('give the stopped allocation\'s runner its stopped spec, at the stop\'s index', async () => {
    const alloc = await runJob(s, mockJob('respecced'));
    const stop = await put(`/v1/allocation/${alloc.ID}/stop`);
    const told = (s.agent.get(alloc.ID)!.actor.getSnapshot().context as { alloc: { desiredStatus?: string; modifyIndex: number } }).alloc;
    expect(told).toMatchObject({ desiredStatus: 'stop', modifyIndex: stop['Index'] });
    await waitForAllocs(s.socket, '/v1/job/respecced/allocations', (l) => l.find((a) => a.ID === alloc.ID)?.ClientStatus === 'complete');
  });

  it('with purge take the job out of the store with its stop, and keep its allocations\' records', async () => {
    const alloc = await runJob(s, mockJob('purged'));
    await call(s.socket, 'DELETE', '/v1/job/purged?purge=true');
    expect(s.store.get('jobs', 'purged')).toBeUndefined();
    expect(s.store.get('allocs', alloc.ID)).toMatchObject({ desired: 'stop' });
    expect((await call(s.socket, 'GET', '/v1/job/purged')).status).toBe(404);
  });
});

describe('a runner that cannot start', { timeout: SUITE_TIMEOUT }, () => {
  it('is said in the log by allocation and job, its allocation failed, its record kept to run at the next start', async () => {
    const run = vi.spyOn(s.agent, 'run').mockImplementationOnce(() => {
      throw new Error('no runner today');
    });
    try {
      const reg = await put('/v1/jobs', mockJob('unstarted'));
      const [alloc] = await allocsOf('unstarted');
      expect(alloc).toMatchObject({ ClientStatus: 'failed', DesiredStatus: 'run' });
      expect(log).toEqual([`allocation ${alloc!.ID} (job "unstarted") could not be started: no runner today`]);
      expect(s.store.get('allocs', alloc!.ID)).toMatchObject({ desired: 'run', createIndex: reg['Index'] });
      expect(s.agent.get(alloc!.ID)).toBeUndefined();
    } finally {
      run.mockRestore();
    }
  });
});

describe('what a write could not place', { timeout: SUITE_TIMEOUT }, () => {
  it('is said in the log for its job, once, and its evaluation and the blocked one it makes are timed now in nanoseconds', async () => {
    const reg = s.api.registry;
    const room = reg.capacity;
    reg.capacity = { cpu: 0, cores: 64, memoryMB: 1 };
    try {
      const before = Date.now();
      const res = await put('/v1/jobs', withTask(mockJob('toolarge'), { Resources: { MemoryMB: 16 } }));
      const after = Date.now();
      expect(log).toEqual(['job "toolarge": failed to place 1 allocation of group "g": memory exhausted: the group asks for 16 MB; 1 MB of the node\'s 1 MB are free']);
      const evaluation = await get(`/v1/evaluation/${res['EvalID']}`);
      expect(evaluation['CreateTime']).toBe(evaluation['ModifyTime']);
      expect(evaluation['CreateTime']).toBeGreaterThanOrEqual(before * 1e6);
      expect(evaluation['CreateTime']).toBeLessThanOrEqual(after * 1e6);
      // And the blocked evaluation it made to place the rest later.
      const blocked = await get(`/v1/evaluation/${evaluation['BlockedEval']}`);
      expect(blocked).toMatchObject({ Status: 'blocked', CreateIndex: res['Index'] });
      expect(blocked['CreateTime']).toBeGreaterThanOrEqual(before * 1e6);
      expect(blocked['CreateTime']).toBeLessThanOrEqual(after * 1e6);
    } finally {
      reg.capacity = room;
    }
  });
});

describe('a blocking read of a job', { timeout: SUITE_TIMEOUT }, () => {
  it('wakes for the job\'s next version: the entry it holds is changed in place', async () => {
    const reg = await put('/v1/jobs', mockJob('held'));
    const waiting = call(s.socket, 'GET', `/v1/job/held?index=${reg['Index']}&wait=30s`);
    await until(async () => s.api.registry.getJob('held'), (j) => j !== undefined, 'the job');
    await new Promise((r) => setImmediate(r));
    const up = await put('/v1/jobs', mockJob('held', { t: { run_for: '3h' } }));
    const answer = await waiting;
    expect(answer.json<Json>()).toMatchObject({ Version: 1, ModifyIndex: up['Index'] });
  });
});

describe('what an allocation held frees', { timeout: SUITE_TIMEOUT }, () => {
  // An agent of its own with 100 MB, whose tasks named `held` start only when the test lets them: an allocation
  // that holds 80 MB and has not started, stopped or let go at the test's step.
  const held = heldMockDriver();
  let small: Served;
  beforeAll(async () => {
    small = await serve(undefined, undefined, { agent: { drivers: { mock: held.driver } } });
    small.api.registry.capacity = { cpu: 0, cores: 64, memoryMB: 100 };
  });
  afterAll(() => held.release());
  const sized = (id: string, task: Json, type = 'service') => withTask(mockJob(id, undefined, { Type: type }), { ...task, Resources: { MemoryMB: 80 } });
  const allocsAt = async (id: string) => (await call(small.socket, 'GET', `/v1/job/${id}/allocations`)).json<Json[]>();
  /** Registers `holder` (its start held) and then `waiter`, which waits blocked for its 80 MB. */
  async function holderAndWaiter(holder: Json, waiter: string, waiterTask: Json = {}): Promise<{ holder: string; blocked: Json }> {
    await call(small.socket, 'PUT', '/v1/jobs', holder);
    const [alloc] = await allocsAt(holder['Job']['ID']);
    await until(async () => held.holding.has(String(alloc!['ID'])), Boolean, 'the holder\'s start to be held');
    const reg = await call(small.socket, 'PUT', '/v1/jobs', sized(waiter, waiterTask));
    expect(reg.status).toBe(200);
    expect(await allocsAt(waiter)).toEqual([]);
    // Nothing has freed room: its blocked evaluation waits, not processed again (once its job's queue is idle).
    await small.api.registry.serialize(waiter, () => undefined);
    const first = (await call(small.socket, 'GET', `/v1/evaluation/${reg.json<Json>()['EvalID']}`)).json<Json>();
    const blocked = (await call(small.socket, 'GET', `/v1/evaluation/${first['BlockedEval']}`)).json<Json>();
    expect(blocked).toMatchObject({ Status: 'blocked', ModifyIndex: reg.json<Json>()['Index'] });
    return { holder: String(alloc!['ID']), blocked };
  }

  it('by a stop is placed at once, before the stopped allocation has ended, and moves the waiting job\'s summary', async () => {
    // The waiter's own task is held too, so nothing but the placement moves its summary.
    const { holder } = await holderAndWaiter(sized('stopped-holder', { Name: 'held' }), 'waits-for-stop', { Name: 'held' });
    await call(small.socket, 'DELETE', '/v1/job/stopped-holder');
    const [placed] = await waitForAllocs(small.socket, '/v1/job/waits-for-stop/allocations', (l) => l.length === 1);
    expect((await allocsAt('stopped-holder')).find((a) => a['ID'] === holder)).toMatchObject({ DesiredStatus: 'stop', ClientStatus: 'pending' });
    const summary = (await call(small.socket, 'GET', '/v1/job/waits-for-stop/summary')).json<Json>();
    expect(summary).toMatchObject({ ModifyIndex: (placed as Alloc & Json)['CreateIndex'], Summary: { g: { Queued: 0, Starting: 1 } } });
    held.release();
    await call(small.socket, 'DELETE', '/v1/job/waits-for-stop');
  });

  it('by an exit of its own is placed once the allocation has ended, and not before by a change that frees nothing', async () => {
    const { blocked } = await holderAndWaiter(sized('ending-holder', { Name: 'held', Config: { run_for: '10ms' } }, 'batch'), 'waits-for-exit');
    // Another allocation starting frees nothing: the blocked evaluation is not processed again for it.
    await runJob(small, withTask(mockJob('bystander'), { Resources: { MemoryMB: 10 } }));
    await small.api.registry.serialize('waits-for-exit', () => undefined);
    expect((await call(small.socket, 'GET', `/v1/evaluation/${blocked['ID']}`)).json<Json>()['ModifyIndex']).toBe(blocked['ModifyIndex']);
    held.release();
    await waitForAllocs(small.socket, '/v1/job/waits-for-exit/allocations', (l) => l.length === 1);
    expect((await allocsAt('ending-holder'))[0]).toMatchObject({ DesiredStatus: 'run', ClientStatus: 'complete' });
  });
});

describe('an agent shutting down', { timeout: SUITE_TIMEOUT }, () => {
  // Last in the file: the registry stays closed.
  it('processes no blocked evaluation again when what it stops frees room', async () => {
    const reg = s.api.registry;
    reg.capacity = { cpu: 0, cores: 64, memoryMB: 100 };
    const holder = await runJob(s, withTask(mockJob('holder'), { Resources: { MemoryMB: 80 } }));
    const waiting = await put('/v1/jobs', withTask(mockJob('waiter'), { Resources: { MemoryMB: 80 } }));
    expect(await allocsOf('waiter')).toEqual([]);
    reg.close();
    await call(s.socket, 'DELETE', '/v1/job/holder');
    await waitForAllocs(s.socket, '/v1/job/holder/allocations', (l) => l.find((a) => a.ID === holder.ID)?.ClientStatus === 'complete');
    // A blocked evaluation processed again would be queued behind the job's earlier writes: wait for that queue.
    await reg.serialize('waiter', () => undefined);
    expect(await allocsOf('waiter')).toEqual([]);
    expect((await get(`/v1/evaluation/${(await get(`/v1/evaluation/${waiting['EvalID']}`))['BlockedEval']}`))['Status']).toBe('blocked');
  });
});
