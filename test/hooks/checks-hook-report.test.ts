/**
 * The checks hook tells the alloc actor what its checks say (CHECK_STATUS on a status change only,
 * CHECKS_REMOVED when checks are forgotten), so the actor's context (and the visualizer, which reads it)
 * shows them. A real alloc runner with mock tasks, a SimulatedClock and a scripted check runner, as in
 * checks-hook.test.ts; the events the actor hears are read from its inspection stream.
 */
import { describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import type { CheckOutcome } from '../../src/checks/check-status.ts';
import type { CheckQuery, RawResult } from '../../src/checks/checker.ts';
import type { CheckSpec, ServiceSpec } from '../../src/checks/spec.ts';
import type { AllocSpec, TaskSpec } from '../../src/jobspec/types.ts';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.ts';
import { TEST_NODE } from '../properties/world.ts';

const mockDriver = createMockDriver();
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
const allocOf = (tasks: TaskSpec[], services?: ServiceSpec[], extra: Partial<AllocSpec> = {}): AllocSpec =>
  ({ id: 'a1', job: 'web', group: 'app', type: 'service', tasks, ports: PORTS, restart: RESTART, ...(services && { services }), ...extra }) as AllocSpec;

type Snapshot = ReturnType<ReturnType<typeof createAllocRunner>['persist']>;

/** A runner whose checks answer `outcome.now`; `heard` lists the CHECK_* events its alloc actor received. */
function start(spec: AllocSpec, opts: { clock?: SimulatedClock; snapshot?: Snapshot } = {}) {
  const clock = opts.clock ?? new SimulatedClock(0);
  const outcome: { now: CheckOutcome; output?: string } = { now: 'success' };
  const runCheck = async (_q: CheckQuery): Promise<RawResult> =>
    outcome.now === 'success' ? { outcome: 'success', output: 'nomad: http ok', statusCode: 200 } : { outcome: 'failure', output: outcome.output ?? 'nomad: connection refused' };
  const heard: { type: string; [k: string]: unknown }[] = [];
  // Events received by the alloc actor (the root), not by its task runners.
  const inspect = (ev: InspectionEvent) => {
    if (ev.type === '@xstate.event' && ev.event.type.startsWith('CHECK') && ev.actorRef.sessionId === ev.rootId) heard.push(ev.event as never);
  };
  const runner = createAllocRunner(spec, { clock, builtinHooks: false, node: TEST_NODE, hostEnv: {}, seed: 1, checks: { runCheck }, drivers: { mock: mockDriver }, inspect, ...(opts.snapshot && { snapshot: opts.snapshot }) }).start();
  const checks = () => runner.actor.getSnapshot().context.checks;
  return { clock, runner, outcome, heard, checks };
}

describe('the checks hook reports to the alloc actor', () => {
  it('a failing check puts `failure` in the actor context, one CHECK_STATUS per status change', async () => {
    const r = start(allocOf([task('server', [service([check()])])]));
    await r.clock.advance(1);
    const [id] = Object.keys(r.runner.checks());
    expect(r.checks()).toEqual({ [id!]: { name: 'alive', service: 'web', task: 'server', status: 'pending', output: 'nomad: waiting to run', time: expect.any(Number) } });
    await r.clock.advance(30_000); // runs at 5s, 15s, 25s: success three times, one change
    expect(r.checks()![id!]).toMatchObject({ status: 'success', output: 'nomad: http ok' });
    r.outcome.now = 'failure';
    r.outcome.output = `nomad: ${'refused '.repeat(100)}`;
    await r.clock.advance(20_000); // two failing runs, one change
    const line = r.checks()![id!]!;
    expect(line).toMatchObject({ status: 'failure', task: 'server' });
    expect(line.output.length).toBeLessThanOrEqual(200);
    expect(line.output.startsWith('nomad: refused')).toBe(true);
    expect(r.heard.map((e) => (e.check as { status: string }).status)).toEqual(['pending', 'success', 'failure']);
    // The reported state the runtime serves is unchanged by it (checks are not part of AllocState).
    expect(r.runner.getState()).not.toHaveProperty('checks');
    r.runner.stop();
  });

  it('an update that removes a check, and preKill, send CHECKS_REMOVED: the context keeps live checks only', async () => {
    const spec = allocOf([task('server', [service([check({ name: 'first' })])])], undefined, { modifyIndex: 1 });
    const r = start(spec);
    await r.clock.advance(6_000);
    const [firstId] = Object.keys(r.checks()!);
    r.runner.send({ type: 'UPDATE', alloc: { ...spec, modifyIndex: 2, tasks: [task('server', [service([check({ name: 'second', path: '/ready' })])])] } as AllocSpec });
    await r.clock.advance(1);
    expect(Object.values(r.checks()!).map((c) => [c.name, c.status])).toEqual([['second', 'pending']]);
    expect(r.heard).toContainEqual({ type: 'CHECKS_REMOVED', ids: [firstId] });
    await r.clock.advance(6_000);
    expect(Object.values(r.checks()!).map((c) => [c.name, c.status])).toEqual([['second', 'success']]);
    r.runner.send({ type: 'KILL' });
    await r.clock.advance(5_000);
    expect(r.runner.getState().taskStates.server?.state).toBe('dead');
    expect(r.checks()).toEqual({});
  });

  it('a group check has no task; a runner restored from a snapshot written before `checks` was kept loads and reports', async () => {
    const spec = allocOf([task('server')], [service([check()])], { id: 'restored' });
    const first = start(spec);
    await first.clock.advance(6_000);
    expect(Object.values(first.checks()!)[0]).not.toHaveProperty('task');
    const saved = first.runner.persist();
    first.runner.stop();
    // An older agent's snapshot: no `checks` in the alloc context.
    const old = JSON.parse(JSON.stringify(saved)) as { snapshot: { context: Record<string, unknown> } };
    delete old.snapshot.context.checks;
    const second = start(spec, { clock: first.clock, snapshot: old as never });
    await second.clock.advance(1);
    expect(second.runner.getState().taskStates.server!.state).toBe('running');
    expect(Object.values(second.checks()!)).toEqual([expect.objectContaining({ name: 'alive', status: 'pending' })]);
    second.outcome.now = 'failure';
    await second.clock.advance(6_000);
    expect(Object.values(second.checks()!)).toEqual([expect.objectContaining({ status: 'failure' })]);
    second.runner.stop();
  });
});
