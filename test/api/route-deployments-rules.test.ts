/**
 * The deployment routes and the evaluation's deployment (src/api/routes/deployments.ts), rule by rule: the
 * deployment ID (a pure function, table-tested), then one served agent in process (mock tasks; each test its
 * own job IDs) for what a deployment shows per group, its status and words as Nomad's deployment watcher
 * gives them, which versions have one, the reads, fail and promote. Nomad's structs.Deployment is the reference.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploymentId } from '../../src/api/deployment-id.ts';
import type { JobEntry } from '../../src/api/job-registry.ts';
import { call, waitForAllocs } from './agent-process.ts';
import { cleanUp, freshDir, mockJob, serve, type Served, SUITE_TIMEOUT, until, serveWithRoom, getOk } from './in-process-agent.ts';

type Json = Record<string, any>;

describe('a deployment\'s ID', () => {
  const job = (over: Partial<JobEntry> = {}) => ({ id: 'web', namespace: 'default', createIndex: 7, ...over }) as JobEntry;
  const UUID4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it('is the same for the same job and version, in every agent: pinned, since stored marks name it', () => {
    expect(deploymentId(job(), 0)).toBe(deploymentId(job(), 0));
    expect(deploymentId(job(), 0)).toBe('94f4082c-dc61-4cfc-b525-64502b29196e');
  });

  it.each([
    ['another version', job(), 1],
    ['another job', job({ id: 'db' }), 0],
    ['another namespace', job({ namespace: 'team' }), 0],
    ['the job created again (another create index)', job({ createIndex: 8 }), 0],
  ])('differs for %s', (_what, other, version) => {
    expect(deploymentId(other, version)).not.toBe(deploymentId(job(), 0));
  });

  it.each(Array.from({ length: 24 }, (_, v) => v))('is a version 4 UUID with the RFC 4122 variant (version %i)', (v) => {
    expect(deploymentId(job(), v)).toMatch(UUID4);
  });
});

let s: Served;
beforeAll(async () => {
  s = await serveWithRoom();
});
afterAll(cleanUp);

const get = <T = Json>(path: string) => getOk<T>(s, path);
const put = async (body: unknown) => {
  const res = await call(s.socket, 'PUT', '/v1/jobs', body);
  expect(res.status, res.text).toBe(200);
  return res.json<Json>();
};
/** A service job whose group has an update block. */
const deployed = (id: string, update: Json = { MinHealthyTime: 1e6, HealthyDeadline: 300e9 }, tasks?: Record<string, Record<string, unknown>>, extra: Json = {}) => {
  const body = mockJob(id, tasks, extra);
  (body.Job.TaskGroups[0] as Json)['Update'] = update;
  return body;
};
const deploymentOf = (id: string) => get(`/v1/job/${id}/deployment`);
const settled = (id: string, status: string) => until(() => deploymentOf(id), (d) => d?.['Status'] === status, `${id}'s deployment to be ${status}`);

