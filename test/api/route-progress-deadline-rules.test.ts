/**
 * progress_deadline (src/api/progress-deadline.ts, progress-watcher.ts, the registry's progressStarts, promote and
 * failByProgressDeadline), as Nomad's state store and deployment watcher run it. First the rules as pure functions,
 * table-tested; then agents in process whose deployment watcher runs on a simulated clock (the tasks' health on the
 * wall clock): the deadline fails a deployment without progress, not one whose canaries wait for a promotion; 0 turns
 * it off; auto_revert reverts; an agent started after the deadline fails it at once, one started before re-arms it.
 */
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { deadlineVerdict, progressCutoff, requireProgressBy } from '../../src/api/progress-deadline.ts';
import { ZERO_TIME } from '../../src/api/job-json.ts';
import { progressDeadlineOf } from '../../src/api/rollout.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { call } from './agent-process.ts';
import { cleanUp, freshDir, mockJob, serve, type Served, SUITE_TIMEOUT, until } from './in-process-agent.ts';
import { recordPublishedBatches } from './published-batches.ts';

type Json = Record<string, any>;

const iso = (ms: number) => new Date(ms).toISOString();

describe('a group\'s RequireProgressBy (Nomad\'s updateDeploymentWithAlloc)', () => {
  it.each<[string, number, number | undefined, number[], number | undefined]>([
    ['none before anything is placed', 600_000, undefined, [], undefined],
    ['the placement\'s (or promotion\'s) while nothing is healthy', 600_000, 5_000, [], 5_000],
    ['pushed out to a healthy verdict\'s time + the deadline', 600_000, 5_000, [1_000], 601_000],
    ['the latest verdict\'s', 600_000, 5_000, [1_000, 3_000, 2_000], 603_000],
    ['never pulled in by an earlier verdict', 600_000, 900_000, [1_000], 900_000],
    ['none with a deadline of 0, whatever is recorded', 0, 5_000, [1_000], undefined],
  ])('%s', (_what, deadline, recorded, healthyAt, by) => {
    expect(requireProgressBy(deadline, recorded, healthyAt)).toBe(by);
  });

  it.each<[string, Json, number]>([
    ['the group\'s own', { Update: { ProgressDeadline: 60e9 }, TaskGroups: [{ Name: 'g', Update: { ProgressDeadline: 120e9 } }] }, 120_000],
    ['the job\'s, when the group sets none', { Update: { ProgressDeadline: 60e9 }, TaskGroups: [{ Name: 'g', Update: { MaxParallel: 1 } }] }, 60_000],
    ['0 when set to 0', { TaskGroups: [{ Name: 'g', Update: { ProgressDeadline: 0 } }] }, 0],
    ['Nomad\'s default 10m otherwise', { TaskGroups: [{ Name: 'g', Update: { MaxParallel: 1 } }] }, 600_000],
  ])('progress_deadline is %s', (_what, job, ms) => {
    expect(progressDeadlineOf(job, 'g')).toBe(ms);
  });
});

