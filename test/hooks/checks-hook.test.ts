/**
 * The checks hook in a real alloc runner (mock tasks, a SimulatedClock, the check runner scripted): the
 * pending stubs, the first run half an interval after the task runs, results in Nomad's shape,
 * check_restart through the task runner's restart path (counted, with Nomad's reason) after `limit`
 * failures past `grace`, ignore_warnings, a group check restarting every task, and preKill forgetting.
 */
import { describe, expect, it } from 'vitest';
import type { CheckOutcome } from '../../src/checks/check-status.ts';
import type { CheckQuery, RawResult } from '../../src/checks/checker.ts';
import type { CheckSpec, ServiceSpec } from '../../src/checks/spec.ts';
import type { AllocSpec, TaskSpec } from '../../src/jobspec/types.ts';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.ts';

// One mock driver for every runner here, so a restored runner finds the workloads the first one started.
const mockDriver = createMockDriver();
import { TEST_NODE } from '../properties/world.ts';

const check = (extra: Partial<CheckSpec> = {}): CheckSpec => ({
  name: 'alive',
  type: 'http',
  path: '/health',
  interval: 10_000,
  timeout: 2_000,
  successBeforePassing: 0,
  failuresBeforeCritical: 0,
  onUpdate: 'require_healthy',
  ...extra,
});
const service = (checks: CheckSpec[], extra: Partial<ServiceSpec> = {}): ServiceSpec => ({ name: 'web', provider: 'nomad', port: 'http', addressMode: 'auto', onUpdate: 'require_healthy', checks, ...extra });
const task = (name: string, services?: ServiceSpec[]): TaskSpec => ({ name, driver: 'mock', config: { run_for: '10h' }, killTimeout: 1_000, ...(services && { services }) }) as TaskSpec;
const PORTS = [{ label: 'http', value: 23456, to: 0, hostIP: '127.0.0.1' }];
const RESTART = { attempts: 5, interval: 3_600_000, delay: 1_000, mode: 'fail' as const };

/** A runner whose checks answer `outcome.now`, recording every query. */
function start(spec: AllocSpec, opts: { clock?: SimulatedClock; snapshot?: ReturnType<ReturnType<typeof createAllocRunner>['persist']> } = {}) {
  const clock = opts.clock ?? new SimulatedClock(0);
  const outcome: { now: CheckOutcome } = { now: 'success' };
  const queries: { at: number; q: CheckQuery }[] = [];
  const runCheck = async (q: CheckQuery): Promise<RawResult> => {
    queries.push({ at: clock.now(), q });
    return outcome.now === 'success' ? { outcome: 'success', output: 'nomad: http ok', statusCode: 200 } : outcome.now === 'warning' ? { outcome: 'warning', output: 'slow down', statusCode: 429 } : { outcome: 'failure', output: 'nomad: connection refused' };
  };
  const runner = createAllocRunner(spec, { clock, builtinHooks: false, node: TEST_NODE, hostEnv: {}, seed: 1, checks: { runCheck }, drivers: { mock: mockDriver }, ...(opts.snapshot && { snapshot: opts.snapshot }) }).start();
  const rejections: string[] = [];
  runner.rejections$.subscribe((x) => rejections.push(x.message));
  return { clock, runner, outcome, queries, rejections };
}

const allocOf = (tasks: TaskSpec[], services?: ServiceSpec[], extra: Partial<AllocSpec> = {}): AllocSpec =>
  ({ id: 'a1', job: 'web', group: 'app', type: 'service', tasks, ports: PORTS, restart: RESTART, ...(services && { services }), ...extra }) as AllocSpec;

const events = (r: ReturnType<typeof start>, t = 'server') => r.runner.getState().taskStates[t]!.events;

