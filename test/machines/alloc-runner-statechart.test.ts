/**
 * The alloc-runner statechart on its own: `allocRunnerMachine` with a stub alloc-hook actor and task
 * runners whose driver and hook actors are stubs, all through `.provide()`; events sent, `.value` asserted.
 */
import { createActor, fromPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { allocRunnerMachine, type AllocRunnerInput } from '../../machines/alloc-runner.ts';
import type { AllocHookCallInput } from '../../machines/alloc-runner-types.ts';
import { taskRunnerMachine, type DriverCallInput, type DriverShutdownInput } from '../../machines/task-runner.ts';
import type { AllocSpec, ExitResult, TaskSpec } from '../../machines/model.ts';
import { SimulatedClock, settle } from '../../src/testing/simulated-clock.ts';

const main: TaskSpec = { name: 'main', driver: 'stub', config: {} };
const cleanup: TaskSpec = { name: 'cleanup', driver: 'stub', config: {}, lifecycle: { hook: 'poststop' } };
const spec = (tasks: TaskSpec[]): AllocSpec => ({ id: 'a1', job: 'j', group: 'g', type: 'batch', tasks });

/** Task workloads that run until the test exits them (or their kill signal does); alloc hooks that record. */
function stubs(opts: { failHook?: string } = {}) {
  const calls: string[] = [];
  const exits = new Map<string, (r: ExitResult) => void>();
  const taskRunner = taskRunnerMachine.provide({
    actors: {
      hook: fromPromise(async () => ({})),
      driverStart: fromPromise(async ({ input }) => {
        calls.push(`start:${input.task.name}`);
        return {};
      }),
      driverWait: fromPromise<ExitResult, DriverCallInput>(({ input }) => new Promise((resolve) => exits.set(input.task.name, resolve))),
      driverShutdown: fromPromise<void, DriverShutdownInput>(async ({ input }) => exits.get(input.task.name)?.({ exitCode: 130, signal: 2 })),
      driverTerminate: fromPromise<void, DriverCallInput>(async () => {}),
      driverSignal: fromPromise<void, DriverCallInput & { signal: string }>(async () => {}),
    },
  });
  const allocHook = fromPromise<void, AllocHookCallInput>(async ({ input }) => {
    calls.push(`${input.phase}:${input.hook}`);
    if (opts.failHook === `${input.phase}:${input.hook}`) throw new Error('disk full');
  });
  const machine = allocRunnerMachine.provide({ actors: { allocHook, taskRunner } });
  return { machine, calls, exit: (task: string, r: ExitResult) => exits.get(task)!(r) };
}

function start(machine: ReturnType<typeof stubs>['machine'], input: AllocRunnerInput) {
  const actor = createActor(machine, { clock: new SimulatedClock(0), input }).start();
  return { actor, value: () => actor.getSnapshot().value, status: () => actor.getSnapshot().context.clientStatus };
}

describe('allocRunnerMachine with stub actors', () => {
  it('runs its prerun hooks, then opens the gates and runs its tasks', async () => {
    const s = stubs();
    const { actor, value, status } = start(s.machine, { alloc: spec([main]), hooks: { prerun: ['alloc_dir'] } });
    expect(value()).toEqual({ prerun: 'calling' });
    expect(Object.keys(actor.getSnapshot().children)).toEqual(['main', 'prerun:alloc_dir']);
    await settle();
    // No restart, kill or update yet: the three regions of running.busy are not entered.
    expect(value()).toEqual({ running: 'steady' });
    expect(status()).toBe('running');
    expect(s.calls).toEqual(['prerun:alloc_dir', 'start:main']);
  });

  it('runs the poststop task after the main task, then postrun, and waits in terminal', async () => {
    const s = stubs();
    const { value, status } = start(s.machine, { alloc: spec([main, cleanup]), hooks: { postrun: ['alloc_dir'] } });
    await settle();
    expect(s.calls).toEqual(['start:main']);
    s.exit('main', { exitCode: 0, signal: 0 });
    await settle();
    expect(s.calls).toEqual(['start:main', 'start:cleanup']);
    s.exit('cleanup', { exitCode: 0, signal: 0 });
    await settle();
    expect(value()).toBe('terminal');
    expect(status()).toBe('complete');
    expect(s.calls.at(-1)).toBe('postrun:alloc_dir');
  });

  it('fails every task when a prerun hook fails, and still runs postrun', async () => {
    const s = stubs({ failHook: 'prerun:alloc_dir' });
    const { actor, value, status } = start(s.machine, { alloc: spec([main]), hooks: { prerun: ['alloc_dir'], postrun: ['alloc_dir'] } });
    await settle();
    expect(value()).toBe('terminal');
    expect(status()).toBe('failed');
    expect(s.calls).toEqual(['prerun:alloc_dir', 'postrun:alloc_dir']);
    expect(actor.getSnapshot().context.taskStates.main!.events.map((e) => e.type)).toEqual(['Received', 'Setup Failure']);
  });

  it('kills on KILL through its preKill hooks, then is destroyed on DESTROY', async () => {
    const s = stubs();
    const { actor, value } = start(s.machine, { alloc: spec([main]), hooks: { preKill: ['consul'], destroy: ['alloc_dir'] } });
    await settle();
    actor.send({ type: 'KILL' });
    expect(value()).toEqual({ running: { busy: { kill: { preKill: 'calling' }, restarts: 'idle', updates: 'idle' } } });
    await settle();
    expect(value()).toBe('terminal');
    actor.send({ type: 'DESTROY' });
    await settle();
    expect(value()).toBe('destroyed');
    expect(actor.getSnapshot().status).toBe('done');
    expect(s.calls).toEqual(['start:main', 'preKill:consul', 'destroy:alloc_dir']);
  });

  it('takes its tasks\' news in running.steady, enters running.busy\'s regions for a restart or an update and leaves them when it is done', async () => {
    for (const [send, during] of [
      [{ type: 'RESTART' }, { restarts: { preTaskRestart: 'calling' }, kill: 'idle', updates: 'idle' }],
      [{ type: 'UPDATE', alloc: { ...spec([main]), modifyIndex: 2 } }, { restarts: 'idle', kill: 'idle', updates: { updating: { hooks: 'calling' } } }],
    ] as const) {
      const s = stubs();
      const { actor, value } = start(s.machine, { alloc: spec([main]), hooks: { preTaskRestart: ['consul'], update: ['consul'], preKill: ['consul'] } });
      await settle();
      // The main task's news (received, started) came while steady, and left it steady.
      expect(actor.getSnapshot().context.taskStates.main!.state).toBe('running');
      expect(value()).toEqual({ running: 'steady' });
      actor.send(send);
      expect(value()).toEqual({ running: { busy: during } });
      await settle();
      // Done, the regions are idle again: steady, as the three idle regions were.
      expect(value()).toEqual({ running: 'steady' });
      actor.send({ type: 'KILL' });
      // A kill's region never goes back to idle: busy until the tasks are dead.
      expect(value()).toEqual({ running: { busy: { restarts: 'idle', kill: { preKill: 'calling' }, updates: 'idle' } } });
      await settle();
      expect(value()).toBe('terminal');
      actor.stop();
    }
  });

  it('detaches on SHUTDOWN once every task has detached, then runs its shutdown hooks', async () => {
    const s = stubs();
    const { actor, value } = start(s.machine, { alloc: spec([main]), hooks: { shutdown: ['logmon'] } });
    await settle();
    actor.send({ type: 'SHUTDOWN' });
    await settle();
    expect(value()).toBe('detached');
    expect(s.calls).toEqual(['start:main', 'shutdown:logmon']);
  });
});
