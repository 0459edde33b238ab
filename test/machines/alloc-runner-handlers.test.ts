/**
 * Each of the alloc runner's transitions in the state where it applies (machines/alloc-runner.ts): KILL,
 * DESTROY, UPDATE and RESTART during prerun; the restarts, kill and updates regions of `running`; SHUTDOWN
 * from prerun, running and terminal, and a second SHUTDOWN while detaching. Driven by events on the mock
 * driver and a SimulatedClock; observed through task states, hook calls and the statechart's value.
 */
import { describe, expect, it } from 'vitest';
import { createActor, fromPromise } from 'xstate';
import { createAllocRunner, type AllocRunnerOptions, type RunnerRejection } from '../../src/runtime/create-alloc-runner.ts';
import { allocRunnerMachine } from '../../machines/alloc-runner.ts';
import type { AllocHookCallInput } from '../../machines/alloc-runner-types.ts';
import { taskRunnerMachine, type DriverCallInput, type DriverShutdownInput } from '../../machines/task-runner.ts';
import type { AllocSpec, ExitResult, TaskSpec } from '../../machines/model.ts';
import { recordingAllocHook, recordingTaskHook, type HookCall } from '../../src/testing/hook-recorder.ts';
import { SimulatedClock, settle } from '../../src/testing/simulated-clock.ts';

const noRestart = { attempts: 0, interval: 3_600_000, delay: 1_000, mode: 'fail' as const };

function task(name: string, config: Record<string, unknown>, extra: Partial<TaskSpec> = {}): TaskSpec {
  return { name, driver: 'mock', config, restart: noRestart, ...extra };
}

function alloc(tasks: TaskSpec[], extra: Partial<AllocSpec> = {}): AllocSpec {
  return { id: 'a1', job: 'example', group: 'web', type: 'service', tasks, ...extra };
}

/** A gate a hook waits on until the test opens it. */
function gate() {
  let open!: () => void;
  const p = new Promise<void>((r) => (open = r));
  return { wait: () => p, open: () => open() };
}

/** A started runner on a simulated clock; alloc hooks record into `log`, task hooks (one per task, named after it) too. */
function setup(spec: AllocSpec, opts: AllocRunnerOptions & { allocImpl?: Parameters<typeof recordingAllocHook>[2]; taskImpl?: Parameters<typeof recordingTaskHook>[2] } = {}) {
  const clock = new SimulatedClock(0);
  const log: HookCall[] = [];
  const { allocImpl, taskImpl, ...rest } = opts;
  const runner = createAllocRunner(spec, {
    clock,
    seed: 3,
    builtinHooks: false,
    allocHooks: [recordingAllocHook('rec', log, allocImpl)],
    taskHooks: (t) => [recordingTaskHook(`task:${t.name}`, log, taskImpl, ['update', 'stop', 'shutdown'])],
    ...rest,
  });
  const rejections: RunnerRejection[] = [];
  runner.rejections$.subscribe((r) => rejections.push(r));
  runner.start();
  const st = (name: string) => runner.getState().taskStates[name]!;
  const types = (name: string) => st(name).events.map((e) => e.type);
  const calls = () => log.map((c) => `${c.hook}.${c.method}`);
  const value = () => runner.actor.getSnapshot().value;
  return { clock, runner, log, calls, st, types, value, rejections };
}

