/**
 * Rolling updates (src/api/rollout.ts and the registry's reconcile): a destructive update of a group with an
 * update block replaces `max_parallel` allocations at a time, as Nomad's reconciler (`computeLimit`) and
 * deployment watcher do. First the limit as a pure function, table-tested; then one served agent in process
 * (mock tasks; each test its own job IDs) for what the scheduler does with it: the rest keep their version
 * until a replacement is healthy, an unhealthy one stops the rollout, and `job plan` says the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { autoRevertOf, deploymentSucceeded, destructiveLimit, maxParallelOf, type RolloutAlloc } from '../../src/api/rollout.ts';
import { call, waitForAllocs, type Alloc } from './agent-process.ts';
import { cleanUp, freshDir, mockJob, serve, type Served, SUITE_TIMEOUT, until, serveWithRoom, getOk } from './in-process-agent.ts';
import type { JobEntry } from '../../src/api/job-registry.ts';

type Json = Record<string, any>;

describe('the destructive updates a group may start (Nomad\'s computeLimit)', () => {
  const alloc = (deploymentId: string | undefined, healthy?: boolean, desired = 'run'): RolloutAlloc => ({
    desired, spec: { deploymentId }, lastState: { clientStatus: 'running', ...(healthy !== undefined && { deploymentStatus: { healthy } }) },
  });
  it.each<[string, number, RolloutAlloc[], boolean, number]>([
    ['nothing of the deployment placed yet: max_parallel', 2, [alloc('old', true), alloc('old', true)], false, 2],
    ['one placed without a verdict holds one slot', 2, [alloc('d'), alloc('old', true)], false, 1],
    ['as many without a verdict as max_parallel: none', 1, [alloc('d'), alloc('old', true)], false, 0],
    ['a healthy one frees its slot', 1, [alloc('d', true), alloc('old', true)], false, 1],
    ['an unhealthy one stops the rollout, whatever is free', 3, [alloc('d', false), alloc('old', true)], false, 0],
    ['an unhealthy one the server stopped counts for nothing', 1, [alloc('d', false, 'stop'), alloc('old', true)], false, 1],
    ['a stopped one without a verdict holds no slot', 1, [alloc('d', undefined, 'stop')], false, 1],
    ['allocations of another deployment count for nothing', 1, [alloc('older'), alloc('older', false)], false, 1],
    ['the deployment marked failed: none', 2, [alloc('old', true)], true, 0],
    ['never below zero', 1, [alloc('d'), alloc('d'), alloc('d')], false, 0],
  ])('%s', (_what, maxParallel, allocs, markedFailed, limit) => {
    expect(destructiveLimit(maxParallel, 'd', allocs, markedFailed)).toBe(limit);
  });

  it.each<[string, Json, boolean]>([
    ['the group\'s own', { Update: { AutoRevert: false }, TaskGroups: [{ Name: 'g', Update: { AutoRevert: true } }] }, true],
    ['the job\'s, when the group sets none', { Update: { AutoRevert: true }, TaskGroups: [{ Name: 'g', Update: { MaxParallel: 1 } }] }, true],
    ['off by default', { TaskGroups: [{ Name: 'g', Update: { MaxParallel: 1 } }] }, false],
  ])('auto_revert is %s', (_what, job, on) => {
    expect(autoRevertOf(job, 'g')).toBe(on);
  });

  it.each<[string, number, boolean]>([
    ['as many healthy as wanted', 2, true],
    ['one short', 1, false],
  ])('a deployment succeeded with %s', (_what, healthyCount, ok) => {
    const wanted = [{ update: {}, type: 'service' }, { update: {}, type: 'service' }, { type: 'service' }] as never[];
    const mine = (healthy: boolean | undefined, jobVersion = 4) => ({ desired: 'run', jobVersion, spec: { deploymentId: 'd', update: {} }, lastState: { clientStatus: 'running', ...(healthy !== undefined && { deploymentStatus: { healthy } }) } }) as never;
    const allocs = [...Array.from({ length: healthyCount }, () => mine(true)), mine(undefined), mine(true, 3), mine(true, 3)];
    expect(deploymentSucceeded(wanted, 4, allocs)).toBe(ok);
  });

  it.each<[string, Json, number]>([
    ['the group\'s own', { Update: { MaxParallel: 1 }, TaskGroups: [{ Name: 'g', Update: { MaxParallel: 3 } }] }, 3],
    ['the job\'s, when the group sets none', { Update: { MaxParallel: 2 }, TaskGroups: [{ Name: 'g', Update: { MinHealthyTime: 1 } }] }, 2],
    ['Nomad\'s default 1 otherwise', { TaskGroups: [{ Name: 'g', Update: { MinHealthyTime: 1 } }] }, 1],
  ])('max_parallel is %s', (_what, job, n) => {
    expect(maxParallelOf(job, 'g')).toBe(n);
  });
});

let s: Served;
beforeAll(async () => {
  s = await serveWithRoom();
});
afterAll(cleanUp);

const get = <T = Json>(path: string) => getOk<T>(s, path);
const put = async (path: string, body: unknown) => {
  const res = await call(s.socket, 'PUT', path, body);
  expect(res.status, res.text).toBe(200);
  return res.json<Json>();
};
/** A service job of `count` mock tasks whose group has an update block; `v` goes in its meta (a change of it replaces). */
const rolled = (id: string, count: number, v: string, update: Json, task: Record<string, unknown> = { run_for: '1h' }) => {
  const body = mockJob(id, { t: task }, { Meta: { v } });
  Object.assign(body.Job.TaskGroups[0]!, { Count: count, Update: update, RestartPolicy: { Attempts: 0, Mode: 'fail' } });
  return body;
};
const quick = { MaxParallel: 1, MinHealthyTime: 1e6, HealthyDeadline: 300e9 };
const slow = (maxParallel: number) => ({ MaxParallel: maxParallel, MinHealthyTime: 200e9, HealthyDeadline: 300e9 });
const allocsOf = (id: string) => get<(Alloc & Json)[]>(`/v1/job/${id}/allocations`);
const deploymentOf = (id: string) => get(`/v1/job/${id}/deployment`);
const settled = (id: string, status: string) => until(() => deploymentOf(id), (d) => d?.['Status'] === status, `${id}'s deployment to be ${status}`);
/** Registers version 0 and waits until its deployment is successful. */
const deployedFirst = async (id: string, count: number) => {
  await put('/v1/jobs', rolled(id, count, '0', quick));
  await settled(id, 'successful');
};
/** The versions of the allocations that are to run, sorted. */
const runningVersions = async (id: string) => (await allocsOf(id)).filter((a) => a.DesiredStatus === 'run').map((a) => a.JobVersion).sort();

