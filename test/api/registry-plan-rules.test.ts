/**
 * The registry's plan, evaluation and job reads, rule by rule where the first measured run found them loose
 * (src/api/job-registry.ts: plan, evaluateJob, findAlloc, jobJson), through one served agent in process (mock
 * tasks; each test its own job IDs): a plan's counts per kind of change, exactly; what an evaluation of a stopped
 * or a failed job does and says; an allocation by a prefix of its ID; a job's own name and type.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EventBatch } from '../../src/api/event-broker.ts';
import { recordPublishedBatches } from './published-batches.ts';
import { call, waitForAllocs } from './agent-process.ts';
import { cleanUp, mockJob, runJob, type Served, SUITE_TIMEOUT, serveWithRoom } from './in-process-agent.ts';

type Json = Record<string, any>;

let s: Served;
const batches: EventBatch[] = [];
beforeAll(async () => {
  s = await serveWithRoom();
  recordPublishedBatches(batches);
});
afterAll(async () => {
  vi.restoreAllMocks();
  await cleanUp();
});

const put = async (path: string, body?: unknown, method = 'PUT') => {
  const res = await call(s.socket, method, path, body);
  expect(res.status, res.text).toBe(200);
  return res.json<Json>();
};
const get = async (path: string) => (await call(s.socket, 'GET', path)).json<any>();
const counts = (over: Json) => ({ Ignore: 0, Place: 0, Migrate: 0, Stop: 0, InPlaceUpdate: 0, DestructiveUpdate: 0, Canary: 0, Preemptions: 0, ...over });
const planOf = async (body: ReturnType<typeof mockJob>) => (await put(`/v1/job/${body.Job.ID}/plan`, body, 'POST'))['Annotations']['DesiredTGUpdates'];
const twoGroups = (id: string, extra: Json = {}) => {
  const body = mockJob(id, undefined, extra);
  (body.Job.TaskGroups as Json[]).push({ Name: 'h', Count: 1, Tasks: [{ Name: 't', Driver: 'mock', Config: { run_for: '1h' } }] });
  return body;
};

describe('a plan counts, exactly', { timeout: SUITE_TIMEOUT }, () => {
  it('every live allocation of an unchanged job as ignored', async () => {
    await put('/v1/jobs', twoGroups('same-plan'));
    await waitForAllocs(s.socket, '/v1/job/same-plan/allocations', (l) => l.length === 2);
    expect(await planOf(twoGroups('same-plan'))).toEqual({ g: counts({ Ignore: 1 }), h: counts({ Ignore: 1 }) });
  });

  it('an in-place change as one in-place update, and a destructive one as one destructive update, nothing placed or stopped', async () => {
    await runJob(s, mockJob('changing', undefined, { Meta: { v: '1' } }));
    const inPlace = mockJob('changing', undefined, { Meta: { v: '1' } });
    (inPlace.Job.TaskGroups[0]!.Tasks[0] as Json)['KillTimeout'] = 9e9;
    expect(await planOf(inPlace)).toEqual({ g: counts({ InPlaceUpdate: 1 }) });
    expect(await planOf(mockJob('changing', undefined, { Meta: { v: '2' } }))).toEqual({ g: counts({ DestructiveUpdate: 1 }) });
  });

  it('a count raised over a destructive change as one destructive update and one placement', async () => {
    await runJob(s, mockJob('growing', undefined, { Meta: { v: '1' } }));
    const body = mockJob('growing', undefined, { Meta: { v: '2' } });
    (body.Job.TaskGroups[0] as Json)['Count'] = 2;
    expect(await planOf(body)).toEqual({ g: counts({ DestructiveUpdate: 1, Place: 1 }) });
  });
});

describe('an evaluation', { timeout: SUITE_TIMEOUT }, () => {
  it('is triggered as a registration, and answers 404 for an unknown job', async () => {
    await runJob(s, mockJob('evaluated'));
    const answer = await put('/v1/job/evaluated/evaluate', {});
    expect((await get(`/v1/evaluation/${answer['EvalID']}`))['TriggeredBy']).toBe('job-register');
    const missing = await call(s.socket, 'POST', '/v1/job/never/evaluate', {});
    expect([missing.status, missing.text]).toEqual([404, 'job not found']);
  });

  it('of a stopped job leaves its stopped allocations as they are', async () => {
    const alloc = await runJob(s, mockJob('still'));
    const stop = (await call(s.socket, 'DELETE', '/v1/job/still')).json<Json>();
    const answer = await put('/v1/job/still/evaluate', {});
    expect((await get(`/v1/allocation/${alloc.ID}`))['AllocModifyIndex']).toBe(stop['Index']);
    expect(batches.find((b) => b.Index === answer['Index'])!.Events.filter((e) => e.Topic === 'Allocation')).toEqual([]);
  });

  it('of a stopped job whose allocation still runs stops it as a plan result', async () => {
    const alloc = await runJob(s, mockJob('lingering'));
    s.api.registry.getJob('lingering')!.stop = true;
    const answer = await put('/v1/job/lingering/evaluate', {});
    expect(batches.find((b) => b.Index === answer['Index'])!.Events.filter((e) => e.Topic === 'Allocation').map((e) => [e.Type, e.Key])).toEqual([['PlanResult', alloc.ID]]);
  });

  it('without ForceReschedule leaves a failed allocation; with it, replaces it from its own group as a plan result', async () => {
    const body = twoGroups('failing', { Type: 'batch' });
    for (const g of body.Job.TaskGroups as Json[]) {
      g['RestartPolicy'] = { Attempts: 0, Mode: 'fail' };
      g['ReschedulePolicy'] = { Attempts: 0, Unlimited: false };
    }
    (body.Job.TaskGroups[1]!.Tasks[0] as Json)['Config'] = { run_for: '10ms', exit_code: 1 };
    await put('/v1/jobs', body);
    const [, failed] = await waitForAllocs(s.socket, '/v1/job/failing/allocations', (l) => l.length === 2 && l.some((a) => a.ClientStatus === 'failed'));
    const failedOne = (await get('/v1/job/failing/allocations') as Json[]).find((a) => a['ClientStatus'] === 'failed')!;
    expect(failed).toBeDefined();
    await put('/v1/job/failing/evaluate', {});
    expect(await get('/v1/job/failing/allocations')).toHaveLength(2);
    const forced = await put('/v1/job/failing/evaluate', { EvalOptions: { ForceReschedule: true } });
    const after = (await get('/v1/job/failing/allocations')) as Json[];
    const next = after.find((a) => a['PreviousAllocation'] === failedOne['ID'])!;
    expect(next['TaskGroup']).toBe(failedOne['TaskGroup']);
    expect(batches.find((b) => b.Index === forced['Index'])!.Events.filter((e) => e.Topic === 'Allocation').map((e) => [e.Type, e.Key])).toEqual([['PlanResult', failedOne['ID']], ['PlanResult', next['ID']]]);
  });
});

describe('an allocation of a job with two groups', { timeout: SUITE_TIMEOUT }, () => {
  it('stopped by the user is replaced from its own group', async () => {
    await put('/v1/jobs', twoGroups('paired'));
    const allocs = await waitForAllocs(s.socket, '/v1/job/paired/allocations', (l) => l.length === 2);
    const second = (allocs as Json[]).find((a) => a['TaskGroup'] === 'h')!;
    await put(`/v1/allocation/${second['ID']}/stop`);
    const next = ((await get('/v1/job/paired/allocations')) as Json[]).find((a) => a['PreviousAllocation'] === second['ID'])!;
    expect(next['TaskGroup']).toBe('h');
  });
});

describe('reads', { timeout: SUITE_TIMEOUT }, () => {
  it('find an allocation by a unique prefix of its ID, and none by an ambiguous or a foreign one', async () => {
    const alloc = await runJob(s, mockJob('prefixed-alloc'));
    expect((await get(`/v1/allocation/${alloc.ID.slice(0, 8)}`))['ID']).toBe(alloc.ID);
    expect((await call(s.socket, 'GET', `/v1/allocation/${alloc.ID.slice(4, 12)}`)).status).toBe(404);
    // Seventeen allocations or more: two of them share a first hex digit, an ambiguous prefix.
    const many = mockJob('many-allocs');
    (many.Job.TaskGroups[0] as Json)['Count'] = 17;
    expect((await call(s.socket, 'PUT', '/v1/jobs', many)).status).toBe(200);
    const ids = ((await get('/v1/allocations')) as Json[]).map((a) => String(a['ID']));
    const shared = ids.map((i) => i[0]).find((c, i, all) => all.indexOf(c) !== i);
    expect(shared).toBeDefined();
    expect((await call(s.socket, 'GET', `/v1/allocation/${shared}`)).status).toBe(404);
  });

  it('answer a stop of an unknown job with 404, writing nothing', async () => {
    const before = s.api.registry.jobsIndex;
    const res = await call(s.socket, 'DELETE', '/v1/job/never-registered');
    expect([res.status, res.text]).toEqual([404, 'job not found']);
    expect(s.api.registry.jobsIndex).toBe(before);
  });

  it('show a job\'s own name and type', async () => {
    await put('/v1/jobs', mockJob('named', { t: { run_for: '10ms' } }, { Name: 'Pretty name', Type: 'batch' }));
    expect(await get('/v1/job/named')).toMatchObject({ ID: 'named', Name: 'Pretty name', Type: 'batch' });
  });

  it('show the current version of a job stopped after three versions as stopped, at the job\'s index', async () => {
    for (const v of ['1', '2']) await put('/v1/jobs', mockJob('thrice', undefined, { Meta: { v } }));
    const stop = (await call(s.socket, 'DELETE', '/v1/job/thrice')).json<Json>();
    expect(await get('/v1/job/thrice')).toMatchObject({ Version: 2, Stop: true, ModifyIndex: stop['Index'] });
  });
});