describe('prerun: commands that arrive while the alloc hooks set the allocation up', () => {
  it('applies an UPDATE sent during prerun once the alloc runs: update hooks with the new alloc, then each task', async () => {
    const g = gate();
    const base = alloc([task('main', { run_for: '1h' })], { modifyIndex: 1 });
    const r = setup(base, { allocImpl: { prerun: g.wait } });
    await r.clock.advance(1);
    r.runner.send({ type: 'UPDATE', alloc: { ...base, modifyIndex: 2, meta: { v: 'new' } } });
    await r.clock.advance(1);
    expect(r.calls()).toEqual(['rec.prerun']);
    g.open();
    await r.clock.advance(1);
    expect(r.calls()).toEqual(['rec.prerun', 'rec.update', 'task:main.update']);
    expect((r.log[1]!.req as { alloc: AllocSpec }).alloc.meta).toEqual({ v: 'new' });
    expect(r.runner.actor.getSnapshot().context.alloc.modifyIndex).toBe(2);
    expect(r.st('main').state).toBe('running');
  });

  it('refuses a restart of the whole alloc during prerun with ErrTaskNotRunning: none of its tasks is running yet', async () => {
    const g = gate();
    const r = setup(alloc([task('main', { run_for: '1h' })]), { allocImpl: { prerun: g.wait } });
    await r.clock.advance(1);
    r.runner.send({ type: 'RESTART' });
    expect(r.rejections).toEqual([
      { command: 'RESTART', code: 'ErrTaskNotRunning', message: 'allocation a1 is still being set up: none of its tasks is running', time: 1 },
    ]);
    expect(r.runner.actor.getSnapshot().context.rejections).toEqual(r.rejections);
    g.open();
    await r.clock.advance(1);
    expect(r.calls()).not.toContain('rec.preTaskRestart');
    expect(r.st('main').restarts).toBe(0);
  });

  it("passes a one-task restart during prerun to the task's runner, which refuses it: the task is not running", async () => {
    const g = gate();
    const r = setup(alloc([task('main', { run_for: '1h' })]), { allocImpl: { prerun: g.wait } });
    await r.clock.advance(1);
    r.runner.send({ type: 'RESTART', task: 'main' });
    expect(r.rejections.map((x) => [x.command, x.code])).toEqual([['RESTART', 'ErrTaskNotRunning']]);
    expect(r.runner.actor.getSnapshot().context.rejections).toEqual([]);
  });

  it('refuses a restart of an unknown task during prerun with ErrUnknownTask', async () => {
    const g = gate();
    const r = setup(alloc([task('main', { run_for: '1h' })]), { allocImpl: { prerun: g.wait } });
    await r.clock.advance(1);
    r.runner.send({ type: 'RESTART', task: 'nope' });
    expect(r.rejections).toMatchObject([{ command: 'RESTART', code: 'ErrUnknownTask', message: 'no task named "nope" in allocation a1' }]);
  });

  it('kills the tasks before they start when KILL comes during prerun: preKill and postrun run, no task starts', async () => {
    const g = gate();
    const r = setup(alloc([task('main', { run_for: '1h' })]), { allocImpl: { prerun: g.wait } });
    await r.clock.advance(1);
    r.runner.send({ type: 'KILL' });
    g.open();
    await r.clock.advance(1);
    const final = await r.runner.done;
    expect(r.types('main')).not.toContain('Started');
    expect(final.taskStates.main).toMatchObject({ state: 'dead', failed: false });
    expect(r.calls()).toEqual(['rec.prerun', 'rec.preKill', 'task:main.stop', 'rec.postrun']);
    expect(r.value()).toBe('terminal');
  });

  it('destroys the alloc after postrun when DESTROY comes during prerun: the tasks never start', async () => {
    const g = gate();
    const r = setup(alloc([task('main', { run_for: '1h' })]), { allocImpl: { prerun: g.wait } });
    await r.clock.advance(1);
    r.runner.send({ type: 'DESTROY' });
    expect(r.value()).toEqual({ prerun: 'calling' });
    g.open();
    await r.clock.advance(1);
    expect(r.value()).toBe('destroyed');
    expect(r.types('main')).not.toContain('Started');
    expect(r.calls()).toEqual(['rec.prerun', 'rec.preKill', 'task:main.stop', 'rec.postrun', 'rec.destroy']);
  });
});

