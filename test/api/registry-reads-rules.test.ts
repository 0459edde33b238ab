/**
 * What the registry answers of its allocations and evaluations (src/api/job-registry.ts: allocJson, the stub,
 * getEval, listEvals), rule by rule, through one served agent in process (mock tasks): an allocation carries
 * the job at its own version and the node it runs on; an evaluation is found by a prefix of its ID; the
 * evaluations are listed oldest first; a job's status while an allocation has not started (a mock task whose
 * start the suite holds); the summary's Children; a blocked evaluation processed again: completed, failed durably, or (when the store
 * refuses even its failure) said in the log.
 */
import { hostname } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, waitForAllocs, type Alloc } from './agent-process.ts';
import { heldMockDriver } from './held-mock-driver.ts';
import { cleanUp, mockJob, runJob, serve, type Served, SUITE_TIMEOUT, serveWithRoom, until } from './in-process-agent.ts';

type Json = Record<string, any>;

let s: Served;
beforeAll(async () => {
  s = await serveWithRoom();
});
afterAll(cleanUp);

const get = async <T = Json>(path: string) => (await call(s.socket, 'GET', path)).json<T>();

describe('an allocation', { timeout: SUITE_TIMEOUT }, () => {
  it('carries the job at its own version, not the newest', async () => {
    const old = await runJob(s, mockJob('layered', undefined, { Meta: { v: '1' } }));
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('layered', undefined, { Meta: { v: '2' } }));
    const [, next] = await waitForAllocs(s.socket, '/v1/job/layered/allocations', (l) => l.length === 2);
    expect((await get(`/v1/allocation/${old.ID}`))['Job']).toMatchObject({ Version: 0, Meta: { v: '1' } });
    expect((await get(`/v1/allocation/${next!.ID}`))['Job']).toMatchObject({ Version: 1, Meta: { v: '2' } });
  });

  it('names the node it runs on, in full and in the lists', async () => {
    const alloc = await runJob(s, mockJob('noded'));
    const node = { NodeID: String(s.store.get('meta', 'nodeId')), NodeName: hostname() };
    expect(await get(`/v1/allocation/${alloc.ID}`)).toMatchObject(node);
    expect((await get<Json[]>('/v1/job/noded/allocations'))[0]).toMatchObject(node);
  });

  it('of a purged job is still read, without its job', async () => {
    const alloc = await runJob(s, mockJob('orphaned'));
    await call(s.socket, 'DELETE', '/v1/job/orphaned?purge=true');
    const read = await get(`/v1/allocation/${alloc.ID}`);
    expect(read).toMatchObject({ ID: alloc.ID, JobID: 'orphaned', DesiredStatus: 'stop' });
    expect(read['Job'] ?? null).toBeNull();
  });

  it('whose job version is gone (purged, then registered afresh) is read without a job, not with the new one', async () => {
    await runJob(s, mockJob('reborn', undefined, { Meta: { v: '1' } }));
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('reborn', undefined, { Meta: { v: '2' } }));
    const atOne = (await get<Json[]>('/v1/job/reborn/allocations')).find((a) => a['JobVersion'] === 1)!;
    await call(s.socket, 'DELETE', '/v1/job/reborn?purge=true');
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('reborn', undefined, { Meta: { v: '3' } }));
    const read = await get(`/v1/allocation/${atOne['ID']}`);
    expect(read).toMatchObject({ ID: atOne['ID'], JobVersion: 1 });
    expect(read['Job'] ?? null).toBeNull();
  });
});

describe('evaluations', { timeout: SUITE_TIMEOUT }, () => {
  it('are found by a prefix of their ID, the exact ID first', async () => {
    const reg = (await call(s.socket, 'PUT', '/v1/jobs', mockJob('prefixed'))).json<Json>();
    const id = String(reg['EvalID']);
    expect((await get(`/v1/evaluation/${id.slice(0, 8)}`))['ID']).toBe(id);
    expect((await get(`/v1/evaluation/${id}`))['ID']).toBe(id);
    expect((await call(s.socket, 'GET', `/v1/evaluation/${id.slice(0, 8)}zz`)).status).toBe(404);
  });

  it('are listed oldest first', async () => {
    for (const id of ['ev-c', 'ev-a', 'ev-b']) await call(s.socket, 'PUT', '/v1/jobs', mockJob(id));
    const created = (await get<Json[]>('/v1/evaluations')).map((e) => e['CreateIndex'] as number);
    expect(created).toEqual([...created].sort((a, b) => a - b));
    expect(created.length).toBeGreaterThanOrEqual(3);
  });
});