describe('a deployment', { timeout: SUITE_TIMEOUT }, () => {
  it('shows its job, version and indexes, and per group the update block\'s settings and its allocations\' health', async () => {
    const reg = await put(deployed('shown', { MinHealthyTime: 1e6, HealthyDeadline: 300e9, AutoRevert: true, ProgressDeadline: 900e9 }, undefined, { Priority: 65 }));
    const d = await settled('shown', 'successful');
    const job = await get('/v1/job/shown');
    // Its progress deadline: the healthy verdict's time + progress_deadline (15m), later than the placement's now + 15m.
    const [alloc] = await get<Json[]>('/v1/job/shown/allocations');
    const requireBy = new Date(Date.parse(alloc!['DeploymentStatus']['Timestamp']) + 900e3).toISOString();
    expect(d).toMatchObject({
      ID: deploymentId(s.api.registry.getJob('shown')!, 0), Namespace: 'default', JobID: 'shown', JobVersion: 0, JobModifyIndex: reg['JobModifyIndex'],
      JobSpecModifyIndex: reg['JobModifyIndex'], JobCreateIndex: job['CreateIndex'], IsMultiregion: false, EvalPriority: 65,
      CreateIndex: reg['JobModifyIndex'], StatusDescription: 'Deployment completed successfully',
    });
    expect(d['TaskGroups']).toEqual({
      g: { AutoRevert: true, AutoPromote: false, ProgressDeadline: 900e9, RequireProgressBy: requireBy, Promoted: false, PlacedCanaries: null, DesiredCanaries: 0, DesiredTotal: 1, PlacedAllocs: 1, HealthyAllocs: 1, UnhealthyAllocs: 0 },
    });
    expect(d['ModifyIndex']).toBeGreaterThan(d['CreateIndex']);
  });

  it('counts each wanted allocation of the group, and is running until all of them are healthy', async () => {
    const body = deployed('pair', { MinHealthyTime: 200e9, HealthyDeadline: 300e9 });
    (body.Job.TaskGroups[0] as Json)['Count'] = 2;
    await put(body);
    const d = await deploymentOf('pair');
    expect(d).toMatchObject({ Status: 'running', StatusDescription: 'Deployment is running', TaskGroups: { g: { DesiredTotal: 2, PlacedAllocs: 2, HealthyAllocs: 0, UnhealthyAllocs: 0, ProgressDeadline: 600e9, AutoRevert: false } } });
  });

  it('fails when an allocation turns unhealthy, in Nomad\'s words, counting it', async () => {
    const body = deployed('sick', { MinHealthyTime: 10e9, HealthyDeadline: 300e9 }, { t: { run_for: '10ms', exit_code: 1 } });
    (body.Job.TaskGroups[0] as Json)['RestartPolicy'] = { Attempts: 0, Mode: 'fail' };
    await put(body);
    const d = await settled('sick', 'failed');
    expect(d).toMatchObject({ StatusDescription: 'Failed due to unhealthy allocations', TaskGroups: { g: { UnhealthyAllocs: 1, HealthyAllocs: 0, PlacedAllocs: 1 } } });
  });

  it('is cancelled by a newer version before it succeeds, and by a stop; the stop itself has none', async () => {
    const slow = { MinHealthyTime: 200e9, HealthyDeadline: 300e9 };
    await put(deployed('bumped', slow, undefined, { Meta: { v: '1' } }));
    await put(deployed('bumped', slow, undefined, { Meta: { v: '2' } }));
    const both = await get<Json[]>('/v1/job/bumped/deployments');
    expect(both.map((d) => [d['JobVersion'], d['Status'], d['StatusDescription']])).toEqual([[1, 'running', 'Deployment is running'], [0, 'cancelled', 'Cancelled due to newer version of job']]);
    await call(s.socket, 'DELETE', '/v1/job/bumped');
    const after = await get<Json[]>('/v1/job/bumped/deployments');
    expect(after.map((d) => [d['JobVersion'], d['Status'], d['StatusDescription']])).toEqual([[1, 'cancelled', 'Cancelled because job is stopped'], [0, 'cancelled', 'Cancelled due to newer version of job']]);
  });

  it('exists only for the groups with an update block, counting only theirs', async () => {
    const two = deployed('halfway');
    (two.Job.TaskGroups as Json[]).push({ Name: 'plain', Count: 3, Tasks: [{ Name: 't', Driver: 'mock', Config: { run_for: '1h' } }] });
    await put(two);
    const d = await deploymentOf('halfway');
    expect(Object.keys(d['TaskGroups'])).toEqual(['g']);
    expect(d['TaskGroups']['g']['DesiredTotal']).toBe(1);
  });

  it('counts an allocation updated in place to a new version only once it is healthy there: its old verdict is cleared', async () => {
    await put(deployed('moved'));
    await settled('moved', 'successful');
    // An in-place change (the update block), and health now slow to decide.
    const reg = await put(deployed('moved', { MinHealthyTime: 200e9, HealthyDeadline: 300e9 }));
    // The runner clears its verdict as it takes the update; the API shows that once the runner's save lands.
    const [alloc] = await until(() => get<Json[]>('/v1/job/moved/allocations'), (l) => l[0]?.['AllocModifyIndex'] === reg['JobModifyIndex'] && l[0]?.['DeploymentStatus']?.['Healthy'] === null, 'the in-place update, its verdict cleared');
    expect(alloc!['DeploymentStatus']['Healthy']).toBeNull();
    const d = await deploymentOf('moved');
    expect(d).toMatchObject({ JobVersion: 1, Status: 'running', TaskGroups: { g: { PlacedAllocs: 1, HealthyAllocs: 0, UnhealthyAllocs: 0 } } });
  });

  it('moves an allocation of a group the new version left unchanged to its deployment, watched anew', async () => {
    const fast = { MinHealthyTime: 1e6, HealthyDeadline: 300e9 };
    const twoGroups = (killTimeout: number) => {
      const body = deployed('regrouped', fast);
      (body.Job.TaskGroups as Json[]).push({ Name: 'h', Count: 1, Update: fast, Tasks: [{ Name: 't', Driver: 'mock', Config: { run_for: '1h' }, KillTimeout: killTimeout }] });
      return body;
    };
    await put(twoGroups(5e9));
    await settled('regrouped', 'successful');
    const before = (await get<Json[]>('/v1/job/regrouped/allocations')).find((a) => a['TaskGroup'] === 'g')!;
    const reg = await put(twoGroups(9e9));
    const after = await until(
      () => get<Json>(`/v1/allocation/${before['ID']}`),
      // A verdict of its own for the new version (the old one is shown until the runner's save clearing it lands).
      (a) => a['AllocModifyIndex'] === reg['JobModifyIndex'] && a['DeploymentStatus']['Healthy'] === true && a['DeploymentStatus']['Timestamp'] !== before['DeploymentStatus']['Timestamp'],
      'group g\'s allocation updated in place and healthy again',
    );
    expect(Date.parse(after['DeploymentStatus']['Timestamp'])).toBeGreaterThan(Date.parse(before['DeploymentStatus']['Timestamp']));
    const d = await settled('regrouped', 'successful');
    expect([d['JobVersion'], after['DeploymentID']]).toEqual([1, d['ID']]);
  });
});