describe('running: the restarts region', () => {
  it('returns to idle after a restart, so a second RESTART runs the preTaskRestart hooks again', async () => {
    const r = setup(alloc([task('main', { run_for: '1h' })]));
    await r.clock.advance(1);
    r.runner.send({ type: 'RESTART' });
    await r.clock.advance(1);
    // The restart done, its region idle again: running.steady, as all three regions idle were.
    expect(r.runner.actor.getSnapshot().matches({ running: 'steady' })).toBe(true);
    r.runner.send({ type: 'RESTART' });
    await r.clock.advance(1);
    expect(r.rejections).toEqual([]);
    expect(r.calls().filter((c) => c === 'rec.preTaskRestart')).toHaveLength(2);
    expect(r.st('main')).toMatchObject({ state: 'running', restarts: 2 });
  });

  it('refuses the queued restart with ErrAllocNotRunning when the alloc is killed while its preTaskRestart hooks run', async () => {
    const restartHook = gate();
    const preKill = gate();
    const r = setup(alloc([task('main', { run_for: '1h' })]), { allocImpl: { preTaskRestart: restartHook.wait, preKill: preKill.wait } });
    await r.clock.advance(1);
    r.runner.send({ type: 'RESTART' });
    await r.clock.advance(1);
    r.runner.send({ type: 'KILL' });
    restartHook.open();
    await r.clock.advance(1);
    expect(r.rejections).toMatchObject([
      { command: 'RESTART', code: 'ErrAllocNotRunning', message: 'restart of an alloc that should not run: allocation a1 is stopping' },
    ]);
    expect(r.types('main')).not.toContain('Restart Signaled');
    preKill.open();
    await r.clock.advance(1);
    expect((await r.runner.done).taskStates.main!.restarts).toBe(0);
  });

  it('sends RestartRunning only to running tasks: a finished prestart task is not asked, so nothing refuses', async () => {
    const r = setup(alloc([task('init', { run_for: '1s' }, { lifecycle: { hook: 'prestart' } }), task('main', { run_for: '1h' })]));
    await r.clock.advance(1_001);
    expect(r.st('init').state).toBe('dead');
    r.runner.send({ type: 'RESTART' });
    await r.clock.advance(1);
    expect(r.rejections).toEqual([]);
    expect(r.st('main').restarts).toBe(1);
    expect(r.types('init')).not.toContain('Restart Signaled');
  });

  it('holds the main task back after RestartAll until the dead prestart task has run again', async () => {
    const r = setup(alloc([task('init', { run_for: '1s' }, { lifecycle: { hook: 'prestart' } }), task('main', { run_for: '1h' })]));
    await r.clock.advance(1_001);
    r.runner.send({ type: 'RESTART', all: true });
    await r.clock.advance(1);
    expect(r.st('init').state).toBe('running');
    expect(r.st('main').state).toBe('pending');
    // The prestart task has shown its restart (it runs): the alloc no longer counts it as pending a restart.
    expect(r.runner.actor.getSnapshot().context.taskFlags.restartPending).toEqual({});
    await r.clock.advance(500);
    expect(r.st('main').state).toBe('pending');
    await r.clock.advance(1_000);
    expect(r.st('main').state).toBe('running');
    expect(r.rejections).toEqual([]);
  });

  it('refuses a restart of the whole alloc once its tasks were released (all dead, a poststop task running): ErrTaskRunComplete, nothing runs again', async () => {
    const r = setup(alloc([task('main', { run_for: '1s' }), task('cleanup', { run_for: '1h' }, { lifecycle: { hook: 'poststop' } })]));
    await r.clock.advance(1_001);
    await r.clock.advance(10);
    expect(r.runner.actor.getSnapshot().context.taskFlags.released).toEqual({ main: true });
    r.runner.send({ type: 'RESTART', all: true });
    await r.clock.advance(1_100);
    expect(r.rejections).toMatchObject([{ command: 'RESTART', code: 'ErrTaskRunComplete', message: 'cannot restart task "main": the task has finished and will not run again' }]);
    expect(r.st('main').state).toBe('dead');
    expect(r.types('main').filter((t) => t === 'Started')).toHaveLength(1);
    // The refusal (a new rejection) ends the restart the alloc waited for: main is not live again.
    expect(r.runner.actor.getSnapshot().context.taskFlags.restartPending).toEqual({});
    expect(r.runner.actor.getSnapshot().context.taskFlags.released).toEqual({ main: true });
  });

  it('refuses a second restart while one is under way with ErrRestartInProgress, saying so', async () => {
    const g = gate();
    const r = setup(alloc([task('main', { run_for: '1h' })]), { allocImpl: { preTaskRestart: g.wait } });
    await r.clock.advance(1);
    r.runner.send({ type: 'RESTART' });
    r.runner.send({ type: 'RESTART', all: true });
    expect(r.rejections).toMatchObject([
      { command: 'RESTART', code: 'ErrRestartInProgress', message: 'a restart of allocation a1 is already under way' },
    ]);
  });
});

