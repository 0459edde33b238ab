/**
 * Canary deployments (the registry's rollOut and promote, routes/deployments.ts), as Nomad's reconciler and
 * deployment watcher run them on one node: an update whose group asks for `canary = N` first places N allocations
 * of the new version beside the old ones (none stopped), the deployment waits for their promotion (by hand, or its
 * own with `auto_promote`), and then each canary takes its instance's place and the rest roll out max_parallel at a
 * time. One served agent in process (mock tasks; each test its own job IDs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from './agent-process.ts';
import { cleanUp, mockJob, type Served, SUITE_TIMEOUT, until, serveWithRoom, getOk } from './in-process-agent.ts';

type Json = Record<string, any>;

let s: Served;
beforeAll(async () => {
  s = await serveWithRoom();
});
afterAll(cleanUp);

const get = <T = Json>(path: string) => getOk<T>(s, path);
const put = async (path: string, body: unknown, status = 200) => {
  const res = await call(s.socket, 'PUT', path, body);
  expect(res.status, res.text).toBe(status);
  return status === 200 ? res.json<Json>() : res.text;
};
/** A service job of `count` mock tasks whose group has an update block; `v` goes in its meta (a change of it replaces). */
const job = (id: string, count: number, v: string, update: Json, task: Record<string, unknown> = { run_for: '1h' }) => {
  const body = mockJob(id, { t: task }, { Meta: { v } });
  Object.assign(body.Job.TaskGroups[0]!, { Count: count, Update: update, RestartPolicy: { Attempts: 0, Mode: 'fail' } });
  return body;
};
const quick = { MaxParallel: 1, MinHealthyTime: 1e6, HealthyDeadline: 300e9 };
const allocsOf = (id: string) => get<Json[]>(`/v1/job/${id}/allocations`);
const running = async (id: string) => (await allocsOf(id)).filter((a) => a['DesiredStatus'] === 'run');
const deploymentOf = (id: string) => get(`/v1/job/${id}/deployment`);
const deploymentIs = (id: string, ok: (d: Json) => boolean, what: string) => until(() => deploymentOf(id), (d) => d !== null && ok(d), `${id}'s deployment ${what}`);
/** Registers version 0 (canaries asked for, none placed: nothing to replace) and waits until its deployment is successful. */
const first = async (id: string, count: number, update: Json) => {
  await put('/v1/jobs', job(id, count, '0', { ...quick, ...update }));
  await deploymentIs(id, (d) => d['Status'] === 'successful', 'successful');
};