describe('the deployment watcher at the deadline (getDeploymentProgressCutoff, doneGroups, shouldFail)', () => {
  const group = (g: Json): Json => ({ DesiredTotal: 2, DesiredCanaries: 0, Promoted: false, HealthyAllocs: 0, AutoRevert: false, RequireProgressBy: ZERO_TIME, ...g });
  const d = (groups: Record<string, Json>): Json => ({ TaskGroups: Object.fromEntries(Object.entries(groups).map(([n, g]) => [n, group(g)])) });

  it.each<[string, Json, number | undefined]>([
    ['none while no group has a deadline', d({ a: {} }), undefined],
    ['the earliest of the groups not done', d({ a: { RequireProgressBy: iso(3_000) }, b: { RequireProgressBy: iso(2_000) } }), 2_000],
    ['a group with all it wants healthy is done: not counted', d({ a: { RequireProgressBy: iso(1_000), HealthyAllocs: 2 }, b: { RequireProgressBy: iso(2_000) } }), 2_000],
    ['a group waiting for its canaries\' promotion is never done', d({ a: { RequireProgressBy: iso(1_000), HealthyAllocs: 2, DesiredCanaries: 1 } }), 1_000],
    ['a promoted group with all it wants healthy is done', d({ a: { RequireProgressBy: iso(1_000), HealthyAllocs: 2, DesiredCanaries: 1, Promoted: true } }), undefined],
  ])('the cutoff: %s', (_what, deployment, cutoff) => {
    expect(progressCutoff(deployment)).toBe(cutoff);
  });

  it.each<[string, Json, { fail: boolean; rollback: boolean }]>([
    ['a group short of healthy allocations fails it', d({ a: { HealthyAllocs: 1 } }), { fail: true, rollback: false }],
    ['with auto_revert, it rolls back', d({ a: { HealthyAllocs: 2 }, b: { HealthyAllocs: 0, AutoRevert: true } }), { fail: true, rollback: true }],
    ['auto_revert of a group that did not fail rolls nothing back', d({ a: { HealthyAllocs: 2, AutoRevert: true }, b: { HealthyAllocs: 0 } }), { fail: true, rollback: false }],
    ['every group healthy: no fail', d({ a: { HealthyAllocs: 2 } }), { fail: false, rollback: false }],
    ['canaries healthy and waiting for a promotion: no fail', d({ a: { HealthyAllocs: 1, DesiredCanaries: 1 } }), { fail: false, rollback: false }],
    ['canaries not yet healthy: fail', d({ a: { HealthyAllocs: 0, DesiredCanaries: 1 } }), { fail: true, rollback: false }],
    ['once promoted, all it wants must be healthy', d({ a: { HealthyAllocs: 1, DesiredCanaries: 1, Promoted: true } }), { fail: true, rollback: false }],
  ])('the verdict: %s', (_what, deployment, verdict) => {
    expect(deadlineVerdict(deployment)).toEqual(verdict);
  });
});

afterAll(cleanUp);
afterEach(() => {
  vi.restoreAllMocks();
});

/** An agent whose deployment watcher runs on `clock`, with room for any number of mock allocations. */
async function agentOn(clock: SimulatedClock, dir = freshDir()): Promise<Served> {
  const s = await serve(dir, undefined, { api: { clock } });
  s.api.registry.capacity = { cpu: 0, cores: 64, memoryMB: 1_000_000 };
  return s;
}

/** A service job of `count` mock tasks whose group has update block `update`; `v` goes in its meta (a change replaces). */
const job = (id: string, count: number, v: string, update: Json) => {
  const body = mockJob(id, { t: { run_for: '1h' } }, { Meta: { v } });
  Object.assign(body.Job.TaskGroups[0]!, { Count: count, Update: update, RestartPolicy: { Attempts: 0, Mode: 'fail' } });
  return body;
};
/** Healthy within a moment of running (wall clock). */
const quick = { MaxParallel: 1, MinHealthyTime: 1e6, HealthyDeadline: 300e9 };
/** Never healthy within a test: its min_healthy_time is longer than any test runs. */
const stuck = (progressDeadlineMs: number, extra: Json = {}) => ({ MaxParallel: 1, MinHealthyTime: 200e9, HealthyDeadline: 240e9, ProgressDeadline: progressDeadlineMs * 1e6, ...extra });

const MIN = 60_000;

function client(s: Served) {
  const get = async <T = Json>(path: string): Promise<T> => {
    const res = await call(s.socket, 'GET', path);
    expect(res.status, res.text).toBe(200);
    return res.json<T>();
  };
  const put = async (path: string, body: unknown) => {
    const res = await call(s.socket, 'PUT', path, body);
    expect(res.status, res.text).toBe(200);
    return res.json<Json>();
  };
  const deployment = (id: string) => get(`/v1/job/${id}/deployment`);
  const deploymentIs = (id: string, ok: (d: Json) => boolean, what: string) => until(() => deployment(id), (d) => d !== null && ok(d), `${id}'s deployment ${what}`);
  return { get, put, deployment, deploymentIs };
}

