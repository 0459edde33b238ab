/**
 * Regression: an allocation the server stops before its health is decided ends with no verdict, whichever of
 * the stop's two halves (the update hooks, the kill) reaches its tasks first. The agent stops an allocation
 * with UPDATE (desired stop) then KILL; the health_watcher heard of the stop only through its update hook, so
 * when the kill won (a stop heard during prerun, where the group_services update ran first and the tasks,
 * never started, died at once; or a stop queued behind an earlier update) the task's death made it unhealthy
 * (`route-deployments-rules`' cancelled row under load). Nomad's tracker reads the alloc's DesiredStatus on
 * every update before judging the tasks, and sets no health for a stopped allocation.
 * On a real alloc runner with the mock driver, on the simulated clock: the orderings are forced, not timed.
 */
import { describe, expect, it } from 'vitest';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { createAllocRunner, type AllocRunnerOptions } from '../../src/runtime/create-alloc-runner.ts';
import { ServiceRegistry } from '../../src/services/service-registry.ts';
import { recordingAllocHook, untilAborted, type HookCall } from '../../src/testing/hook-recorder.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

const spec: AllocSpec = {
  id: 'a1',
  job: 'web',
  group: 'g',
  type: 'service',
  modifyIndex: 1,
  tasks: [{ name: 'web', driver: 'mock', config: { run_for: '1h' }, killTimeout: 1_000 }],
  update: { minHealthyTime: 10_000, healthyDeadline: 300_000 },
};

/** The agent's way of stopping an allocation (job-registry's tellStop): the stopped spec, then KILL. */
const tellStop = (runner: { send(e: never): void }, modifyIndex: number) => {
  runner.send({ type: 'UPDATE', alloc: { ...spec, desiredStatus: 'stop', modifyIndex } } as never);
  runner.send({ type: 'KILL' } as never);
};

function run(opts: Partial<AllocRunnerOptions> = {}) {
  const clock = new SimulatedClock();
  const runner = createAllocRunner(spec, { clock, builtinHooks: false, seed: 1, ...opts }).start();
  return { clock, runner };
}

describe('an allocation stopped before its health is decided', () => {
  it('told during prerun, with a services catalog (group_services updates before the health_watcher), ends with no verdict', async () => {
    const { clock, runner } = run({ services: new ServiceRegistry() });
    expect(runner.actor.getSnapshot().matches('prerun')).toBe(true);
    tellStop(runner, 2);
    await clock.advance(20_000);
    const end = await runner.done;
    // The kill won: the task died before it ever started, and the update phase was cut short by postrun.
    expect([end.clientStatus, end.taskStates.web!.state, end.taskStates.web!.startedAt]).toEqual(['complete', 'dead', undefined]);
    expect(end.deploymentStatus).toBeUndefined();
  });

  it('told while an earlier update is still in its hooks (the stop queued), ends with no verdict', async () => {
    const log: HookCall[] = [];
    // Last in the update phase, so the health_watcher has taken the earlier update and waits for the next.
    const held = recordingAllocHook('held_update', log, { update: async (_req, abort) => untilAborted(abort) }, ['update']);
    // The catalog puts group_services first in postrun too: the task's death reaches the watcher before its postrun.
    const { clock, runner } = run({ services: new ServiceRegistry(), allocHooks: [held] });
    await clock.advance(1_000);
    expect(runner.getState().taskStates.web!.state).toBe('running');
    runner.send({ type: 'UPDATE', alloc: { ...spec, modifyIndex: 2 } });
    await clock.advance(0);
    expect(log.map((c) => `${c.hook}.${c.method}`)).toEqual(['held_update.update']);
    tellStop(runner, 3);
    await clock.advance(20_000);
    const end = await runner.done;
    expect([end.clientStatus, end.taskStates.web!.state]).toEqual(['complete', 'dead']);
    expect(end.deploymentStatus).toBeUndefined();
  });

  it('still gets the verdict its tasks decided before the stop', async () => {
    const { clock, runner } = run({ services: new ServiceRegistry() });
    await clock.advance(10_000);
    expect(runner.getState().deploymentStatus).toEqual({ healthy: true, timestamp: 10_000 });
    tellStop(runner, 2);
    await clock.advance(20_000);
    expect((await runner.done).deploymentStatus).toEqual({ healthy: true, timestamp: 10_000 });
  });
});
