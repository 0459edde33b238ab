/**
 * The deployment health verdict's two edges, on a real alloc runner with the mock driver and the simulated clock.
 * A kill the runner is told with no stop from the server (the embedder's, the inspector's, Ctrl-C of `allocrun
 * run`; a destroy) is a stop, not a failure: Nomad gives a stopped allocation no health (its health hook's
 * watchHealth returns without SetHealth once the allocation is stopped or the hook is shut down), so before
 * health is decided it ends with no verdict, while a kill the runner starts for a failure (a failed task, a dead
 * leader) still ends unhealthy. And health is per deployment: Nomad's scheduler clears an allocation's
 * DeploymentStatus when an in-place update moves it to a new deployment, and its health hook's Update watches
 * anew; an update within the same deployment keeps the verdict.
 */
import { describe, expect, it } from 'vitest';
import type { AllocSpec, TaskSpec } from '../../src/jobspec/types.ts';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

const web: TaskSpec = { name: 'web', driver: 'mock', config: { run_for: '1h' }, killTimeout: 1_000 };
/** In deployment d1: healthy once its tasks ran 10 s, unhealthy if not by 300 s. */
const spec: AllocSpec = { id: 'a1', job: 'web', group: 'g', type: 'service', modifyIndex: 1, deploymentId: 'd1', tasks: [web], update: { minHealthyTime: 10_000, healthyDeadline: 300_000 } };

function run(s: AllocSpec = spec) {
  const clock = new SimulatedClock();
  const runner = createAllocRunner(s, { clock, builtinHooks: false, seed: 1 }).start();
  return { clock, runner };
}

/** Allocations in which the watch hears a killed task's death before the postrun hooks end it. */
const shapes: [string, TaskSpec[]][] = [
  ['a task slow to die', [web, { name: 'slow', driver: 'mock', config: { run_for: '1h', kill_after: '2s' }, killTimeout: 5_000 }]],
  ['a poststop task', [web, { name: 'cleanup', driver: 'mock', config: { run_for: '2s' }, lifecycle: { hook: 'poststop' } }]],
];

describe('a kill the runner is told, with no stop from the server', () => {
  it.each(shapes.flatMap(([shape, tasks]) => (['KILL', 'DESTROY'] as const).map((type) => [type, shape, tasks] as const)))(
    '%s before health is decided, in an allocation with %s, ends with no verdict',
    async (type, _shape, tasks) => {
      const { clock, runner } = run({ ...spec, tasks });
      await clock.advance(5_000);
      expect(runner.getState().taskStates.web!.state).toBe('running');
      runner.send({ type });
      await clock.advance(400_000);
      const end = await runner.done;
      expect([end.clientStatus, end.taskStates.web!.state]).toEqual(['complete', 'dead']);
      expect(end.deploymentStatus).toBeUndefined();
    },
  );

  it('KILL during prerun ends with no verdict', async () => {
    const { clock, runner } = run({ ...spec, tasks: shapes[1]![1] });
    expect(runner.actor.getSnapshot().matches('prerun')).toBe(true);
    runner.send({ type: 'KILL' });
    await clock.advance(400_000);
    expect((await runner.done).deploymentStatus).toBeUndefined();
  });

  it('KILL after the verdict keeps it', async () => {
    const { clock, runner } = run({ ...spec, tasks: shapes[0]![1] });
    await clock.advance(10_000);
    runner.send({ type: 'KILL' });
    await clock.advance(20_000);
    expect((await runner.done).deploymentStatus).toEqual({ healthy: true, timestamp: 10_000 });
  });
});

describe('a kill the runner starts for a failure', () => {
  it('a task that failed with no restarts left ends unhealthy', async () => {
    const failing: TaskSpec = { name: 'worker', driver: 'mock', config: { run_for: '2s', exit_code: 1 }, killTimeout: 1_000 };
    const { clock, runner } = run({ ...spec, tasks: [web, failing], restart: { attempts: 0, interval: 60_000, delay: 1_000, mode: 'fail' } });
    await clock.advance(400_000);
    const end = await runner.done;
    expect([end.clientStatus, end.deploymentStatus?.healthy]).toEqual(['failed', false]);
  });

  it('a leader that died ends unhealthy', async () => {
    const leader: TaskSpec = { name: 'leader', driver: 'mock', config: { run_for: '2s' }, leader: true, killTimeout: 1_000 };
    const { clock, runner } = run({ ...spec, tasks: [leader, web], restart: { attempts: 0, interval: 60_000, delay: 1_000, mode: 'fail' } });
    await clock.advance(400_000);
    const end = await runner.done;
    expect(end.deploymentStatus?.healthy).toBe(false);
  });
});

describe('an in-place update', () => {
  it('to another deployment clears the verdict and watches anew, from the update', async () => {
    const { clock, runner } = run();
    await clock.advance(10_000);
    expect(runner.getState().deploymentStatus).toEqual({ healthy: true, timestamp: 10_000 });
    await clock.advance(5_000);
    runner.send({ type: 'UPDATE', alloc: { ...spec, modifyIndex: 2, deploymentId: 'd2', update: { minHealthyTime: 20_000, healthyDeadline: 300_000 } } });
    await clock.advance(0);
    expect(runner.getState().deploymentStatus).toBeUndefined();
    await clock.advance(19_999);
    expect(runner.getState().deploymentStatus).toBeUndefined();
    await clock.advance(1);
    expect(runner.getState().deploymentStatus).toEqual({ healthy: true, timestamp: 35_000 });
  });

  it('in the same deployment keeps the verdict', async () => {
    const { clock, runner } = run();
    await clock.advance(10_000);
    runner.send({ type: 'UPDATE', alloc: { ...spec, modifyIndex: 2, tasks: [{ ...web, killTimeout: 2_000 }] } });
    await clock.advance(400_000);
    expect(runner.getState().deploymentStatus).toEqual({ healthy: true, timestamp: 10_000 });
    runner.send({ type: 'KILL' });
    await clock.advance(20_000);
    await runner.done;
  });
});