describe('a deployment with a progress deadline', { timeout: SUITE_TIMEOUT }, () => {
  it('fails when no allocation of its group turns healthy by the deadline set at its first placement; its rollout stops there', async () => {
    // Ahead of the wall clock: what the placement sets is later than any healthy verdict's time + the deadline.
    const clock = new SimulatedClock(Date.now() + 60 * MIN);
    const s = await agentOn(clock);
    const batches = recordPublishedBatches();
    const { get, put, deployment, deploymentIs } = client(s);
    await put('/v1/jobs', job('slow', 2, '0', quick));
    await deploymentIs('slow', (d) => d['Status'] === 'successful', 'successful');
    const placedAt = clock.now();
    await put('/v1/jobs', job('slow', 2, '1', stuck(10 * MIN)));
    const d = await deploymentIs('slow', (x) => x['JobVersion'] === 1, 'of version 1');
    expect(d['TaskGroups']['g']).toMatchObject({ ProgressDeadline: 600e9, RequireProgressBy: iso(placedAt + 10 * MIN), PlacedAllocs: 1 });

    const watcherEvals = async () => (await get<Json[]>('/v1/job/slow/evaluations')).filter((e) => e['TriggeredBy'] === 'deployment-watcher').length;
    const before = await watcherEvals();
    await clock.advance(10 * MIN - 1);
    expect(await deployment('slow')).toMatchObject({ Status: 'running', StatusDescription: 'Deployment is running' });
    await clock.advance(1);
    const failed = await deploymentIs('slow', (x) => x['Status'] === 'failed', 'failed');
    expect(failed['StatusDescription']).toBe('Failed due to progress deadline');
    // Announced on the event stream, as every change of a deployment's status is.
    await until(async () => batches.flatMap((b) => b.Events).find((e) => e.Topic === 'Deployment' && e.Key === failed['ID'] && (e.Payload['Deployment'] as Json)['Status'] === 'failed'), (e) => e !== undefined, 'the fail announced');
    // Nomad's watcher makes an evaluation with the fail; the rollout stops where it was, also when evaluated again.
    expect(await watcherEvals()).toBe(before + 1);
    await put('/v1/job/slow/evaluate', {});
    const run = (await get<Json[]>('/v1/job/slow/allocations')).filter((a) => a['DesiredStatus'] === 'run');
    expect(run.map((a) => a['JobVersion']).sort()).toEqual([0, 1]);
    // A fail by hand is refused: it has ended.
    expect((await call(s.socket, 'PUT', `/v1/deployment/fail/${failed['ID']}`, {})).text).toContain(`can't fail terminal deployment`);
    await s.stop();
  });

  it('reverts to the latest stable version with auto_revert', async () => {
    const clock = new SimulatedClock(Date.now() + 60 * MIN);
    const s = await agentOn(clock);
    const { get, put, deploymentIs } = client(s);
    await put('/v1/jobs', job('back', 1, '0', quick));
    await until(() => get('/v1/job/back'), (j) => j['Stable'] === true, 'version 0 marked stable');
    await put('/v1/jobs', job('back', 1, '1', stuck(5 * MIN, { AutoRevert: true })));
    await clock.advance(5 * MIN);
    const reverted = await until(() => get('/v1/job/back'), (j) => j['Version'] === 2, 'the revert registered as version 2');
    expect(reverted['Meta']).toEqual({ v: '0' });
    const deployments = await get<Json[]>('/v1/job/back/deployments');
    expect(deployments.find((x) => x['JobVersion'] === 1)).toMatchObject({ Status: 'failed', StatusDescription: 'Failed due to progress deadline' });
    await deploymentIs('back', (x) => x['JobVersion'] === 2 && x['Status'] === 'successful', 'of version 2 successful');
    await s.stop();
  });

  it('with progress_deadline = 0 has none: no RequireProgressBy, no Progress Deadline column\'s value, never failed by time', async () => {
    const clock = new SimulatedClock(Date.now() + 60 * MIN);
    const s = await agentOn(clock);
    const { put, deployment, deploymentIs } = client(s);
    await put('/v1/jobs', job('open', 1, '0', stuck(0)));
    await deploymentIs('open', (x) => x['TaskGroups']['g']['PlacedAllocs'] === 1, 'placed');
    await clock.advance(24 * 60 * MIN);
    expect(await deployment('open')).toMatchObject({ Status: 'running', TaskGroups: { g: { ProgressDeadline: 0, RequireProgressBy: ZERO_TIME } } });
    await s.stop();
  });

  it('waiting for a manual promotion with its canaries healthy is not failed by it; the promotion sets a new deadline from then', async () => {
    const clock = new SimulatedClock(Date.now() + 60 * MIN);
    const s = await agentOn(clock);
    const { put, deployment, deploymentIs } = client(s);
    await put('/v1/jobs', job('canary', 2, '0', quick));
    await deploymentIs('canary', (x) => x['Status'] === 'successful', 'successful');
    await put('/v1/jobs', job('canary', 2, '1', { ...quick, Canary: 1, ProgressDeadline: 10 * MIN * 1e6 }));
    const waiting = await deploymentIs('canary', (x) => x['JobVersion'] === 1 && x['TaskGroups']['g']['HealthyAllocs'] === 1, 'with its canary healthy');
    expect(waiting['StatusDescription']).toBe('Deployment is running but requires manual promotion');
    await clock.advance(30 * MIN);
    expect(await deployment('canary')).toMatchObject({ Status: 'running', StatusDescription: 'Deployment is running but requires manual promotion' });
    const promotedAt = clock.now();
    await put(`/v1/deployment/promote/${waiting['ID']}`, { DeploymentID: waiting['ID'], All: true });
    const after = await deploymentIs('canary', (x) => x['TaskGroups']['g']['Promoted'] === true, 'promoted');
    expect(after['TaskGroups']['g']['RequireProgressBy']).toBe(iso(promotedAt + 10 * MIN));
    await deploymentIs('canary', (x) => x['Status'] === 'successful', 'successful');
    await s.stop();
  });
});

