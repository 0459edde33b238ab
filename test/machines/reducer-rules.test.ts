/**
 * The alloc-wide task-state reducer and client status, at their edges: a failed leader, a task failing while
 * the alloc is being stopped, failed and running tasks at once. Named after the Nomad rules
 * (alloc_runner.go handleTaskStateUpdates and getClientStatus).
 */
import { describe, expect, it } from 'vitest';
import { createAllocRunner } from '../../src/index.ts';
import { newTaskState, reduceTaskStates } from '../../machines/index.ts';
import type { AllocSpec, RestartPolicy, TaskSpec } from '../../machines/model.ts';
import { SimulatedClock } from '../../src/testing/index.ts';

const noRestart: RestartPolicy = { attempts: 0, interval: 3_600_000, delay: 1_000, mode: 'fail' };

function task(name: string, config: Record<string, unknown>, extra: Partial<TaskSpec> = {}): TaskSpec {
  return { name, driver: 'mock', config, restart: noRestart, ...extra };
}

function start(tasks: TaskSpec[], extra: Partial<AllocSpec> = {}) {
  const clock = new SimulatedClock(0);
  const spec: AllocSpec = { id: 'rules', job: 'j', group: 'g', type: 'service', tasks, ...extra };
  const runner = createAllocRunner(spec, { clock, builtinHooks: false, seed: 1 }).start();
  const types = (name: string) => runner.getState().taskStates[name]!.events.map((e) => e.type);
  return { clock, runner, types };
}

describe("the task-state reducer (Nomad's handleTaskStateUpdates)", () => {
  it('a failed leader kills its followers with Sibling Task Failed, not Leader Task Dead, and the alloc fails', async () => {
    const { clock, runner, types } = start([
      task('leader', { run_for: '1s', exit_code: 1 }, { leader: true }),
      task('follower', { run_for: '1h' }),
    ]);
    await clock.advance(1_000);
    const final = await runner.done;
    expect(types('follower')).toContain('Sibling Task Failed');
    expect(types('follower')).not.toContain('Leader Task Dead');
    expect(final.clientStatus).toBe('failed');
    expect(final.taskStates.follower).toMatchObject({ state: 'dead', failed: false });
  });

  it('when a clean leader death and a sibling failure are seen together, Leader Task Dead wins', () => {
    const dead = (failed: boolean) => ({ ...newTaskState(0), state: 'dead' as const, failed });
    const tasks = [task('bad', {}), task('leader', {}, { leader: true }), task('follower', {})];
    const fx = reduceTaskStates({
      tasks,
      taskStates: { bad: dead(true), leader: dead(false), follower: { ...newTaskState(0), state: 'running' } },
      runComplete: {}, restartPending: {}, killEventSent: false, killing: false, coordinator: 'main', open: ['main'], now: 5,
    });
    expect(fx.killEvent?.type).toBe('Leader Task Dead');
    expect(fx.emitTo).toEqual(['follower']);
    expect(fx.startKill).toBe(true);
  });

  it('the kill event is sent once: a second failure during the kill adds no second Sibling Task Failed', async () => {
    const { clock, runner, types } = start([
      task('a', { run_for: '1s', exit_code: 1 }),
      task('b', { run_for: '2s', exit_code: 1, kill_after: '20s' }, { killTimeout: 10_000 }),
      task('c', { run_for: '1h', kill_after: '20s' }, { killTimeout: 10_000 }),
    ]);
    await clock.advance(2_000);
    expect(types('c').filter((t) => t === 'Sibling Task Failed')).toHaveLength(1);
    await clock.advance(10_000);
    await runner.done;
    expect(runner.getState().clientStatus).toBe('failed');
  });

  it('only sidecars left alive: they are killed with Main Tasks Dead', async () => {
    const { clock, runner, types } = start([
      task('main', { run_for: '1s' }),
      task('proxy', { run_for: '1h' }, { lifecycle: { hook: 'prestart', sidecar: true } }),
    ], { type: 'batch' });
    await clock.advance(1_000);
    await runner.done;
    expect(types('proxy')).toContain('Main Tasks Dead');
    expect(runner.getState().clientStatus).toBe('complete');
  });
});

describe("client status (Nomad's getClientStatus: failed > running > pending > complete)", () => {
  it('failed and running at once: the alloc is failed while a sibling is still being killed', async () => {
    const { clock, runner } = start([
      task('bad', { run_for: '1s', exit_code: 1 }),
      task('slow', { run_for: '1h', kill_after: '20s' }, { killTimeout: 10_000 }),
    ]);
    await clock.advance(1_000);
    const s = runner.getState();
    expect(s.taskStates.bad).toMatchObject({ state: 'dead', failed: true });
    expect(s.taskStates.slow!.state).toBe('running');
    expect(s.clientStatus).toBe('failed');
  });

  it('a task failing while the alloc is being stopped fails the alloc', async () => {
    // KILL starts the group shutdown_delay; the main task fails on its own before it is told to stop.
    const { clock, runner, types } = start([task('main', { run_for: '3s', exit_code: 1 })], { shutdownDelay: 10_000 });
    await clock.advance(1_000);
    runner.send({ type: 'KILL' });
    await clock.advance(2_000);
    expect(types('main')).toContain('Not Restarting');
    expect(runner.getState().clientStatus).toBe('failed');
    await clock.advance(10_000);
    expect((await runner.done).clientStatus).toBe('failed');
  });

  it('a task killed by the alloc stop is not failed: a stopped alloc is complete', async () => {
    const { clock, runner } = start([task('main', { run_for: '1h' })]);
    await clock.advance(1_000);
    runner.send({ type: 'KILL' });
    await clock.advance(1);
    const final = await runner.done;
    expect(final.taskStates.main).toMatchObject({ state: 'dead', failed: false });
    expect(final.clientStatus).toBe('complete');
  });

  it('a failed poststop task fails an alloc whose main tasks completed', async () => {
    const { clock, runner } = start([
      task('main', { run_for: '1s' }),
      task('cleanup', { run_for: '1s', exit_code: 1 }, { lifecycle: { hook: 'poststop' } }),
    ], { type: 'batch' });
    await clock.advance(1_000);
    expect(runner.getState().clientStatus).toBe('running');
    await clock.advance(1_000);
    expect((await runner.done).clientStatus).toBe('failed');
  });

  it('pending while nothing has started, running once anything runs', async () => {
    const { clock, runner } = start([
      task('init', { run_for: '5s' }, { lifecycle: { hook: 'prestart' } }),
      task('main', { run_for: '1h' }),
    ]);
    expect(runner.getState().clientStatus).toBe('pending');
    await clock.advance(1);
    expect(runner.getState().taskStates.main!.state).toBe('pending');
    expect(runner.getState().clientStatus).toBe('running');
  });
});
