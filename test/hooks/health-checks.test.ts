/**
 * The health watcher with `health_check = "checks"` (Nomad's tracker, watchNomadEvents): healthy only once
 * every Nomad check has passed, unbroken, for min_healthy_time while the tasks run; unhealthy at the
 * deadline naming the services that did not pass; task_states ignores checks; a readiness check
 * (on_update = "ignore") never holds a deployment. Mock tasks on a SimulatedClock, check results scripted.
 */
import { describe, expect, it } from 'vitest';
import type { CheckOutcome } from '../../src/checks/check-status.ts';
import type { RawResult } from '../../src/checks/checker.ts';
import type { CheckSpec } from '../../src/checks/spec.ts';
import type { AllocSpec, UpdateStrategy } from '../../src/jobspec/types.ts';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.ts';

// One mock driver for every runner here, so a restored runner finds the workload the first one started.
const mock = createMockDriver();
import { TEST_NODE } from '../properties/world.ts';

const check = (extra: Partial<CheckSpec> = {}): CheckSpec => ({ name: 'alive', type: 'http', path: '/', interval: 10_000, timeout: 2_000, successBeforePassing: 0, failuresBeforeCritical: 0, onUpdate: 'require_healthy', ...extra });

function start(update: UpdateStrategy, checks: CheckSpec[] = [check()], restore?: { clock: SimulatedClock; snapshot: ReturnType<ReturnType<typeof createAllocRunner>['persist']> }) {
  const clock = restore?.clock ?? new SimulatedClock(0);
  const outcome: { now: CheckOutcome } = { now: 'failure' };
  const runCheck = async (): Promise<RawResult> =>
    outcome.now === 'success' ? { outcome: 'success', output: 'nomad: http ok', statusCode: 200 } : outcome.now === 'warning' ? { outcome: 'warning', output: 'slow down', statusCode: 429 } : { outcome: 'failure', output: 'nomad: connection refused' };
  const spec: AllocSpec = {
    id: 'h1', job: 'web', group: 'app', type: 'service', update,
    ports: [{ label: 'http', value: 23456, to: 0, hostIP: '127.0.0.1' }],
    tasks: [{ name: 'server', driver: 'mock', config: { run_for: '10h' }, services: [{ name: 'web', provider: 'nomad', port: 'http', addressMode: 'auto', onUpdate: 'require_healthy', checks }] }],
  };
  const runner = createAllocRunner(spec, { clock, builtinHooks: false, node: TEST_NODE, hostEnv: {}, seed: 1, checks: { runCheck }, drivers: { mock }, ...(restore && { snapshot: restore.snapshot }) }).start();
  return { clock, runner, outcome };
}

const MIN = 60_000;