describe('the deployment reads', { timeout: SUITE_TIMEOUT }, () => {
  it('list every job\'s deployments newest first, and a job\'s own newest first; none and null for an unknown job', async () => {
    await put(deployed('listed-a'));
    await put(deployed('listed-b'));
    const all = await get<Json[]>('/v1/deployments');
    const created = all.map((d) => d['CreateIndex'] as number);
    expect(created).toEqual([...created].sort((a, b) => b - a));
    expect(all.findIndex((d) => d['JobID'] === 'listed-b')).toBeLessThan(all.findIndex((d) => d['JobID'] === 'listed-a'));
    // Nomad's Job.Deployments and Job.LatestDeployment look no job up (route-unknown-job-rules has their indexes).
    for (const [path, text] of [['/v1/job/nope/deployments', '[]'], ['/v1/job/nope/deployment', 'null']]) {
      const res = await call(s.socket, 'GET', path);
      expect([res.status, res.text]).toEqual([200, text]);
    }
  });

  it('find one by ID or a unique prefix, 404 "deployment not found" otherwise, and list only its version\'s allocations', async () => {
    await put(deployed('found', undefined, undefined, { Meta: { v: '1' } }));
    const [v0] = await waitForAllocs(s.socket, '/v1/job/found/allocations', (l) => l.length === 1);
    await put(deployed('found', undefined, undefined, { Meta: { v: '2' } }));
    const [d1, d0] = await get<Json[]>('/v1/job/found/deployments');
    expect((await get(`/v1/deployment/${d0!['ID']}`))['JobVersion']).toBe(0);
    expect((await get(`/v1/deployment/${String(d1!['ID']).slice(0, 13)}`))['JobVersion']).toBe(1);
    for (const id of ['ffffffff-0000', String(d0!['ID']) + 'x']) {
      const res = await call(s.socket, 'GET', `/v1/deployment/${id}`);
      expect([res.status, res.text]).toEqual([404, 'deployment not found']);
    }
    // Every deployment's ID starts with one of sixteen digits: a one-character prefix is ambiguous among these.
    const digits = (await get<Json[]>('/v1/deployments')).map((d) => String(d['ID'])[0]);
    const shared = digits.find((c, i) => digits.indexOf(c) !== i);
    if (shared) expect((await call(s.socket, 'GET', `/v1/deployment/${shared}`)).status).toBe(404);
    expect((await get<Json[]>(`/v1/deployment/allocations/${d0!['ID']}`)).map((a) => a['ID'])).toEqual([v0!.ID]);
    const newer = await get<Json[]>(`/v1/deployment/allocations/${d1!['ID']}`);
    expect(newer.map((a) => a['JobVersion'])).toEqual([1]);
  });
});

