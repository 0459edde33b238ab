/**
 * The registry's job writes (src/api/job-registry.ts: register, deregister, stopAllocation, evaluateJob, plan)
 * and what it answers of them, rule by rule, through one served agent in process (mock tasks; each test its
 * own job IDs). Nomad's scheduler and job endpoint are the reference: an unchanged job is no new version, a
 * stop is a version of its own made once, an evaluation records each write, a plan writes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, waitForAllocs, type Alloc } from './agent-process.ts';
import { cleanUp, mockJob, runJob, type Served, SUITE_TIMEOUT, until, serveWithRoom } from './in-process-agent.ts';

type Json = Record<string, any>;

let s: Served;
beforeAll(async () => {
  s = await serveWithRoom();
});
afterAll(cleanUp);

const get = async <T = Json>(path: string) => (await call(s.socket, 'GET', path)).json<T>();
const put = async (path: string, body?: unknown) => {
  const res = await call(s.socket, 'PUT', path, body);
  expect(res.status, res.text).toBe(200);
  return res.json<Json>();
};
const evalsOf = (id: string) => get<Json[]>(`/v1/job/${id}/evaluations`);
const allocsOf = (id: string) => get<(Alloc & Json)[]>(`/v1/job/${id}/allocations`);
const withCount = (body: ReturnType<typeof mockJob>, count: number) => {
  (body.Job.TaskGroups[0] as Json)['Count'] = count;
  return body;
};

describe('registering', { timeout: SUITE_TIMEOUT }, () => {
  it('an unchanged job again is no new version: no evaluation, nothing placed, the indexes it has', async () => {
    const first = await put('/v1/jobs', mockJob('same'));
    const again = await put('/v1/jobs', mockJob('same'));
    expect(again).toEqual({ EvalID: '', EvalCreateIndex: first['Index'], JobModifyIndex: first['Index'], Warnings: '', Index: first['Index'], KnownLeader: true, LastContact: 0 });
    expect((await get('/v1/job/same/versions'))['Versions']).toHaveLength(1);
    expect(await evalsOf('same')).toHaveLength(1);
    expect(await allocsOf('same')).toHaveLength(1);
  });

  it('a changed job is the next version, submitted now (in nanoseconds), at the write\'s index, its allocations at that version', async () => {
    const before = Date.now();
    const v0 = await put('/v1/jobs', mockJob('versioned'));
    const v1 = await put('/v1/jobs', mockJob('versioned', { t: { run_for: '2h' } }));
    const after = Date.now();
    expect(v1['Index']).toBeGreaterThan(v0['Index']);
    expect([v1['EvalCreateIndex'], v1['JobModifyIndex']]).toEqual([v1['Index'], v1['Index']]);
    const job = await get('/v1/job/versioned');
    expect(job).toMatchObject({ Version: 1, CreateIndex: v0['Index'], ModifyIndex: v1['Index'], JobModifyIndex: v1['Index'], Stop: false, Stable: false, StatusDescription: '' });
    expect(job['SubmitTime']).toBeGreaterThanOrEqual(before * 1e6);
    expect(job['SubmitTime']).toBeLessThanOrEqual(after * 1e6);
    const allocs = await waitForAllocs(s.socket, '/v1/job/versioned/allocations', (l) => l.some((a) => a.JobVersion === 1 && a.DesiredStatus === 'run'));
    expect(allocs.filter((a) => a.DesiredStatus === 'run').map((a) => a.JobVersion)).toEqual([1]);
    const [evaluation] = (await evalsOf('versioned')).filter((e) => e['ID'] === v1['EvalID']);
    expect(evaluation).toMatchObject({ TriggeredBy: 'job-register', JobModifyIndex: v1['Index'], CreateIndex: v1['Index'], ModifyIndex: v1['Index'], Status: 'complete', Type: 'service', Priority: 50, Namespace: 'default' });
  });

  it('keeps a job in the namespace its body names, and its evaluation and allocations with it', async () => {
    const reg = await put('/v1/jobs', mockJob('spaced', undefined, { Namespace: 'team', Priority: 70 }));
    expect(await get('/v1/job/spaced')).toMatchObject({ Namespace: 'team', Priority: 70, Name: 'spaced' });
    expect(await get(`/v1/evaluation/${reg['EvalID']}`)).toMatchObject({ Namespace: 'team', Priority: 70 });
    const [alloc] = await allocsOf('spaced');
    expect(alloc).toMatchObject({ Namespace: 'team', EvalID: reg['EvalID'] });
  });

  it('a stopped job registered again, unchanged, is a new version that runs again', async () => {
    const first = await runJob(s, mockJob('revived'));
    await call(s.socket, 'DELETE', '/v1/job/revived');
    const again = await put('/v1/jobs', mockJob('revived'));
    expect(again['EvalID']).not.toBe('');
    expect(await get('/v1/job/revived')).toMatchObject({ Version: 2, Stop: false, JobModifyIndex: again['Index'] });
    const allocs = await waitForAllocs(s.socket, '/v1/job/revived/allocations', (l) => l.some((a) => a.ID !== first.ID && a.ClientStatus === 'running'));
    expect(allocs.find((a) => a.ID === first.ID)).toMatchObject({ DesiredStatus: 'stop' });
  });

  it('places each new instance of a count raised, and stops the instances a count lowered does not want, highest first', async () => {
    await put('/v1/jobs', withCount(mockJob('counted'), 3));
    const three = await waitForAllocs(s.socket, '/v1/job/counted/allocations', (l) => l.length === 3);
    const down = await put('/v1/jobs', withCount(mockJob('counted'), 1));
    const after = await allocsOf('counted');
    // Instances 1 and 2 go (Nomad's name index), instance 0 stays: the first placed.
    expect(after.filter((a) => a['DesiredStatus'] === 'run').map((a) => a.ID)).toEqual([three.find((a) => (a as Json)['Name'].endsWith('[0]'))!.ID]);
    for (const a of after.filter((x) => x['DesiredStatus'] === 'stop')) expect(a).toMatchObject({ DesiredDescription: 'alloc not needed due to job update', ModifyIndex: expect.any(Number) });
    expect(after.filter((a) => a['DesiredStatus'] === 'stop')).toHaveLength(2);
    expect((await get(`/v1/allocation/${after[1]!.ID}`))['AllocModifyIndex']).toBe(down['Index']);
  });
});

describe('stopping a job', { timeout: SUITE_TIMEOUT }, () => {
  it('makes one stopped version; a second stop adds none, yet records its own deregistration evaluation', async () => {
    await runJob(s, mockJob('halted'));
    const first = (await call(s.socket, 'DELETE', '/v1/job/halted')).json<Json>();
    expect(first).toMatchObject({ EvalCreateIndex: first['Index'], JobModifyIndex: first['Index'], Warnings: '' });
    const second = (await call(s.socket, 'DELETE', '/v1/job/halted')).json<Json>();
    expect(second['Index']).toBeGreaterThan(first['Index']);
    expect(second['EvalID']).not.toBe(first['EvalID']);
    const versions = (await get('/v1/job/halted/versions'))['Versions'] as Json[];
    expect(versions.map((v) => [v['Version'], v['Stop']])).toEqual([[1, true], [0, false]]);
    // The old version reads at its own index, the current one at the job's.
    expect(versions[1]!['ModifyIndex']).toBe(versions[1]!['JobModifyIndex']);
    expect(versions[0]!['ModifyIndex']).toBe(second['Index']);
    const evals = await evalsOf('halted');
    expect(evals.filter((e) => e['TriggeredBy'] === 'job-deregister').map((e) => e['ID']).sort()).toEqual([first['EvalID'], second['EvalID']].sort());
    const [alloc] = await allocsOf('halted');
    expect(alloc).toMatchObject({ DesiredStatus: 'stop', DesiredDescription: 'alloc not needed due to job update' });
  });
});

describe('stopping an allocation', { timeout: SUITE_TIMEOUT }, () => {
  it('places its replacement with the stop\'s evaluation, linked both ways; a stopped one stopped again places nothing', async () => {
    const alloc = await runJob(s, mockJob('replaced'));
    const stop = await put(`/v1/allocation/${alloc.ID}/stop`);
    expect(await get(`/v1/evaluation/${stop['EvalID']}`)).toMatchObject({ TriggeredBy: 'alloc-stop', JobID: 'replaced', CreateIndex: stop['Index'] });
    const allocs = await allocsOf('replaced');
    const next = allocs.find((a) => a.ID !== alloc.ID)!;
    expect(next).toMatchObject({ PreviousAllocation: alloc.ID, EvalID: stop['EvalID'], DesiredStatus: 'run', CreateIndex: stop['Index'] });
    expect(await get(`/v1/allocation/${alloc.ID}`)).toMatchObject({ DesiredStatus: 'stop', DesiredDescription: 'alloc was stopped by the user', NextAllocation: next.ID });
    const again = await put(`/v1/allocation/${alloc.ID}/stop`);
    expect(again['EvalID']).toBe('');
    expect(again['Index']).toBeGreaterThan(stop['Index']);
    expect(await allocsOf('replaced')).toHaveLength(2);
  });

  it('places no replacement for an allocation of a job that no longer wants it', async () => {
    const alloc = await runJob(s, mockJob('unwanted'));
    // Stopped behind the job's back, as a purge in flight would leave it: the job is stopped first.
    const job = s.api.registry.getJob('unwanted')!;
    job.stop = true;
    try {
      const stop = await put(`/v1/allocation/${alloc.ID}/stop`);
      expect(stop['EvalID']).not.toBe('');
      expect((await allocsOf('unwanted')).map((a) => a.ID)).toEqual([alloc.ID]);
    } finally {
      job.stop = false;
    }
  });
});

describe('evaluating a job', { timeout: SUITE_TIMEOUT }, () => {
  it('answers the evaluation at a new index with the job\'s own JobModifyIndex, and places what now fits', async () => {
    const reg = s.api.registry;
    const room = reg.capacity;
    reg.capacity = { cpu: 0, cores: 64, memoryMB: 1 };
    try {
      const body = mockJob('waits');
      (body.Job.TaskGroups[0]!.Tasks[0] as Json)['Resources'] = { MemoryMB: 32 };
      const registered = await put('/v1/jobs', body);
      expect(await allocsOf('waits')).toHaveLength(0);
      // An allocation of an earlier test that finishes from here on frees room, and blocked evaluations try again
      // (Nomad's unblock): 'waits' would then be placed by its blocked evaluation, not by the one asked for below.
      await until(() => get<(Alloc & Json)[]>('/v1/allocations'), (all) => all.every((a) => a.DesiredStatus !== 'stop' || ['complete', 'failed', 'lost'].includes(a.ClientStatus)), "the earlier tests' stopped allocations to finish");
      reg.capacity = room;
      const res = await call(s.socket, 'POST', '/v1/job/waits/evaluate', {});
      expect(res.status, res.text).toBe(200);
      const answer = res.json<Json>();
      expect(answer).toMatchObject({ EvalCreateIndex: answer['Index'], JobModifyIndex: registered['JobModifyIndex'], Warnings: '' });
      expect(answer['Index']).toBeGreaterThan(registered['Index']);
      const [alloc] = await allocsOf('waits');
      expect(alloc).toMatchObject({ EvalID: answer['EvalID'], CreateIndex: answer['Index'] });
    } finally {
      reg.capacity = room;
    }
  });

  it('stops what still runs of a stopped job, and places nothing for it', async () => {
    const alloc = await runJob(s, mockJob('stale'));
    const job = s.api.registry.getJob('stale')!;
    // A stopped job whose allocation still runs: what a crash between the two writes would leave.
    job.stop = true;
    const res = await call(s.socket, 'POST', '/v1/job/stale/evaluate', {});
    expect(res.status, res.text).toBe(200);
    const allocs = await allocsOf('stale');
    expect(allocs.map((a) => [a.ID, a.DesiredStatus, a['DesiredDescription']])).toEqual([[alloc.ID, 'stop', 'alloc not needed due to job update']]);
  });

  it('with ForceReschedule leaves a completed allocation and one that runs, and reschedules only the failed', async () => {
    const body = mockJob('mixed', { t: { run_for: '10ms' } }, { Type: 'batch' });
    (body.Job.TaskGroups[0] as Json)['RestartPolicy'] = { Attempts: 0, Mode: 'fail' };
    await put('/v1/jobs', body);
    const [done] = await waitForAllocs(s.socket, '/v1/job/mixed/allocations', (l) => l[0]?.ClientStatus === 'complete');
    const res = await call(s.socket, 'POST', '/v1/job/mixed/evaluate', { EvalOptions: { ForceReschedule: true } });
    expect(res.status, res.text).toBe(200);
    expect((await allocsOf('mixed')).map((a) => [a.ID, a.DesiredStatus])).toEqual([[done!.ID, 'run']]);
  });

  it('with ForceReschedule replaces a failed allocation once: the one it stopped is not replaced again', async () => {
    const body = mockJob('refails', { t: { run_for: '10ms', exit_code: 1 } }, { Type: 'batch' });
    (body.Job.TaskGroups[0] as Json)['RestartPolicy'] = { Attempts: 0, Mode: 'fail' };
    (body.Job.TaskGroups[0] as Json)['ReschedulePolicy'] = { Attempts: 0, Unlimited: false };
    await put('/v1/jobs', body);
    const [failed] = await waitForAllocs(s.socket, '/v1/job/refails/allocations', (l) => l[0]?.ClientStatus === 'failed');
    await put('/v1/job/refails/evaluate', { EvalOptions: { ForceReschedule: true } });
    const twice = await waitForAllocs(s.socket, '/v1/job/refails/allocations', (l) => l.length === 2 && l.every((a) => a.ClientStatus === 'failed'));
    expect(twice.find((a) => a.ID === failed!.ID)).toMatchObject({ DesiredStatus: 'stop', DesiredDescription: 'alloc was rescheduled because it failed' });
    await put('/v1/job/refails/evaluate', { EvalOptions: { ForceReschedule: true } });
    const thrice = await allocsOf('refails');
    // The replacement failed too and is replaced; the first, stopped, is not.
    expect(thrice).toHaveLength(3);
    expect(thrice.filter((a) => a.PreviousAllocation === failed!.ID)).toHaveLength(1);
  });
});

describe('planning', { timeout: SUITE_TIMEOUT }, () => {
  const plan = async (body: ReturnType<typeof mockJob>) => {
    const res = await call(s.socket, 'POST', `/v1/job/${body.Job.ID}/plan`, body);
    expect(res.status, res.text).toBe(200);
    return res.json<Json>();
  };
  const desired = (answer: Json) => answer['Annotations']['DesiredTGUpdates']['g'];

  it('counts the instances a lowered count stops and the ones it keeps, at the job\'s JobModifyIndex, writing nothing', async () => {
    const reg = await put('/v1/jobs', withCount(mockJob('shrinks'), 3));
    await waitForAllocs(s.socket, '/v1/job/shrinks/allocations', (l) => l.length === 3);
    const reg0 = s.api.registry;
    const indexes = () => [reg0.jobsIndex, reg0.evalsIndex, reg0.getJob('shrinks')!.versions.length];
    const before = indexes();
    const answer = await plan(withCount(mockJob('shrinks'), 1));
    expect(desired(answer)).toMatchObject({ Place: 0, Stop: 2, Ignore: 1, InPlaceUpdate: 0, DestructiveUpdate: 0 });
    expect(answer['JobModifyIndex']).toBe(reg['JobModifyIndex']);
    expect(indexes()).toEqual(before);
    expect((await allocsOf('shrinks')).filter((a) => a.DesiredStatus === 'run')).toHaveLength(3);
    expect(await evalsOf('shrinks')).toHaveLength(1);
  });

  it('plans a new job at JobModifyIndex 0, each instance placed', async () => {
    const answer = await plan(withCount(mockJob('unborn'), 2));
    expect(answer['JobModifyIndex']).toBe(0);
    expect(desired(answer)).toMatchObject({ Place: 2, Stop: 0, Ignore: 0 });
    expect((await call(s.socket, 'GET', '/v1/job/unborn')).status).toBe(404);
  });

  it('plans a stopped job submitted again as placing it anew, its stopped allocations left out', async () => {
    await runJob(s, mockJob('dormant'));
    await call(s.socket, 'DELETE', '/v1/job/dormant');
    const answer = await plan(mockJob('dormant'));
    expect(desired(answer)).toMatchObject({ Place: 1, Stop: 0, Ignore: 0, DestructiveUpdate: 0 });
  });
});

describe('adopting an allocation the store does not know', { timeout: SUITE_TIMEOUT }, () => {
  // An embedding app's allocation, found by its runner record: named the job loader's way or not.
  const spec = (id: string, job = 'emb', group = 'g', extra: Json = {}) => ({ id, job, group, type: 'service', tasks: [{ name: 't', driver: 'mock', config: {} }], ...extra }) as never;
  it.each([
    ['emb-g-2', 2],
    ['emb-g-07', 7],
    ['emb-g-', 0],
    ['emb-g-x', 0],
    ['emb-g-1a', 0],
    ['x-emb-g-3', 0],
    ['emb-gg-3', 0],
  ])('takes %s as instance %i of its group', (id, instance) => {
    s.api.registry.adopt([{ spec: spec(id), state: { clientStatus: 'complete', taskStates: {} }, updatedAt: 5 }]);
    expect(s.api.registry.findAlloc(id)!.index).toBe(instance);
  });

  it('takes the instance its spec gives over the one its name says', () => {
    s.api.registry.adopt([{ spec: spec('emb-g-5', 'emb', 'g', { index: 3 }), state: { clientStatus: 'complete', taskStates: {} }, updatedAt: 5 }]);
    expect(s.api.registry.findAlloc('emb-g-5')!.index).toBe(3);
  });

  it('keeps its job, group, namespace, desired status and times, at a new index, to be recorded at the next start', () => {
    const reg = s.api.registry;
    const index = s.api.registry.allocsIndex;
    reg.adopt([
      { spec: spec('emb-a-0', 'emb2', 'a'), state: { clientStatus: 'running', taskStates: {} }, createdAt: 3, updatedAt: 9 },
      { spec: spec('emb-b-0', 'emb2', 'b', { namespace: 'team', desiredStatus: 'stop' }), state: { clientStatus: 'complete', taskStates: {} }, updatedAt: 11 },
    ]);
    const a = reg.findAlloc('emb-a-0')!;
    const b = reg.findAlloc('emb-b-0')!;
    expect(a).toMatchObject({ jobId: 'emb2', group: 'a', namespace: 'default', desired: 'run', desiredDescription: '', jobVersion: 0, createTime: 3, modifyTime: 9, unrecorded: true, lastState: { clientStatus: 'running' } });
    expect(b).toMatchObject({ namespace: 'team', desired: 'stop', createTime: 11, modifyTime: 11, lastState: { clientStatus: 'complete' } });
    expect(a.createIndex).toBeGreaterThan(index);
    expect(b.createIndex).toBeGreaterThan(a.createIndex);
    expect([a.modifyIndex, a.allocModifyIndex]).toEqual([a.createIndex, a.createIndex]);
    expect(reg.allocsIndex).toBe(b.createIndex);
  });

  it('stops one of a job the registry does not have at a user\'s stop: no evaluation, nothing placed', async () => {
    s.api.registry.adopt([{ spec: spec('emb-s-0', 'emb3', 's'), state: { clientStatus: 'running', taskStates: {} }, updatedAt: 5 }]);
    const stop = await put('/v1/allocation/emb-s-0/stop');
    expect(stop['EvalID']).toBe('');
    expect(await get('/v1/allocation/emb-s-0')).toMatchObject({ DesiredStatus: 'stop', DesiredDescription: 'alloc was stopped by the user' });
    expect(s.api.registry.allocsOfJob('emb3').map((a) => a.id)).toEqual(['emb-s-0']);
  });
});

describe('one job\'s writes', { timeout: SUITE_TIMEOUT }, () => {
  it('run one at a time in arrival order, a failed one not stopping the next', async () => {
    const reg = s.api.registry;
    const seen: string[] = [];
    let release!: () => void;
    const first = reg.serialize('queued', () => new Promise<string>((r) => (release = () => (seen.push('first'), r('one')))));
    const second = reg.serialize('queued', () => {
      seen.push('second');
      throw new Error('refused');
    });
    const third = reg.serialize('queued', () => (seen.push('third'), 'three'));
    const other = reg.serialize('another', () => (seen.push('other'), 'other'));
    await other;
    expect(seen).toEqual(['other']);
    release();
    await expect(first).resolves.toBe('one');
    await expect(second).rejects.toThrow('refused');
    await expect(third).resolves.toBe('three');
    expect(seen).toEqual(['other', 'first', 'second', 'third']);
  });

  it('hold nothing once done, and a write queued after the first one ends still waits for the one before it', async () => {
    const reg = s.api.registry;
    const queues = (reg as unknown as { queues: Map<string, unknown> }).queues;
    const turn = () => new Promise<void>((r) => setImmediate(r));
    const seen: string[] = [];
    const releases: (() => void)[] = [];
    const held = (name: string) => () => new Promise<void>((r) => releases.push(r)).then(() => void seen.push(name));
    const first = reg.serialize('drained', held('first'));
    const second = reg.serialize('drained', held('second'));
    await turn();
    releases[0]!();
    await first;
    await turn();
    const third = reg.serialize('drained', () => void seen.push('third'));
    await turn();
    expect(seen).toEqual(['first']);
    releases[1]!();
    await Promise.all([second, third]);
    expect(seen).toEqual(['first', 'second', 'third']);
    await turn();
    expect(queues.has('drained')).toBe(false);
  });
});

describe('listing', { timeout: SUITE_TIMEOUT }, () => {
  it('lists jobs by ID, whatever order they were registered in', async () => {
    for (const id of ['order-b', 'order-c', 'order-a']) await put('/v1/jobs', mockJob(id));
    const ids = (await get<Json[]>('/v1/jobs?prefix=order-')).map((j) => j['ID']);
    expect(ids).toEqual(['order-a', 'order-b', 'order-c']);
  });

  it('lists a job\'s allocations and all allocations oldest first, as they were created', async () => {
    await put('/v1/jobs', withCount(mockJob('aged'), 3));
    const allocs = await waitForAllocs(s.socket, '/v1/job/aged/allocations', (l) => l.length === 3);
    const [first] = allocs;
    await put(`/v1/allocation/${first!.ID}/stop`);
    const after = await allocsOf('aged');
    const created = after.map((a) => a['CreateIndex'] as number);
    expect(created).toEqual([...created].sort((x, y) => x - y));
    expect(after.at(-1)).toMatchObject({ PreviousAllocation: first!.ID });
    const all = (await get<Json[]>('/v1/allocations')).filter((a) => a['JobID'] === 'aged').map((a) => a['ID']);
    expect(all).toEqual(after.map((a) => a.ID));
  });

  it('answers a job stub with Nomad\'s list fields', async () => {
    await put('/v1/jobs', mockJob('stubbed', undefined, { Datacenters: ['dc1'] }));
    const [stub] = await get<Json[]>('/v1/jobs?prefix=stubbed');
    const job = await get('/v1/job/stubbed');
    expect(stub).toMatchObject({
      ID: 'stubbed', ParentID: '', Name: 'stubbed', Namespace: 'default', Datacenters: ['dc1'], Type: 'service', Priority: 50,
      Periodic: false, ParameterizedJob: false, Stop: false, StatusDescription: '', CreateIndex: job['CreateIndex'],
      ModifyIndex: job['ModifyIndex'], JobModifyIndex: job['JobModifyIndex'], SubmitTime: job['SubmitTime'], Version: 0,
    });
    expect(stub!['JobSummary']).toMatchObject({ JobID: 'stubbed', Namespace: 'default' });
    await until(async () => (await get<Json[]>('/v1/jobs?prefix=stubbed'))[0]!['Status'], (v) => v === 'running', 'the stub to show the job running');
  });
});
