/**
 * Deployment health (Nomad's health_hook.go and allochealth tracker): the health_watcher hook on a real
 * alloc runner with the mock driver, on the simulated clock.
 */
import { describe, expect, it } from 'vitest';
import { ALLOC_UNHEALTHY, type HealthReport, type UpdateStrategy } from '../../src/hooks/health-hook.ts';
import type { AllocSpec, TaskSpec } from '../../src/jobspec/types.ts';
import { createAllocRunner, type AllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { task } from './mock-task.ts';

const UPDATE: UpdateStrategy = { minHealthyTime: 10_000, healthyDeadline: 300_000 };

function allocOf(tasks: TaskSpec[], extra: Partial<AllocSpec> = {}): AllocSpec {
  return {
    id: 'a1',
    job: 'web',
    group: 'g',
    type: 'service',
    restart: { attempts: 2, interval: 1_800_000, delay: 1_000, mode: 'fail' },
    tasks,
    ...extra,
  };
}


/**
 * Starts the allocation with its update block through createAllocRunner; `reports` reads the public state:
 * the deployment status and the Alloc Unhealthy event of each task.
 */
function runWithHealth(spec: AllocSpec, update: UpdateStrategy = UPDATE) {
  const clock = new SimulatedClock();
  const runner: AllocRunner = createAllocRunner({ ...spec, update }, { clock, builtinHooks: false, seed: 1 }).start();
  /** The verdict as the public state shows it, as a list: empty until there is one. */
  const reports = (): HealthReport[] => {
    const state = runner.getState();
    if (!state.deploymentStatus) return [];
    const taskEvents: HealthReport['taskEvents'] = {};
    for (const [name, ts] of Object.entries(state.taskStates)) {
      const ev = ts.events.find((e) => e.type === ALLOC_UNHEALTHY);
      if (ev) taskEvents[name] = ev;
    }
    return [{ status: state.deploymentStatus, taskEvents }];
  };
  return { clock, runner, reports };
}

/** An Alloc Unhealthy event as the runner records it. */
const unhealthy = (message: string, time: number) => ({ type: 'Alloc Unhealthy', time, message, displayMessage: message });

describe('deployment health: the health_watcher hook', () => {
  it('TestHealthHook_SetHealth_healthy: healthy once every task has run for min_healthy_time, with no task events', async () => {
    const { clock, runner, reports } = runWithHealth(allocOf([task('web', { run_for: '1h' })]));
    await clock.advance(9_999);
    expect(reports()).toEqual([]);
    await clock.advance(1);
    expect(reports()).toEqual([{ status: { healthy: true, timestamp: 10_000 }, taskEvents: {} }]);
    runner.send({ type: 'KILL' });
    await clock.advance(5_000);
    await runner.done;
    expect(reports()).toHaveLength(1);
  });

  it('TestTracker_Healthy_IfBothTasksAndConsulChecksAreHealthy (task states): the wait starts when the last task starts', async () => {
    const { clock, reports } = runWithHealth(
      allocOf([task('web', { run_for: '1h' }), task('cache', { run_for: '1h', start_block_for: '4s' })]),
    );
    await clock.advance(10_000);
    expect(reports()).toEqual([]);
    await clock.advance(4_000);
    expect(reports().map((r) => r.status)).toEqual([{ healthy: true, timestamp: 14_000 }]);
  });

  it('TestTracker (task restart): a restart before min_healthy_time restarts the wait from the new start', async () => {
    const { clock, runner, reports } = runWithHealth(allocOf([task('web', { run_for: '1h' })]));
    await clock.advance(4_000);
    runner.send({ type: 'RESTART', task: 'web' });
    await clock.advance(6_000);
    expect(reports()).toEqual([]);
    const restartedAt = runner.getState().taskStates.web!.startedAt!;
    expect(restartedAt).toBeGreaterThanOrEqual(4_000);
    await clock.advance(restartedAt + 10_000 - clock.now() - 1);
    expect(reports()).toEqual([]);
    await clock.advance(1);
    expect(reports().map((r) => r.status)).toEqual([{ healthy: true, timestamp: restartedAt + 10_000 }]);
  });

  it('TestHealthHook_SetHealth_unhealthy (failed task): a task that fails makes the allocation unhealthy at once', async () => {
    const spec = allocOf([task('web', { run_for: '2s', exit_code: 1 }), task('cache', { run_for: '1h' })], {
      restart: { attempts: 0, interval: 1_800_000, delay: 1_000, mode: 'fail' },
    });
    const { clock, reports } = runWithHealth(spec);
    await clock.advance(2_000);
    expect(reports()).toEqual([
      // Judged at the deadline, as Nomad does: the young but running cache task is not blamed.
      { status: { healthy: false, timestamp: 2_000 }, taskEvents: { web: unhealthy('Unhealthy because of failed task', 2_000) } },
    ]);
  });

  it('TestTracker_Checks_Unhealthy (deadline): not healthy by healthy_deadline is unhealthy, naming the task that held it back', async () => {
    // The prestart task holds the main task back until 5s, so it cannot have run 5s by the 8s deadline.
    const { clock, reports } = runWithHealth(
      allocOf([task('init', { run_for: '5s' }, { lifecycle: { hook: 'prestart' } }), task('web', { run_for: '1h' })]),
      { minHealthyTime: 5_000, healthyDeadline: 8_000 },
    );
    await clock.advance(7_999);
    expect(reports()).toEqual([]);
    await clock.advance(1);
    expect(reports()).toEqual([
      {
        status: { healthy: false, timestamp: 8_000 },
        taskEvents: { web: unhealthy('Task not running for min_healthy_time of 5s by healthy_deadline of 8s', 8_000) },
      },
    ]);
    await clock.advance(10_000);
    expect(reports()).toHaveLength(1);
  });

  it('TestTracker_ConsulChecks_PendingPostStop_Healthy and _Succeeded_PostStart_Healthy: poststop and finished poststart tasks do not hold health back', async () => {
    const { clock, reports } = runWithHealth(
      allocOf([
        task('web', { run_for: '1h' }),
        task('warm', { run_for: '1s' }, { lifecycle: { hook: 'poststart' } }),
        task('flush', { run_for: '1s' }, { lifecycle: { hook: 'poststop' } }),
      ]),
    );
    await clock.advance(10_000);
    expect(reports().map((r) => r.status)).toEqual([{ healthy: true, timestamp: 10_000 }]);
  });

  it('a prestart task that finished does not hold health back: the wait starts when the main task starts', async () => {
    const { clock, reports } = runWithHealth(
      allocOf([task('init', { run_for: '1s' }, { lifecycle: { hook: 'prestart' } }), task('web', { run_for: '1h' })]),
    );
    await clock.advance(10_999);
    expect(reports()).toEqual([]);
    await clock.advance(1);
    expect(reports().map((r) => r.status)).toEqual([{ healthy: true, timestamp: 11_000 }]);
  });

  it('TestHealthHook_BatchNoop: a batch allocation gets no health watcher, even with an update block', async () => {
    const { clock, runner, reports } = runWithHealth(allocOf([task('job', { run_for: '30s' })], { type: 'batch' }));
    await clock.advance(60_000);
    expect(reports()).toEqual([]);
    expect((await runner.done).deploymentStatus).toBeUndefined();
  });

  it('the final AllocState that done resolves with carries the deployment status', async () => {
    const { clock, runner } = runWithHealth(allocOf([task('web', { run_for: '1h' })]));
    await clock.advance(10_000);
    runner.send({ type: 'KILL' });
    await clock.advance(5_000);
    expect((await runner.done).deploymentStatus).toEqual({ healthy: true, timestamp: 10_000 });
  });

  it('manual health_check runs no watcher', async () => {
    const { clock, reports } = runWithHealth(allocOf([task('web', { run_for: '1h' })]), { ...UPDATE, healthCheck: 'manual' });
    await clock.advance(600_000);
    expect(reports()).toEqual([]);
  });

  it('TestHealthHook (markAllocStopped): an update that stops the allocation stops watching without a verdict', async () => {
    const spec = allocOf([task('web', { run_for: '1h' })]);
    const { clock, runner, reports } = runWithHealth(spec);
    await clock.advance(5_000);
    runner.send({ type: 'UPDATE', alloc: { ...spec, desiredStatus: 'stop', modifyIndex: 2 } });
    await clock.advance(400_000);
    expect(reports()).toEqual([]);
  });
});