describe('fail and promote', { timeout: SUITE_TIMEOUT }, () => {
  it('fail answers Nomad\'s fields at the mark\'s index, which the deployment then carries', async () => {
    await put(deployed('failing', { MinHealthyTime: 200e9, HealthyDeadline: 300e9 }));
    const d = await deploymentOf('failing');
    const res = await call(s.socket, 'PUT', `/v1/deployment/fail/${d['ID']}`);
    expect(res.status, res.text).toBe(200);
    const answer = res.json<Json>();
    expect(answer).toEqual({ EvalID: '', EvalCreateIndex: 0, DeploymentModifyIndex: answer['Index'], RevertedJobVersion: null, Index: answer['Index'] });
    expect(await get(`/v1/deployment/${d['ID']}`)).toMatchObject({ Status: 'failed', ModifyIndex: answer['Index'] });
    expect(s.store.get('meta', 'deployments.failed')).toMatchObject({ [d['ID']]: answer['Index'] });
    const promote = await call(s.socket, 'PUT', `/v1/deployment/promote/${d['ID']}`);
    expect([promote.status, promote.text]).toEqual([400, "can't promote terminal deployment"]);
  });

  it('refuse an unknown deployment with 404', async () => {
    for (const verb of ['fail', 'promote']) {
      const res = await call(s.socket, 'POST', `/v1/deployment/${verb}/00000000-dead`);
      expect([verb, res.status, res.text]).toEqual([verb, 404, 'deployment not found']);
    }
  });
});

describe('an evaluation', { timeout: SUITE_TIMEOUT }, () => {
  it('of a registration names the deployment its version started; others, and a job without one, name none', async () => {
    const reg = await put(deployed('followed'));
    const d = await deploymentOf('followed');
    const evaluation = await get(`/v1/evaluation/${reg['EvalID']}`);
    expect(evaluation).toMatchObject({
      DeploymentID: d['ID'], NodeID: '', NodeModifyIndex: 0, Wait: 0, WaitUntil: '0001-01-01T00:00:00Z', NextEval: '', PreviousEval: '', BlockedEval: '',
      FailedTGAllocs: null, ClassEligibility: null, EscapedComputedClass: false, QueuedAllocations: { g: 0 }, SnapshotIndex: evaluation['CreateIndex'],
    });
    const [alloc] = await waitForAllocs(s.socket, '/v1/job/followed/allocations', (l) => l.length === 1);
    const stop = (await call(s.socket, 'PUT', `/v1/allocation/${alloc!.ID}/stop`)).json<Json>();
    expect((await get(`/v1/evaluation/${stop['EvalID']}`))['DeploymentID']).toBe('');
    const plain = await put(mockJob('undeployed'));
    expect((await get(`/v1/evaluation/${plain['EvalID']}`))['DeploymentID']).toBe('');
    const stopped = (await call(s.socket, 'DELETE', '/v1/job/followed')).json<Json>();
    expect((await get(`/v1/evaluation/${stopped['EvalID']}`))['DeploymentID']).toBe('');
  });
});

describe('a damaged mark of failed deployments', { timeout: SUITE_TIMEOUT }, () => {
  it('stops the agent\'s start, named by its store entry, rather than be read as no mark', async () => {
    const dir = freshDir();
    const first = await serve(dir);
    expect((await call(first.socket, 'PUT', '/v1/jobs', deployed('marked'))).status).toBe(200);
    await first.stop();
    await expect(serve(dir, async (store) => {
      await store.commit((tx) => tx.put('meta', 'deployments.failed', { x: 'soon' }));
    })).rejects.toThrow(/meta\/deployments\.failed: expected \{ deployment ID: index \}/);
  });
});