describe('deployment health from checks', () => {
  it('is healthy only after every check has passed for min_healthy_time, not when the tasks alone have run that long', async () => {
    const r = start({ minHealthyTime: 10_000, healthyDeadline: 5 * MIN, healthCheck: 'checks' });
    // Checks run at 5s, 15s, 25s, 35s, 45s: failing until 40s.
    await r.clock.advance(40_000);
    expect(r.runner.getState().deploymentStatus).toBeUndefined();
    r.outcome.now = 'success';
    await r.clock.advance(14_000);
    expect(r.runner.getState().deploymentStatus).toBeUndefined();
    await r.clock.advance(2_000);
    expect(r.runner.getState().deploymentStatus).toEqual({ healthy: true, timestamp: 55_000 });
    r.runner.stop();
  });

  it('a failure inside min_healthy_time starts the wait over', async () => {
    const r = start({ minHealthyTime: 15_000, healthyDeadline: 5 * MIN, healthCheck: 'checks' });
    r.outcome.now = 'success';
    await r.clock.advance(10_000); // passing since 5s
    r.outcome.now = 'failure';
    await r.clock.advance(10_000); // fails at 15s
    r.outcome.now = 'success';
    await r.clock.advance(30_000); // passes again from 25s: healthy at 40s
    expect(r.runner.getState().deploymentStatus).toEqual({ healthy: true, timestamp: 40_000 });
    r.runner.stop();
  });

  it('is unhealthy at the healthy deadline when a check never passed, naming its service on the task', async () => {
    const r = start({ minHealthyTime: 10_000, healthyDeadline: 2 * MIN, healthCheck: 'checks' });
    await r.clock.advance(2 * MIN + 1_000);
    expect(r.runner.getState().deploymentStatus).toEqual({ healthy: false, timestamp: 2 * MIN });
    const unhealthy = r.runner.getState().taskStates.server!.events.find((e) => e.type === 'Alloc Unhealthy');
    expect(unhealthy?.message).toBe('Services not healthy by deadline: web');
    r.runner.stop();
  });

  it('with health_check = "task_states" failing checks do not hold the deployment', async () => {
    const r = start({ minHealthyTime: 10_000, healthyDeadline: 5 * MIN, healthCheck: 'task_states' });
    await r.clock.advance(11_000);
    expect(r.runner.getState().deploymentStatus?.healthy).toBe(true);
    r.runner.stop();
  });

  it('a readiness check (on_update = "ignore") that fails does not hold it; a pending one still does until it has run', async () => {
    const r = start({ minHealthyTime: 10_000, healthyDeadline: 5 * MIN, healthCheck: 'checks' }, [check({ onUpdate: 'ignore' })]);
    await r.clock.advance(4_000);
    expect(Object.values(r.runner.checks())[0]).toMatchObject({ Status: 'pending', Mode: 'readiness' });
    await r.clock.advance(20_000);
    // Failing since 5s, but readiness: healthy 10s after it first ran.
    expect(r.runner.getState().deploymentStatus).toEqual({ healthy: true, timestamp: 15_000 });
    r.runner.stop();
  });

  it('on_update = "ignore_warnings" lets a warning through (the check found by its interpolated ID); require_healthy does not', async () => {
    const lenient = start({ minHealthyTime: 10_000, healthyDeadline: MIN, healthCheck: 'checks' }, [check({ name: '${NOMAD_TASK_NAME}-alive', onUpdate: 'ignore_warnings' })]);
    lenient.outcome.now = 'warning';
    await lenient.clock.advance(16_000);
    expect(Object.values(lenient.runner.checks())[0]).toMatchObject({ Check: 'server-alive', Status: 'warning' });
    expect(lenient.runner.getState().deploymentStatus).toEqual({ healthy: true, timestamp: 15_000 });
    lenient.runner.stop();

    const strict = start({ minHealthyTime: 10_000, healthyDeadline: MIN, healthCheck: 'checks' }, [check({ name: '${NOMAD_TASK_NAME}-alive' })]);
    strict.outcome.now = 'warning';
    await strict.clock.advance(MIN + 1_000);
    expect(strict.runner.getState().deploymentStatus?.healthy).toBe(false);
    strict.runner.stop();
  });

  it('watches again in a runner restored before a verdict, and reaches it from the checks', async () => {
    const update: UpdateStrategy = { minHealthyTime: 10_000, healthyDeadline: 5 * MIN, healthCheck: 'checks' };
    const first = start(update);
    await first.clock.advance(20_000);
    expect(first.runner.getState().deploymentStatus).toBeUndefined();
    const snapshot = first.runner.persist();
    first.runner.stop(); // the agent dies; the task does not

    const second = start(update, [check()], { clock: first.clock, snapshot });
    second.outcome.now = 'success';
    await second.clock.advance(4_000); // the check's first run: 5s after the restore
    expect(second.runner.getState().deploymentStatus).toBeUndefined();
    await second.clock.advance(12_000);
    expect(second.runner.getState().deploymentStatus).toEqual({ healthy: true, timestamp: 35_000 });
    second.runner.stop();
  });

  it('keeps a verdict reached before the restore, and watches no more', async () => {
    const update: UpdateStrategy = { minHealthyTime: 10_000, healthyDeadline: 5 * MIN, healthCheck: 'checks' };
    const first = start(update);
    first.outcome.now = 'success';
    await first.clock.advance(16_000);
    expect(first.runner.getState().deploymentStatus).toEqual({ healthy: true, timestamp: 15_000 });
    const snapshot = first.runner.persist();
    first.runner.stop();

    const second = start(update, [check()], { clock: first.clock, snapshot });
    second.outcome.now = 'failure';
    await second.clock.advance(10 * MIN);
    expect(second.runner.getState().deploymentStatus).toEqual({ healthy: true, timestamp: 15_000 });
    expect(second.runner.getState().taskStates.server!.events.some((e) => e.type === 'Alloc Unhealthy')).toBe(false);
    second.runner.stop();
  });
});