describe('running: signals', () => {
  it('signals only the running tasks on SIGNAL without a task: a finished prestart task is not asked, so nothing refuses', async () => {
    const r = setup(alloc([task('init', { run_for: '1s' }, { lifecycle: { hook: 'prestart' } }), task('main', { run_for: '1h' })]));
    await r.clock.advance(1_001);
    r.runner.send({ type: 'SIGNAL', signal: 'SIGHUP' });
    await r.clock.advance(1);
    expect(r.rejections).toEqual([]);
    expect(r.types('main')).toContain('Signaling');
  });

  it('signals only the named task on SIGNAL { task }', async () => {
    const r = setup(alloc([task('a', { run_for: '1h' }), task('b', { run_for: '1h' })]));
    await r.clock.advance(1);
    // With the Signaling event to record (a template's reason), forwarded to the task as given.
    r.runner.send({ type: 'SIGNAL', task: 'a', signal: 'SIGHUP', event: { type: 'Signaling', time: r.clock.now(), displayMessage: 'Template re-rendered', details: { signal: 'SIGHUP' } } });
    await r.clock.advance(1);
    expect(r.types('a')).toContain('Signaling');
    expect(r.runner.getState().taskStates.a!.events.at(-1)).toMatchObject({ type: 'Signaling', displayMessage: 'Template re-rendered' });
    expect(r.types('b')).not.toContain('Signaling');
  });

  it('refuses a signal to an unknown task with ErrUnknownTask', async () => {
    const r = setup(alloc([task('main', { run_for: '1h' })]));
    await r.clock.advance(1);
    r.runner.send({ type: 'SIGNAL', task: 'nope', signal: 'SIGHUP' });
    expect(r.rejections).toMatchObject([{ command: 'SIGNAL', code: 'ErrUnknownTask', message: 'no task named "nope" in allocation a1' }]);
    expect(r.runner.actor.getSnapshot().context.rejections).toHaveLength(1);
  });
});

describe('running: the kill region', () => {
  it('kills the leader, then the main tasks, then the sidecars, each step once the one before is dead', async () => {
    const spec = alloc([
      task('side', { run_for: '1h', kill_after: '1s' }, { lifecycle: { hook: 'prestart', sidecar: true }, killTimeout: 10_000 }),
      task('main', { run_for: '1h', kill_after: '1s' }, { killTimeout: 10_000 }),
      task('leader', { run_for: '1h', kill_after: '1s' }, { leader: true, killTimeout: 10_000 }),
    ]);
    const r = setup(spec);
    await r.clock.advance(1);
    r.runner.send({ type: 'KILL' });
    await r.clock.advance(1);
    expect(r.runner.actor.getSnapshot().matches({ running: { busy: { kill: 'leader' } } })).toBe(true);
    expect(r.types('main')).not.toContain('Killing');
    await r.clock.advance(1_000);
    expect(r.st('leader').state).toBe('dead');
    expect(r.runner.actor.getSnapshot().matches({ running: { busy: { kill: 'mains' } } })).toBe(true);
    expect(r.types('side')).not.toContain('Killing');
    await r.clock.advance(1_000);
    expect(r.st('main').state).toBe('dead');
    expect(r.runner.actor.getSnapshot().matches({ running: { busy: { kill: 'sidecars' } } })).toBe(true);
    await r.clock.advance(1_000);
    expect((await r.runner.done).clientStatus).toBe('complete');
    expect(r.st('leader').finishedAt!).toBeLessThan(r.st('main').finishedAt!);
    expect(r.st('main').finishedAt!).toBeLessThan(r.st('side').finishedAt!);
  });

  it('ends the ordered kill once the sidecars are dead, while a poststop task still runs', async () => {
    const spec = alloc([
      task('side', { run_for: '1h' }, { lifecycle: { hook: 'prestart', sidecar: true } }),
      task('main', { run_for: '1h' }),
      task('cleanup', { run_for: '10s' }, { lifecycle: { hook: 'poststop' } }),
    ]);
    const r = setup(spec);
    await r.clock.advance(1);
    r.runner.send({ type: 'KILL' });
    await r.clock.advance(1);
    expect(r.st('side').state).toBe('dead');
    expect(r.st('cleanup').state).toBe('running');
    expect(r.value()).toEqual({ running: { busy: { kill: 'done', restarts: 'idle', updates: 'idle' } } });
  });

  it('waits out the group shutdown_delay in waitingShutdownDelay, after the preKill hooks', async () => {
    const r = setup(alloc([task('main', { run_for: '1h' })], { shutdownDelay: 5_000 }));
    await r.clock.advance(1);
    r.runner.send({ type: 'KILL' });
    await r.clock.advance(1);
    expect(r.calls()).toEqual(['rec.prerun', 'rec.preKill']);
    expect(r.runner.actor.getSnapshot().matches({ running: { busy: { kill: 'waitingShutdownDelay' } } })).toBe(true);
    expect(r.runner.actor.getSnapshot().children.groupShutdownDelay).toBeDefined();
    await r.clock.advance(4_998);
    expect(r.st('main').state).toBe('running');
    await r.clock.advance(1);
    expect(r.st('main').state).toBe('dead');
  });
});

