/**
 * What the deployment reads and the evaluation's fields from src/api/routes/deployments.ts show, rule by rule,
 * through one served agent in process (mock tasks; each test its own job IDs): a deployment's allocations are
 * only those of its groups with an update block; a system job, though it may have an update block, has none (as
 * Nomad's, only service jobs have deployments); an evaluation that could not place everything names the blocked
 * evaluation it made, which names it back, with the groups that did not fit and what stays queued; a job's
 * deployments are its own, and a read blocking on them ends with none (the newest: null) once the job is purged;
 * a blocking read of an unknown deployment is a 404 at once (an unknown job's: route-unknown-job-rules); each version's deployment counts its own
 * allocations and is named by its own registration's evaluation, and none by a purged job's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, waitForAllocs } from './agent-process.ts';
import { cleanUp, mockJob, type Served, SUITE_TIMEOUT, serveWithRoom } from './in-process-agent.ts';

type Json = Record<string, any>;

let s: Served;
beforeAll(async () => {
  s = await serveWithRoom();
});
afterAll(cleanUp);

const UPDATE = { MinHealthyTime: 200e9, HealthyDeadline: 300e9 };
const register = async (body: unknown) => {
  const res = await call(s.socket, 'PUT', '/v1/jobs', body);
  expect(res.status, res.text).toBe(200);
  return res.json<Json>();
};
const get = async <T = Json>(path: string) => {
  const res = await call(s.socket, 'GET', path);
  expect(res.status, `${path}: ${res.text}`).toBe(200);
  return res.json<T>();
};

describe('a deployment\'s reads', { timeout: SUITE_TIMEOUT }, () => {
  it('list as its allocations only those of its groups with an update block', async () => {
    const body = mockJob('mixed');
    Object.assign(body.Job.TaskGroups[0]!, { Update: UPDATE });
    (body.Job.TaskGroups as Json[]).push({ Name: 'plain', Count: 2, Tasks: [{ Name: 't', Driver: 'mock', Config: { run_for: '1h' } }] });
    await register(body);
    const all = await waitForAllocs(s.socket, '/v1/job/mixed/allocations', (l) => l.length === 3);
    const d = await get('/v1/job/mixed/deployment');
    const listed = await get<Json[]>(`/v1/deployment/allocations/${d['ID']}`);
    expect(listed.map((a) => a['ID'])).toEqual(all.filter((a) => (a as Json)['TaskGroup'] === 'g').map((a) => a.ID));
  });

  it('find none for a system job with an update block, whose evaluation names none', async () => {
    const body = mockJob('everywhere', undefined, { Type: 'system' });
    Object.assign(body.Job.TaskGroups[0]!, { Update: UPDATE });
    const reg = await register(body);
    const res = await call(s.socket, 'GET', '/v1/job/everywhere/deployment');
    expect([res.status, res.text]).toEqual([200, 'null']);
    expect(await get('/v1/job/everywhere/deployments')).toEqual([]);
    expect((await get(`/v1/evaluation/${reg['EvalID']}`))['DeploymentID']).toBe('');
  });
});

describe('a deployment of each version', { timeout: SUITE_TIMEOUT }, () => {
  it('counts only its version\'s allocations, is named by its registration\'s evaluation, and answers as JSON', async () => {
    const v0 = mockJob('versions', undefined, { Meta: { v: '0' } });
    Object.assign(v0.Job.TaskGroups[0]!, { Update: UPDATE });
    await register(v0);
    await waitForAllocs(s.socket, '/v1/job/versions/allocations', (l) => l.length === 1);
    const v1 = mockJob('versions', undefined, { Meta: { v: '1' } });
    Object.assign(v1.Job.TaskGroups[0]!, { Update: UPDATE });
    const reg = await register(v1);
    await waitForAllocs(s.socket, '/v1/job/versions/allocations', (l) => l.length === 2);
    const [newest, oldest] = await get<Json[]>('/v1/job/versions/deployments');
    expect([newest!['JobVersion'], newest!['TaskGroups']['g']['PlacedAllocs'], oldest!['JobVersion'], oldest!['TaskGroups']['g']['PlacedAllocs']]).toEqual([1, 1, 0, 1]);
    // The second registration's evaluation names the deployment its version started, not the first's.
    expect((await get(`/v1/evaluation/${reg['EvalID']}`))['DeploymentID']).toBe(newest!['ID']);
    const res = await call(s.socket, 'GET', '/v1/job/versions/deployment');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    // Its allocations are read at the allocations' index.
    const allocs = await call(s.socket, 'GET', `/v1/deployment/allocations/${newest!['ID']}`);
    const after = Number((await call(s.socket, 'GET', '/v1/allocations')).headers['x-nomad-index']);
    expect(Number(allocs.headers['x-nomad-index'])).toSatisfy((i: number) => Number.isInteger(i) && i >= reg['Index'] && i <= after);
  });

  it('replaced before it was healthy stays cancelled, whatever verdict the replaced allocation ends with', async () => {
    const body = (v: string) => {
      const b = mockJob('replaced', undefined, { Meta: { v } });
      Object.assign(b.Job.TaskGroups[0]!, { Update: UPDATE });
      return b;
    };
    await register(body('0'));
    await register(body('1'));
    const [old] = await waitForAllocs(s.socket, '/v1/job/replaced/allocations', (l) => l.some((a) => (a as Json)['JobVersion'] === 0 && a.ClientStatus === 'complete'));
    // The seam: the replaced allocation ends unhealthy (its health hook may say so when its task is killed
    // before it was healthy); Nomad gives an allocation the server stops no health.
    const entry = s.api.registry.allocsOfJob('replaced').find((a) => a.jobVersion === 0)!;
    expect(entry.id).toBe(old!.ID);
    entry.lastState = { ...entry.lastState, deploymentStatus: { healthy: false, timestamp: Date.now() } };
    const [, v0] = await get<Json[]>('/v1/job/replaced/deployments');
    expect([v0!['JobVersion'], v0!['Status'], v0!['StatusDescription'], v0!['TaskGroups']['g']['UnhealthyAllocs']]).toEqual([0, 'cancelled', 'Cancelled due to newer version of job', 0]);
  });

  it('is named by no evaluation of a purged job, nor of the job registered again after its purge', async () => {
    const body = mockJob('reborn');
    Object.assign(body.Job.TaskGroups[0]!, { Update: UPDATE });
    const first = await register(body);
    expect((await call(s.socket, 'DELETE', '/v1/job/reborn?purge=true')).status).toBe(200);
    expect((await get(`/v1/evaluation/${first['EvalID']}`))['DeploymentID']).toBe('');
    await register(body);
    expect((await get(`/v1/evaluation/${first['EvalID']}`))['DeploymentID']).toBe('');
  });
});

describe('a job\'s deployments', { timeout: SUITE_TIMEOUT }, () => {
  it('are each job\'s own, read at the same index', async () => {
    for (const id of ['own-a', 'own-b']) {
      const body = mockJob(id);
      Object.assign(body.Job.TaskGroups[0]!, { Update: UPDATE });
      await register(body);
    }
    const a = await call(s.socket, 'GET', '/v1/job/own-a/deployments');
    const b = await call(s.socket, 'GET', '/v1/job/own-b/deployments');
    expect(a.headers['x-nomad-index']).toBe(b.headers['x-nomad-index']);
    expect([a.json<Json[]>().map((d) => d['JobID']), b.json<Json[]>().map((d) => d['JobID'])]).toEqual([['own-a'], ['own-b']]);
  });

  it('read while blocking are none once the job is purged, and its newest is then null', async () => {
    const body = mockJob('vanishing');
    Object.assign(body.Job.TaskGroups[0]!, { Update: UPDATE });
    await register(body);
    const head = await call(s.socket, 'GET', '/v1/job/vanishing/deployments');
    const index = head.headers['x-nomad-index'];
    const list = call(s.socket, 'GET', `/v1/job/vanishing/deployments?index=${index}&wait=30s`);
    const newest = call(s.socket, 'GET', `/v1/job/vanishing/deployment?index=${index}&wait=30s`);
    await new Promise((r) => setImmediate(r));
    expect((await call(s.socket, 'DELETE', '/v1/job/vanishing?purge=true')).status).toBe(200);
    const [l, n] = await Promise.all([list, newest]);
    expect([l.status, l.text]).toEqual([200, '[]']);
    expect([n.status, n.text]).toEqual([200, 'null']);
  });
});

describe('a blocking read of something unknown', { timeout: SUITE_TIMEOUT }, () => {
  it.each([
    ['/v1/deployment/ffffffff-0000', 'deployment not found'],
    ['/v1/deployment/allocations/ffffffff-0000', 'deployment not found'],
  ])('%s is a 404 at once, not after the wait', async (path, message) => {
    const index = Number((await call(s.socket, 'GET', '/v1/deployments')).headers['x-nomad-index']);
    // A wait longer than the test's own limit: a read that waited would fail it.
    const res = await call(s.socket, 'GET', `${path}?index=${index}&wait=10m`);
    expect([res.status, res.text]).toEqual([404, message]);
  });
});

describe('an evaluation that could not place everything', { timeout: SUITE_TIMEOUT }, () => {
  it('names the blocked evaluation it made, which names it back, with the group that did not fit still queued', async () => {
    const body = mockJob('toobig');
    (body.Job.TaskGroups[0]!.Tasks[0] as Json)['Resources'] = { MemoryMB: 2_000_000 };
    const reg = await register(body);
    const first = await get(`/v1/evaluation/${reg['EvalID']}`);
    expect(first).toMatchObject({ Status: 'complete', PreviousEval: '', BlockedEval: expect.stringMatching(/^[0-9a-f-]{36}$/), QueuedAllocations: { g: 1 } });
    expect(first['FailedTGAllocs']).toMatchObject({ g: { DimensionExhausted: { memory: 1 } } });
    const blocked = await get(`/v1/evaluation/${first['BlockedEval']}`);
    expect(blocked).toMatchObject({ Status: 'blocked', PreviousEval: first['ID'], BlockedEval: '', QueuedAllocations: { g: 1 }, DeploymentID: '', SnapshotIndex: blocked['CreateIndex'] });
  });
});