describe('a job\'s status', { timeout: SUITE_TIMEOUT }, () => {
  // An agent of its own, whose tasks named `held` start only once the suite lets them.
  const held = heldMockDriver();
  let gated: Served;
  beforeAll(async () => {
    gated = await serve(undefined, undefined, { agent: { drivers: { mock: held.driver } } });
  });
  afterAll(() => held.release());
  const statusOf = async (id: string) => (await call(gated.socket, 'GET', `/v1/job/${id}`)).json<Json>()['Status'];
  const allocsOf = async (id: string) => (await call(gated.socket, 'GET', `/v1/job/${id}/allocations`)).json<Json[]>();
  const heldTask = { Name: 'held', Driver: 'mock', Config: { run_for: '1h' } };

  it('is dead once the job is stopped, even while its allocation has not started', async () => {
    const body = mockJob('held-stopped');
    body.Job.TaskGroups[0]!.Tasks = [heldTask];
    await call(gated.socket, 'PUT', '/v1/jobs', body);
    const [alloc] = await allocsOf('held-stopped');
    // Stopped once its task's start is under way (a kill before it ends the allocation at once).
    await until(async () => held.holding.has(String(alloc!['ID'])), Boolean, 'the task\'s start to be held');
    expect(await statusOf('held-stopped')).toBe('pending');
    await call(gated.socket, 'DELETE', '/v1/job/held-stopped');
    expect(await allocsOf('held-stopped')).toMatchObject([{ DesiredStatus: 'stop', ClientStatus: 'pending' }]);
    expect(await statusOf('held-stopped')).toBe('dead');
  });

  it('is pending while one allocation has finished and another has not started', async () => {
    const body = mockJob('half-done', { t: { run_for: '10ms' } }, { Type: 'batch' });
    body.Job.TaskGroups.push({ Name: 'later', Count: 1, Tasks: [heldTask] });
    await call(gated.socket, 'PUT', '/v1/jobs', body);
    await waitForAllocs(gated.socket, '/v1/job/half-done/allocations', (l) => l.some((a) => a.ClientStatus === 'complete'));
    expect((await allocsOf('half-done')).map((a) => a['ClientStatus']).sort()).toEqual(['complete', 'pending']);
    expect(await statusOf('half-done')).toBe('pending');
  });
});

describe('a job\'s summary', { timeout: SUITE_TIMEOUT }, () => {
  it('has Nomad\'s Children counts, all 0 for a job that is not a parent', async () => {
    await runJob(s, mockJob('childless'));
    const summary = await until(() => get('/v1/job/childless/summary'), (v) => v['Summary']?.['g']?.['Running'] === 1, 'the summary to count the running allocation');
    expect(summary['Children']).toEqual({ Pending: 0, Running: 0, Dead: 0 });
    expect((await get<Json[]>('/v1/jobs?prefix=childless'))[0]!['JobSummary']['Children']).toEqual({ Pending: 0, Running: 0, Dead: 0 });
  });
});