describe('running: the updates region', () => {
  it('runs the alloc update hooks, then sends the new alloc to every task runner', async () => {
    const base = alloc([task('a', { run_for: '1h' }), task('b', { run_for: '1h' })]);
    const r = setup(base);
    await r.clock.advance(1);
    r.runner.send({ type: 'UPDATE', alloc: { ...base, modifyIndex: 7, meta: { v: '7' } } });
    await r.clock.advance(1);
    expect(r.calls().slice(1)).toEqual(['rec.update', 'task:a.update', 'task:b.update']);
    for (const c of r.log.slice(2)) expect((c.req as { alloc: AllocSpec }).alloc.meta).toEqual({ v: '7' });
  });

  it('sends the update to a task dropped from the alloc too, which kills itself and runs its stop hooks', async () => {
    const base = alloc([task('keep', { run_for: '1h' }), task('gone', { run_for: '1h' })]);
    const r = setup(base);
    await r.clock.advance(1);
    r.runner.send({ type: 'UPDATE', alloc: { ...base, modifyIndex: 2, tasks: [base.tasks[0]!] } });
    await r.clock.advance(1_000);
    expect(r.calls()).toContain('task:gone.stop');
    expect(r.calls()).not.toContain('task:keep.stop');
    expect(r.st('keep').state).toBe('running');
  });

  it('applies an update newer than the AllocModifyIndex the alloc runs', async () => {
    const base = alloc([task('main', { run_for: '1h' })], { modifyIndex: 1 });
    const r = setup(base);
    await r.clock.advance(1);
    r.runner.send({ type: 'UPDATE', alloc: { ...base, modifyIndex: 2 } });
    await r.clock.advance(1);
    expect(r.calls()).toContain('rec.update');
    expect(r.runner.actor.getSnapshot().context.alloc.modifyIndex).toBe(2);
  });

  it('keeps the last of several queued updates that carry no modify index', async () => {
    const g = gate();
    const base = alloc([task('main', { run_for: '1h' })]);
    let first = true;
    const r = setup(base, { allocImpl: { update: () => (first ? ((first = false), g.wait()) : Promise.resolve()) } });
    await r.clock.advance(1);
    for (const v of ['1', '2', '3']) r.runner.send({ type: 'UPDATE', alloc: { ...base, meta: { v } } });
    await r.clock.advance(1);
    g.open();
    await r.clock.advance(1);
    const seen = r.log.filter((c) => c.method === 'update' && c.hook === 'rec').map((c) => (c.req as { alloc: AllocSpec }).alloc.meta?.v);
    expect(seen).toEqual(['1', '3']);
  });

  it('kills the tasks through the preKill hooks after the update hooks when an update stops the alloc', async () => {
    const base = alloc([task('main', { run_for: '1h' })]);
    const r = setup(base);
    await r.clock.advance(1);
    r.runner.send({ type: 'UPDATE', alloc: { ...base, desiredStatus: 'stop', modifyIndex: 5 } });
    await r.clock.advance(1);
    await r.runner.done;
    expect(r.calls().filter((c) => c.startsWith('rec.'))).toEqual(['rec.prerun', 'rec.update', 'rec.preKill', 'rec.postrun']);
    expect(r.st('main')).toMatchObject({ state: 'dead', failed: false });
  });
});