describe('a canary deployment', { timeout: SUITE_TIMEOUT }, () => {
  it('places no canary for a new job: there is nothing to replace', async () => {
    await first('fresh', 3, { Canary: 1 });
    const d = await deploymentOf('fresh');
    expect(d['TaskGroups']['g']).toMatchObject({ DesiredCanaries: 0, PlacedCanaries: null, Promoted: false, DesiredTotal: 3, HealthyAllocs: 3 });
    expect((await running('fresh')).every((a) => a['DeploymentStatus']['Canary'] === false)).toBe(true);
  });

  it('places the canaries beside the old allocations and waits, healthy, for a promotion; an evaluation replaces nothing', async () => {
    await first('waits', 3, { Canary: 1 });
    await put('/v1/jobs', job('waits', 3, '1', { ...quick, Canary: 1 }));
    const after = await running('waits');
    expect(after.map((a) => [a['JobVersion'], a['DeploymentStatus']['Canary']]).sort()).toEqual([[0, false], [0, false], [0, false], [1, true]]);
    const d = await deploymentIs('waits', (x) => x['JobVersion'] === 1 && x['TaskGroups']['g']['HealthyAllocs'] === 1, 'with its canary healthy');
    expect(d).toMatchObject({ Status: 'running', StatusDescription: 'Deployment is running but requires manual promotion' });
    const canary = after.find((a) => a['JobVersion'] === 1)!;
    expect(d['TaskGroups']['g']).toMatchObject({ DesiredCanaries: 1, PlacedCanaries: [canary['ID']], Promoted: false, DesiredTotal: 3, PlacedAllocs: 1 });
    await put('/v1/job/waits/evaluate', {});
    expect((await running('waits')).map((a) => a['JobVersion']).sort()).toEqual([0, 0, 0, 1]);
  });

  it('refuses a promotion before the canaries are healthy, in Nomad\'s words', async () => {
    await first('early', 2, { Canary: 1 });
    await put('/v1/jobs', job('early', 2, '1', { ...quick, Canary: 1, MinHealthyTime: 200e9 }));
    const d = await deploymentOf('early');
    expect(await put(`/v1/deployment/promote/${d['ID']}`, { DeploymentID: d['ID'], All: true }, 400)).toContain('Task group "g" has 0/1 healthy allocations');
  });

  it('once promoted, puts each canary in its instance\'s place and rolls the rest out, to a successful deployment', async () => {
    await first('promoted', 3, { Canary: 1 });
    await put('/v1/jobs', job('promoted', 3, '1', { ...quick, Canary: 1 }));
    const d = await deploymentIs('promoted', (x) => x['JobVersion'] === 1 && x['TaskGroups']['g']['HealthyAllocs'] === 1, 'with its canary healthy');
    const canary = d['TaskGroups']['g']['PlacedCanaries'][0];
    const res = await put(`/v1/deployment/promote/${d['ID']}`, { DeploymentID: d['ID'], All: true }) as Json;
    expect(res['EvalID']).toMatch(/^[0-9a-f-]{36}$/);
    const done = await deploymentIs('promoted', (x) => x['Status'] === 'successful', 'successful');
    expect(done['TaskGroups']['g']).toMatchObject({ Promoted: true, DesiredCanaries: 1, PlacedCanaries: [canary], HealthyAllocs: 3, DesiredTotal: 3 });
    const run = await running('promoted');
    expect(run.map((a) => [a['JobVersion'], a['DeploymentStatus']['Canary']])).toEqual([[1, false], [1, false], [1, false]]);
    expect(run.map((a) => a['ID'])).toContain(canary);
    // The old allocation of the canary's instance was stopped, not replaced: the canary is its successor.
    const stopped = (await allocsOf('promoted')).filter((a) => a['JobVersion'] === 0);
    expect(stopped.map((a) => a['DesiredStatus'])).toEqual(['stop', 'stop', 'stop']);
    expect(stopped.filter((a) => a['DesiredDescription'] === 'alloc not needed as deployment was promoted: a canary has taken its place')).toHaveLength(1);
    expect(await put(`/v1/deployment/promote/${d['ID']}`, { DeploymentID: d['ID'], All: true }, 400)).toContain("can't promote terminal deployment");
  });

  it('promotes itself with auto_promote once its canaries are healthy', async () => {
    await first('auto', 2, { Canary: 1, AutoPromote: true });
    await put('/v1/jobs', job('auto', 2, '1', { ...quick, Canary: 1, AutoPromote: true }));
    const done = await deploymentIs('auto', (x) => x['JobVersion'] === 1 && x['Status'] === 'successful', 'successful');
    expect(done['TaskGroups']['g']).toMatchObject({ Promoted: true, HealthyAllocs: 2 });
    expect((await running('auto')).map((a) => a['JobVersion'])).toEqual([1, 1]);
  });

  it('stops the unpromoted canaries of a version a newer one replaces, and places the newer one\'s', async () => {
    await first('bumped', 2, { Canary: 1 });
    await put('/v1/jobs', job('bumped', 2, '1', { ...quick, Canary: 1, MinHealthyTime: 200e9 }));
    await put('/v1/jobs', job('bumped', 2, '2', { ...quick, Canary: 1, MinHealthyTime: 200e9 }));
    expect((await running('bumped')).map((a) => [a['JobVersion'], a['DeploymentStatus']['Canary']]).sort()).toEqual([[0, false], [0, false], [2, true]]);
  });

  it('places no more canaries once one is unhealthy: the deployment fails, the old allocations run on', async () => {
    await first('sick', 2, { Canary: 2 });
    await put('/v1/jobs', job('sick', 2, '1', { ...quick, Canary: 2, MinHealthyTime: 10e9 }, { run_for: '10ms', exit_code: 1 }));
    await deploymentIs('sick', (x) => x['JobVersion'] === 1 && x['Status'] === 'failed', 'failed');
    await put('/v1/job/sick/evaluate', {});
    expect((await running('sick')).map((a) => [a['JobVersion'], a['ClientStatus']]).sort()).toEqual([[0, 'running'], [0, 'running'], [1, 'failed'], [1, 'failed']]);
  });

  it('is planned as Nomad plans it: the canaries, the rest ignored', async () => {
    await first('planned', 3, { Canary: 1 });
    const plan = await put('/v1/job/planned/plan', { ...job('planned', 3, '1', { ...quick, Canary: 1 }), Diff: true }) as Json;
    expect(plan['Annotations']['DesiredTGUpdates']['g']).toMatchObject({ Place: 0, Stop: 0, DestructiveUpdate: 0, Canary: 1, Ignore: 3 });
    expect(plan['Diff']['TaskGroups'][0]['Updates']).toEqual({ canary: 1, ignore: 3 });
  });

  it('registers a canary\'s services with their canary_tags until the promotion, then with their tags', async () => {
    const withService = (v: string) => {
      const body = job('tagged', 2, v, { ...quick, Canary: 1 });
      Object.assign(body.Job.TaskGroups[0]!, { Services: [{ Name: 'tagged-web', Provider: 'nomad', Tags: ['live', 'v${NOMAD_META_v}'], CanaryTags: ['canary'] }] });
      return body;
    };
    await put('/v1/jobs', withService('0'));
    await deploymentIs('tagged', (d) => d['Status'] === 'successful', 'successful');
    await put('/v1/jobs', withService('1'));
    const d = await deploymentIs('tagged', (x) => x['JobVersion'] === 1 && x['TaskGroups']['g']['HealthyAllocs'] === 1, 'with its canary healthy');
    const canary = d['TaskGroups']['g']['PlacedCanaries'][0];
    const tagsByAlloc = async () => new Map((await get<Json[]>('/v1/service/tagged-web')).map((r) => [r['AllocID'], r['Tags']]));
    const before = await until(tagsByAlloc, (m) => m.size === 3, 'three registrations');
    expect(before.get(canary)).toEqual(['canary']);
    expect([...before].filter(([id]) => id !== canary).map(([, tags]) => tags)).toEqual([['live', 'v0'], ['live', 'v0']]);
    await put(`/v1/deployment/promote/${d['ID']}`, { DeploymentID: d['ID'], All: true });
    await deploymentIs('tagged', (x) => x['Status'] === 'successful', 'successful');
    const after = await until(tagsByAlloc, (m) => m.size === 2 && [...m.values()].every((t) => t.join() === 'live,v1'), 'two registrations tagged live, v1');
    expect(after.get(canary)).toEqual(['live', 'v1']);
  });
});