describe('a destructive update of a group with an update block', { timeout: SUITE_TIMEOUT }, () => {
  it.each([[1, [0, 0, 1]], [2, [0, 1, 1]], [3, [1, 1, 1]]])('replaces max_parallel = %i at once; the rest keep running their version', async (maxParallel, versions) => {
    const id = `wave-${maxParallel}`;
    await deployedFirst(id, 3);
    await put('/v1/jobs', rolled(id, 3, '1', slow(maxParallel)));
    // The registration's write is durable before it is answered: what it placed and stopped is listed.
    expect(await runningVersions(id)).toEqual(versions);
    const old = (await allocsOf(id)).filter((a) => a.DesiredStatus === 'run' && a.JobVersion === 0);
    expect(old.every((a) => a.ClientStatus === 'running')).toBe(true);
    expect(await deploymentOf(id)).toMatchObject({ JobVersion: 1, Status: 'running', TaskGroups: { g: { DesiredTotal: 3, PlacedAllocs: maxParallel, HealthyAllocs: 0 } } });
  });

  it('replaces the next one once a replacement is healthy, until every allocation runs the new version', async () => {
    await deployedFirst('rolling', 3);
    await put('/v1/jobs', rolled('rolling', 3, '1', { ...quick, MinHealthyTime: 300e6 }));
    await settled('rolling', 'successful');
    const all = await allocsOf('rolling');
    const fresh = all.filter((a) => a.JobVersion === 1).sort((a, b) => a['CreateIndex'] - b['CreateIndex']);
    expect(fresh).toHaveLength(3);
    expect(all.filter((a) => a.JobVersion === 0).every((a) => a.DesiredStatus === 'stop')).toBe(true);
    // One at a time: each replacement was placed only after the one before it was healthy.
    for (let i = 1; i < fresh.length; i++) {
      expect(fresh[i]!['CreateTime'] / 1e6).toBeGreaterThanOrEqual(Date.parse(fresh[i - 1]!['DeploymentStatus']['Timestamp']));
    }
    // Nomad's deployment watcher made the evaluations that placed the second and the third.
    const evals = await get<Json[]>('/v1/job/rolling/evaluations');
    expect(evals.filter((e) => e['TriggeredBy'] === 'deployment-watcher').length).toBeGreaterThanOrEqual(2);
  });

  it('stops replacing once a replacement is unhealthy: the deployment fails and the rest keep their version, also when evaluated again', async () => {
    await deployedFirst('broken', 3);
    await put('/v1/jobs', rolled('broken', 3, '1', { ...quick, MinHealthyTime: 10e9 }, { run_for: '10ms', exit_code: 1 }));
    await settled('broken', 'failed');
    await put('/v1/job/broken/evaluate', {});
    const run = (await allocsOf('broken')).filter((a) => a.DesiredStatus === 'run');
    expect(run.map((a) => [a.JobVersion, a.ClientStatus]).sort()).toEqual([[0, 'running'], [0, 'running'], [1, 'failed']]);
  });

  it('goes on after the deployment of the version before was cancelled: a newer version rolls out from where that one stopped', async () => {
    await deployedFirst('again', 3);
    await put('/v1/jobs', rolled('again', 3, '1', slow(1)));
    await put('/v1/jobs', rolled('again', 3, '2', slow(1)));
    // Version 1's replacement has no verdict, but it belongs to a cancelled deployment: version 2 replaces one now.
    expect(await runningVersions('again')).toEqual([0, 0, 2]);
  });

  it('is planned as it would run: max_parallel destructive updates, the rest ignored', async () => {
    await deployedFirst('planned', 3);
    const plan = await put('/v1/job/planned/plan', { ...rolled('planned', 3, '1', slow(1)), Diff: true });
    expect(plan['Annotations']['DesiredTGUpdates']['g']).toMatchObject({ Place: 0, Stop: 0, InPlaceUpdate: 0, DestructiveUpdate: 1, Ignore: 2 });
  });

  it('limits no placements of new instances, and no in-place updates', async () => {
    await deployedFirst('grown', 2);
    // Only the count changes (and the update block, in place): two more are placed at once.
    await put('/v1/jobs', rolled('grown', 4, '0', slow(1)));
    const all = await waitForAllocs(s.socket, '/v1/job/grown/allocations', (l) => l.filter((a) => a.ClientStatus === 'running').length === 4);
    expect(all.filter((a) => a.DesiredStatus === 'run').map((a) => a.JobVersion)).toEqual([1, 1, 1, 1]);
  });

  it('marks a version stable once its deployment succeeds, and only then', async () => {
    await deployedFirst('steady', 2);
    await until(() => get('/v1/job/steady'), (j) => j['Stable'] === true, 'version 0 marked stable');
    expect((await get<Json[]>('/v1/jobs')).find((j) => j['ID'] === 'steady')).toMatchObject({ Stable: true, Version: 0 });
    await put('/v1/jobs', rolled('steady', 2, '1', slow(1)));
    const versions = (await get<Json>('/v1/job/steady/versions'))['Versions'] as Json[];
    expect(versions.map((v) => [v['Version'], v['Stable']])).toEqual([[1, false], [0, true]]);
  });

  it('reverts to the latest stable version when a deployment with auto_revert fails, as Nomad\'s deployment watcher does', async () => {
    // Each version with its job file: the revert keeps version 0's, as Nomad's state store does.
    const file = (v: string) => ({ Source: `job "reverted" { meta { v = "${v}" } }`, Format: 'hcl2' });
    await put('/v1/jobs', { ...rolled('reverted', 3, '0', quick), Submission: file('0') });
    await settled('reverted', 'successful');
    await until(() => get('/v1/job/reverted'), (j) => j['Stable'] === true, 'version 0 marked stable');
    await put('/v1/jobs', { ...rolled('reverted', 3, '1', { ...quick, MinHealthyTime: 10e9, AutoRevert: true }, { run_for: '10ms', exit_code: 1 }), Submission: file('1') });
    // Version 2 is version 0 again, and its deployment brings every instance back to it.
    const job = await until(() => get('/v1/job/reverted'), (j) => j['Version'] === 2, 'the revert registered as version 2');
    expect(job['Meta']).toEqual({ v: '0' });
    expect((await get('/v1/job/reverted/submission?version=2'))['Source']).toBe(file('0').Source);
    await until(() => get('/v1/job/reverted/deployment'), (d) => d?.['JobVersion'] === 2 && d['Status'] === 'successful', 'version 2\'s deployment to succeed');
    const run = (await allocsOf('reverted')).filter((a) => a.DesiredStatus === 'run');
    expect(run.map((a) => [a.JobVersion, a.ClientStatus])).toEqual([[2, 'running'], [2, 'running'], [2, 'running']]);
    const deployments = await get<Json[]>('/v1/job/reverted/deployments');
    expect(deployments.map((d) => [d['JobVersion'], d['Status']])).toEqual([[2, 'successful'], [1, 'failed'], [0, 'successful']]);
    const evals = await get<Json[]>('/v1/job/reverted/evaluations');
    expect(evals.some((e) => e['TriggeredBy'] === 'deployment-watcher' && e['JobModifyIndex'] === job['JobModifyIndex'])).toBe(true);
  });

  it('does not revert without auto_revert, nor when no earlier version is stable', async () => {
    await deployedFirst('kept', 2);
    await put('/v1/jobs', rolled('kept', 2, '1', { ...quick, MinHealthyTime: 10e9 }, { run_for: '10ms', exit_code: 1 }));
    await settled('kept', 'failed');
    // Nothing is queued on an unhealthy verdict without auto_revert: an evaluation now still finds version 1 current.
    await put('/v1/job/kept/evaluate', {});
    expect((await get('/v1/job/kept'))['Version']).toBe(1);

    const first = rolled('unproven', 2, '0', { ...quick, MinHealthyTime: 10e9, AutoRevert: true }, { run_for: '10ms', exit_code: 1 });
    await put('/v1/jobs', first);
    await settled('unproven', 'failed');
    await put('/v1/job/unproven/evaluate', {});
    expect((await get('/v1/job/unproven'))['Version']).toBe(0);
  });
});

describe('an agent started on a data dir with a deployment in it', { timeout: SUITE_TIMEOUT }, () => {
  it('marks a version stable whose deployment succeeded while no agent could mark it', async () => {
    const dir = freshDir();
    const first = await serve(dir);
    first.api.registry.capacity = { cpu: 0, cores: 64, memoryMB: 1_000_000 };
    expect((await call(first.socket, 'PUT', '/v1/jobs', rolled('late', 1, '0', quick))).status).toBe(200);
    await until(async () => (await call(first.socket, 'GET', '/v1/job/late')).json<Json>(), (j) => j['Stable'] === true, 'version 0 marked stable');
    await first.stop();
    // As an agent that died between its allocation's healthy save and the mark would leave it (or an older agent).
    const second = await serve(dir, async (store) => {
      const job = store.get('jobs', 'late') as JobEntry;
      delete job.versions[0]!.stable;
      await store.commit((tx) => tx.put('jobs', 'late', job));
    });
    await until(async () => (await call(second.socket, 'GET', '/v1/job/late')).json<Json>(), (j) => j['Stable'] === true, 'version 0 marked stable by the new agent');
  });
});