describe('a progress deadline across an agent restart', { timeout: SUITE_TIMEOUT }, () => {
  it('fails the deployment when the agent starts after it passed; re-arms it when the agent starts before', async () => {
    const start = Date.now() + 60 * MIN;
    const passed = freshDir();
    const pending = freshDir();
    for (const dir of [passed, pending]) {
      const first = await agentOn(new SimulatedClock(start), dir);
      const { put, deploymentIs } = client(first);
      await put('/v1/jobs', job('down', 1, '0', stuck(10 * MIN)));
      await deploymentIs('down', (x) => x['TaskGroups']['g']['PlacedAllocs'] === 1, 'placed');
      await first.stop();
    }

    const late = await agentOn(new SimulatedClock(start + 10 * MIN + 1), passed);
    const failed = await client(late).deploymentIs('down', (x) => x['Status'] === 'failed', 'failed at the start');
    expect(failed['StatusDescription']).toBe('Failed due to progress deadline');
    await late.stop();

    const clock = new SimulatedClock(start + 5 * MIN);
    const early = await agentOn(clock, pending);
    const { deployment, deploymentIs } = client(early);
    expect(await deployment('down')).toMatchObject({ Status: 'running', TaskGroups: { g: { RequireProgressBy: iso(start + 10 * MIN) } } });
    await clock.advance(5 * MIN - 1);
    expect((await deployment('down'))['Status']).toBe('running');
    await clock.advance(1);
    await deploymentIs('down', (x) => x['Status'] === 'failed' && x['StatusDescription'] === 'Failed due to progress deadline', 'failed by the re-armed deadline');
    await early.stop();
  });
});

describe('a damaged progress record', { timeout: SUITE_TIMEOUT }, () => {
  it('is answered 500 naming its store entry, never read as no deadline', async () => {
    const s = await agentOn(new SimulatedClock(Date.now()));
    const { put, deploymentIs } = client(s);
    await put('/v1/jobs', job('damaged', 1, '0', quick));
    const d = await deploymentIs('damaged', (x) => x['Status'] === 'successful', 'successful');
    const key = `deployments.progress/${d['ID']}`;
    await s.store.commit((tx) => tx.put('meta', key, { requireBy: { g: 'soon' } }));
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const res = await call(s.socket, 'GET', '/v1/job/damaged/deployment');
    stderr.mockRestore();
    expect([res.status, res.text]).toEqual([500, expect.stringContaining(`meta/${key}: expected { requireBy: { group: ms }, failed?: index }`)]);
    await s.store.commit((tx) => tx.remove('meta', key));
    expect((await call(s.socket, 'GET', '/v1/job/damaged/deployment')).json<Json>()['Status']).toBe('successful');
    await s.stop();
  });
});