describe('a blocked evaluation processed again', { timeout: SUITE_TIMEOUT }, () => {
  // An agent of its own with 100 MB and a store that refuses, while `refusing` says so, the blocked evaluations'
  // plans (writes of allocations that are no job's registration or stop), or every write but a job's.
  let refusing: 'nothing' | 'plans' | 'all but jobs' = 'nothing';
  const faults = {
    beforeCommit: (tables: readonly string[]) => {
      if (tables.includes('jobs') || refusing === 'nothing') return;
      if (refusing === 'all but jobs' || tables.includes('allocs')) throw new Error('injected: disk refused');
    },
  };
  let own: Served;
  const log: string[] = [];
  beforeAll(async () => {
    own = await serve(undefined, undefined, { faults });
    own.api.registry.log = (line) => log.push(line);
    own.api.registry.capacity = { cpu: 0, cores: 64, memoryMB: 100 };
  });
  afterEach(() => {
    refusing = 'nothing';
  });
  const evalOf = async (id: string) => (await call(own.socket, 'GET', `/v1/evaluation/${id}`)).json<Json>();
  const sized = (id: string, memoryMB = 80) => {
    const body = mockJob(id);
    Object.assign(body.Job.TaskGroups[0]!.Tasks[0]!, { Resources: { MemoryMB: memoryMB } });
    return body;
  };
  /** Runs `holder` and registers `waiter`, which does not fit beside it: its blocked evaluation. */
  async function blockedBehind(holder: string, waiter: string): Promise<Json> {
    await runJob(own, sized(holder));
    const reg = (await call(own.socket, 'PUT', '/v1/jobs', sized(waiter))).json<Json>();
    const blocked = await evalOf(String((await evalOf(reg['EvalID']))['BlockedEval']));
    expect(blocked['Status']).toBe('blocked');
    // The clock past the blocked evaluation's own time, so a time not moved shows.
    await until(async () => Date.now() * 1e6, (now) => now > blocked['ModifyTime'], 'the clock to pass the blocked evaluation\'s time');
    return blocked;
  }

  it('completes once what frees lets it place, at that write\'s index and time', async () => {
    const blocked = await blockedBehind('holder-a', 'waiter-a');
    const before = Date.now() * 1e6;
    await call(own.socket, 'DELETE', '/v1/job/holder-a');
    const [placed] = await waitForAllocs(own.socket, '/v1/job/waiter-a/allocations', (l) => l.length === 1);
    const done = await evalOf(blocked['ID']);
    expect(done).toMatchObject({ Status: 'complete', ModifyIndex: (placed as Alloc & Json)['CreateIndex'] });
    expect(done['ModifyTime']).toBeGreaterThanOrEqual(before);
    // The holder's end frees the same room again: the evaluation, settled, is not processed a second time.
    await waitForAllocs(own.socket, '/v1/job/holder-a/allocations', (l) => l[0]?.ClientStatus === 'complete');
    await own.api.registry.serialize('waiter-a', () => undefined);
    expect(await evalOf(blocked['ID'])).toMatchObject({ Status: 'complete', ModifyIndex: done['ModifyIndex'] });
    await call(own.socket, 'DELETE', '/v1/job/waiter-a');
  });

  it('whose plan the store refuses Nomad\'s number of times fails durably: the failed one and the blocked one after it are in the store, timed now', async () => {
    const blocked = await blockedBehind('holder-b', 'waiter-b');
    refusing = 'plans';
    const before = Date.now() * 1e6;
    await call(own.socket, 'DELETE', '/v1/job/holder-b');
    const failed = await until(() => evalOf(blocked['ID']), (e) => e['Status'] === 'failed', 'the blocked evaluation to fail');
    expect(failed['ModifyTime']).toBeGreaterThanOrEqual(before);
    expect(own.store.get('evals', blocked['ID'])).toMatchObject({ Status: 'failed', ModifyIndex: failed['ModifyIndex'], BlockedEval: failed['BlockedEval'] });
    expect(own.store.get('evals', failed['BlockedEval'])).toMatchObject({ Status: 'blocked', PreviousEval: blocked['ID'], CreateIndex: failed['ModifyIndex'] });
    refusing = 'nothing';
    await call(own.socket, 'DELETE', '/v1/job/waiter-b');
  });

  it('is said in the log, by evaluation and job, when the store refuses its plan and then its failure', async () => {
    const blocked = String((await blockedBehind('holder-c', 'waiter-c'))['ID']);
    refusing = 'all but jobs';
    await call(own.socket, 'DELETE', '/v1/job/holder-c');
    const line = new RegExp(`^blocked evaluation ${blocked} of job "waiter-c" could not be processed again: cannot commit to .*injected: disk refused`);
    await until(async () => log, (l) => l.some((x) => line.test(x)), 'the log to say the blocked evaluation could not be processed again');
    refusing = 'nothing';
    expect((await evalOf(blocked))['Status']).toBe('blocked');
  });
});