describe('the checks hook', () => {
  it('shows a pending stub at once, first runs half an interval after the task runs, then every interval', async () => {
    const r = start(allocOf([task('server', [service([check()])])]));
    await r.clock.advance(1);
    const [stub] = Object.values(r.runner.checks());
    expect(stub).toMatchObject({ Status: 'pending', Output: 'nomad: waiting to run', Service: 'web', Check: 'alive', Task: 'server', Group: 'web.app', Mode: 'healthiness' });
    expect(stub!.ID).toMatch(/^[0-9a-f]{32}$/);
    expect(r.runner.getState().taskStates.server?.state).toBe('running');
    const startedAt = r.runner.getState().taskStates.server!.startedAt!;
    await r.clock.advance(30_000);
    expect(r.queries.map((x) => x.at - startedAt)).toEqual([5_000, 15_000, 25_000]);
    expect(r.queries[0]!.q).toMatchObject({ type: 'http', address: { host: '127.0.0.1', port: 23456 }, path: '/health', timeout: 2_000 });
    const [result] = Object.values(r.runner.checks());
    expect(result).toEqual({ ...stub, Status: 'success', Output: 'nomad: http ok', StatusCode: 200, Timestamp: Math.floor(r.clock.now() / 1000) - 5 });
    r.runner.stop();
  });

  it('interpolates a check in its own task env (${NOMAD_PORT_http}, the task meta)', async () => {
    const server = { ...task('server', [service([check({ path: '/v/${NOMAD_META_version}', port: '${NOMAD_PORT_http}' })])]), meta: { version: '7' } };
    const r = start(allocOf([server]));
    await r.clock.advance(6_000);
    expect(r.queries[0]!.q).toMatchObject({ path: '/v/7', address: { host: '127.0.0.1', port: 23456 } });
    r.runner.stop();
  });

  it('check_restart: `limit` failures after grace restart the task through its restart path, counted, with Nomad\'s reason', async () => {
    const r = start(allocOf([task('server', [service([check({ checkRestart: { limit: 3, grace: 12_000, ignoreWarnings: false } })])])]));
    r.outcome.now = 'failure';
    // Runs at 5s (in grace), 15s, 25s, 35s: the third failure past grace restarts.
    await r.clock.advance(34_000);
    expect(events(r).some((e) => e.type === 'Restart Signaled')).toBe(false);
    await r.clock.advance(2_000);
    const signaled = events(r).filter((e) => e.type === 'Restart Signaled');
    expect(signaled).toHaveLength(1);
    expect(signaled[0]!.restartReason).toBe('healthcheck: check "alive" unhealthy');
    r.outcome.now = 'success';
    await r.clock.advance(5_000);
    const ts = r.runner.getState().taskStates.server!;
    expect(ts).toMatchObject({ state: 'running', restarts: 1 });
    expect(events(r).map((e) => e.type).slice(-4)).toEqual(['Restart Signaled', 'Terminated', 'Restarting', 'Started']);
    // Passing again: nothing more.
    await r.clock.advance(60_000);
    expect(r.runner.getState().taskStates.server!.restarts).toBe(1);
    r.runner.stop();
  });

  it('check_restart counts against the restart policy: once it is spent the task fails', async () => {
    const r = start(allocOf([task('server', [service([check({ checkRestart: { limit: 1, grace: 0, ignoreWarnings: false } })])])], undefined, { restart: { attempts: 1, interval: 3_600_000, delay: 1_000, mode: 'fail' } }));
    r.outcome.now = 'failure';
    await r.clock.advanceUntil(() => r.runner.getState().taskStates.server!.failed, 120_000);
    expect(events(r).filter((e) => e.type === 'Restart Signaled')).toHaveLength(2);
    expect(events(r).at(-1)?.type).toBe('Not Restarting');
    r.runner.stop();
  });

  it('ignore_warnings: a check answering warnings never restarts its task; without it, it does', async () => {
    const quiet = start(allocOf([task('server', [service([check({ checkRestart: { limit: 2, grace: 0, ignoreWarnings: true } })])])]));
    quiet.outcome.now = 'warning';
    await quiet.clock.advance(60_000);
    expect(Object.values(quiet.runner.checks())[0]).toMatchObject({ Status: 'warning', StatusCode: 429 });
    expect(events(quiet).some((e) => e.type === 'Restart Signaled')).toBe(false);
    quiet.runner.stop();

    const strict = start(allocOf([task('server', [service([check({ checkRestart: { limit: 2, grace: 0, ignoreWarnings: false } })])])]));
    strict.outcome.now = 'warning';
    await strict.clock.advance(20_000);
    expect(events(strict).filter((e) => e.type === 'Restart Signaled')).toHaveLength(1);
    strict.runner.stop();
  });

  it('failures_before_critical keeps a passing check passing (and its task untouched) through short failures', async () => {
    const r = start(allocOf([task('server', [service([check({ failuresBeforeCritical: 3, checkRestart: { limit: 1, grace: 0, ignoreWarnings: false } })])])]));
    await r.clock.advance(6_000);
    r.outcome.now = 'failure';
    await r.clock.advance(20_000);
    expect(Object.values(r.runner.checks())[0]).toMatchObject({ Status: 'success', Output: 'nomad: connection refused' });
    expect(events(r).some((e) => e.type === 'Restart Signaled')).toBe(false);
    await r.clock.advance(10_000);
    expect(Object.values(r.runner.checks())[0]!.Status).toBe('failure');
    expect(events(r).filter((e) => e.type === 'Restart Signaled')).toHaveLength(1);
    r.runner.stop();
  });

  it('a group service check with check_restart restarts every running task', async () => {
    const r = start(allocOf([task('server'), task('sidecar')], [service([check({ checkRestart: { limit: 1, grace: 0, ignoreWarnings: false } })])]));
    await r.clock.advance(1);
    expect(Object.values(r.runner.checks())[0]).not.toHaveProperty('Task');
    r.outcome.now = 'failure';
    await r.clock.advance(6_000);
    for (const t of ['server', 'sidecar']) expect(events(r, t).find((e) => e.type === 'Restart Signaled')?.restartReason).toBe('healthcheck: check "alive" unhealthy');
    r.runner.stop();
  });

  it('preKill stops the checks and forgets their results, as Nomad purges them', async () => {
    const r = start(allocOf([task('server', [service([check()])])]));
    await r.clock.advance(6_000);
    expect(Object.keys(r.runner.checks())).toHaveLength(1);
    r.runner.send({ type: 'KILL' });
    await r.clock.advance(5_000);
    expect(r.runner.getState().taskStates.server?.state).toBe('dead');
    expect(r.runner.checks()).toEqual({});
    const ran = r.queries.length;
    await r.clock.advance(60_000);
    expect(r.queries).toHaveLength(ran);
    expect(r.clock.pendingTimers).toBe(0);
  });

  it('an allocation with no checks gets no checks hook', () => {
    const r = start(allocOf([task('server')]));
    expect(r.runner.actor.getSnapshot().context.hooks.prerun ?? []).not.toContain('checks');
    r.runner.stop();
  });

  it('does not judge a check while its task is down: a task its restart policy restarts is not restarted again by check_restart', async () => {
    const flaky = { ...task('server', [service([check({ interval: 1_000, checkRestart: { limit: 2, grace: 0, ignoreWarnings: false } })])]), config: { run_for: '10s', exit_code: 1 } };
    const r = start(allocOf([flaky], undefined, { restart: { attempts: 5, interval: 3_600_000, delay: 15_000, mode: 'delay' } }));
    await r.clock.advance(10_500);
    expect(r.runner.getState().taskStates.server!.events.some((e) => e.type === 'Restarting')).toBe(true);
    r.outcome.now = 'failure';
    // Down for the 15s delay: every check fails, none counts (no restart is even asked of the waiting task).
    await r.clock.advance(14_000);
    expect(events(r).some((e) => e.type === 'Restart Signaled')).toBe(false);
    expect(r.rejections).toEqual([]);
    expect(Object.values(r.runner.checks())[0]!.Status).toBe('failure');
    // Back up (after the delay and its jitter) and still failing: now it counts, and restarts it.
    await r.clock.advanceUntil(() => r.runner.getState().taskStates.server!.state === 'running', 30_000);
    expect(events(r).some((e) => e.type === 'Restart Signaled')).toBe(false);
    await r.clock.advance(3_000);
    expect(events(r).filter((e) => e.type === 'Restart Signaled')).toHaveLength(1);
    r.runner.stop();
  });

  it('an in-place update adds new checks and stops and forgets removed ones', async () => {
    const first = check({ name: 'first' });
    const spec = allocOf([task('server', [service([first])])], undefined, { modifyIndex: 1 });
    const r = start(spec);
    await r.clock.advance(6_000);
    expect(Object.values(r.runner.checks()).map((c) => c.Check)).toEqual(['first']);
    const next = { ...spec, modifyIndex: 2, tasks: [task('server', [service([check({ name: 'second', path: '/ready' })])])] } as AllocSpec;
    r.runner.send({ type: 'UPDATE', alloc: next });
    await r.clock.advance(1);
    expect(Object.values(r.runner.checks()).map((c) => [c.Check, c.Status])).toEqual([['second', 'pending']]);
    const ran = r.queries.length;
    await r.clock.advance(6_000);
    expect(r.queries.slice(ran).map((x) => x.q.path)).toEqual(['/ready']);
    expect(Object.values(r.runner.checks()).map((c) => [c.Check, c.Status])).toEqual([['second', 'success']]);
    r.runner.stop();
  });

  it('starts the checks again in a runner restored while its task runs, check_restart included', async () => {
    const spec = allocOf([task('server', [service([check({ checkRestart: { limit: 2, grace: 0, ignoreWarnings: false } })])])], undefined, { id: 'restored' });
    const first = start(spec);
    await first.clock.advance(6_000);
    const saved = first.runner.persist();
    first.runner.stop(); // the agent dies; the task does not
    const ran = first.queries.length;
    await first.clock.advance(30_000);
    expect(first.queries).toHaveLength(ran);

    const second = start(spec, { clock: first.clock, snapshot: saved });
    await second.clock.advance(1);
    expect(second.runner.getState().taskStates.server!.state).toBe('running');
    expect(Object.values(second.runner.checks())[0]).toMatchObject({ Status: 'pending' });
    await second.clock.advance(5_000);
    expect(second.queries).toHaveLength(1);
    expect(Object.values(second.runner.checks())[0]).toMatchObject({ Status: 'success' });
    second.outcome.now = 'failure';
    await second.clock.advance(20_000);
    expect(events(second).filter((e) => e.type === 'Restart Signaled')).toHaveLength(1);
    second.runner.stop();
  });
});