describe('SHUTDOWN: the tasks detach, then the shutdown hooks run', () => {
  it('waits for every task to detach before the shutdown hooks run', async () => {
    const g = gate();
    const r = setup(alloc([task('fast', { run_for: '1h' }), task('slow', { run_for: '1h' })]), {
      taskImpl: { shutdown: async (req) => ((req as { task: { name: string } }).task.name === 'slow' ? g.wait() : undefined) },
    });
    await r.clock.advance(1);
    r.runner.send({ type: 'SHUTDOWN' });
    await r.clock.advance(1);
    expect(r.value()).toEqual({ detaching: 'tasks' });
    expect(r.calls()).not.toContain('rec.shutdown');
    g.open();
    await r.clock.advance(1);
    expect(r.value()).toBe('detached');
    expect(r.calls().slice(1)).toEqual(['task:fast.shutdown', 'task:slow.shutdown', 'rec.shutdown']);
    expect(r.st('fast').state).toBe('running');
    expect(r.st('slow').state).toBe('running');
  });

  it('ignores a second SHUTDOWN while detaching: the shutdown hook is called once and not aborted', async () => {
    const g = gate();
    const r = setup(alloc([task('main', { run_for: '1h' })]), { allocImpl: { shutdown: g.wait } });
    await r.clock.advance(1);
    r.runner.send({ type: 'SHUTDOWN' });
    await r.clock.advance(1);
    expect(r.value()).toEqual({ detaching: { hooks: 'calling' } });
    r.runner.send({ type: 'SHUTDOWN' });
    await r.clock.advance(1);
    expect(r.value()).toEqual({ detaching: { hooks: 'calling' } });
    g.open();
    await r.clock.advance(1);
    expect(r.value()).toBe('detached');
    const shutdowns = r.log.filter((c) => c.method === 'shutdown');
    expect(shutdowns.map((c) => `${c.hook}.${c.method}`)).toEqual(['task:main.shutdown', 'rec.shutdown']);
    expect(shutdowns.some((c) => c.aborted)).toBe(false);
  });

  it('detaches from prerun: the prerun hook is stopped, no task starts, no postrun runs', async () => {
    const g = gate();
    const r = setup(alloc([task('main', { run_for: '1h' })]), { allocImpl: { prerun: g.wait } });
    await r.clock.advance(1);
    r.runner.send({ type: 'SHUTDOWN' });
    await r.clock.advance(1);
    expect(r.value()).toBe('detached');
    expect(r.log[0]!.aborted).toBe(true);
    expect(r.calls()).toEqual(['rec.prerun', 'task:main.shutdown', 'rec.shutdown']);
    expect(r.types('main')).not.toContain('Started');
  });

  it('detaches from terminal: the finished tasks count as detached and the shutdown hooks run', async () => {
    const r = setup(alloc([task('job', { run_for: '1s' })], { type: 'batch' }));
    await r.clock.advance(1_001);
    await r.runner.done;
    expect(r.value()).toBe('terminal');
    r.runner.send({ type: 'SHUTDOWN' });
    await r.clock.advance(1);
    expect(r.value()).toBe('detached');
    expect(r.calls().at(-1)).toBe('rec.shutdown');
    expect(r.calls()).not.toContain('rec.destroy');
  });
});

describe('the group shutdown delay on the bare statechart', () => {
  /** allocRunnerMachine with stub task runners (each runs until killed) and alloc hooks that record. */
  function bare(sleepUntil: ReturnType<typeof fromPromise<void, { until: number }>>) {
    const calls: string[] = [];
    const exits = new Map<string, (r: ExitResult) => void>();
    const taskRunner = taskRunnerMachine.provide({
      actors: {
        hook: fromPromise(async () => ({})),
        driverStart: fromPromise(async () => ({})),
        driverWait: fromPromise<ExitResult, DriverCallInput>(({ input }) => new Promise((resolve) => exits.set(input.task.name, resolve))),
        driverShutdown: fromPromise<void, DriverShutdownInput>(async ({ input }) => {
          calls.push(`kill:${input.task.name}`);
          exits.get(input.task.name)?.({ exitCode: 130, signal: 2 });
        }),
        driverTerminate: fromPromise<void, DriverCallInput>(async () => {}),
        driverSignal: fromPromise<void, DriverCallInput & { signal: string }>(async () => {}),
      },
    });
    const allocHook = fromPromise<void, AllocHookCallInput>(async ({ input }) => void calls.push(`${input.phase}:${input.hook}`));
    const machine = allocRunnerMachine.provide({ actors: { allocHook, taskRunner, sleepUntil } });
    const actor = createActor(machine, {
      clock: new SimulatedClock(0),
      input: { alloc: { id: 'a1', job: 'j', group: 'g', type: 'service', shutdownDelay: 5_000, tasks: [{ name: 'main', driver: 'stub', config: {} }] }, hooks: { preKill: ['consul'] } },
    }).start();
    return { actor, calls };
  }

  it('goes on to kill the tasks when the shutdown delay timer fails, rather than hang', async () => {
    const { actor, calls } = bare(fromPromise<void, { until: number }>(async () => Promise.reject(new Error('timer broke'))));
    await settle();
    actor.send({ type: 'KILL' });
    await settle();
    expect(calls).toEqual(['preKill:consul', 'kill:main']);
    expect(actor.getSnapshot().value).toBe('terminal');
  });

  it('asks the timer to sleep until the delay after the kill began', async () => {
    const until: number[] = [];
    const { actor, calls } = bare(fromPromise<void, { until: number }>(async ({ input }) => void until.push(input.until)));
    await settle();
    actor.send({ type: 'KILL' });
    await settle();
    expect(until).toEqual([5_000]);
    expect(calls).toEqual(['preKill:consul', 'kill:main']);
  });
});
