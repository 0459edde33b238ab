/**
 * The task runner's transitions in the states where each one is the handler that applies (Nomad's
 * taskrunner/task_runner.go): an UPDATE while pending, a KILL or FAIL_SETUP while the driver starts, while a
 * restart stops the workload, while the exited hooks run or while the dead task is parked, a driver call or a
 * durable timer that fails, the restore path's prestart hooks, and the command each state refuses and why.
 * `taskRunnerMachine` runs with stub actors through `.provide()`, on a SimulatedClock; each stub records what
 * it received and answers when the test says so.
 */
import { createActor, fromPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import {
  taskRunnerMachine, type DriverCallInput, type DriverShutdownInput, type DriverStartOutput, type TaskRunnerInput,
} from '../../machines/task-runner.ts';
import type { HookCallInput, HookCallOutput } from '../../machines/hook-calls.ts';
import type { AllocSpec, ExitResult, RestartPolicy, TaskSpec } from '../../machines/model.ts';
import { machineGraph } from '../../src/cli/machine-graph.ts';
import { SimulatedClock, settle } from '../../src/testing/simulated-clock.ts';

const task: TaskSpec = { name: 'web', driver: 'stub', config: { v: 1 } };
const RESTART_TWICE: RestartPolicy = { attempts: 2, interval: 3_600_000, delay: 10_000, mode: 'fail' };
const RUNNING = { running: { active: { poststart: 'done', updates: 'idle' } } };

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

function allocOf(tasks: TaskSpec[], extra: Partial<AllocSpec> = {}): AllocSpec {
  return { id: 'a1', job: 'j', group: 'g', type: 'service', tasks, ...extra };
}

interface StubOptions {
  /** A hook's answer; by default every hook succeeds with nothing. */
  hook?: (input: HookCallInput) => Promise<HookCallOutput> | HookCallOutput;
  start?: (input: DriverCallInput) => Promise<DriverStartOutput>;
  /** By default the kill signal ends the workload (exit 130, signal 2). */
  shutdown?: (input: DriverShutdownInput) => Promise<void>;
  /** By default a force kill ends the workload (exit 137, signal 9). */
  terminate?: (input: DriverCallInput) => Promise<void>;
  sleepUntil?: ReturnType<typeof fromPromise<void, { until: number }>>;
}

/** Stub actors that record their inputs; the workload runs until `exit` or `lose`. */
function stubs(o: StubOptions = {}) {
  const hooks: HookCallInput[] = [];
  const starts: DriverCallInput[] = [];
  const shutdowns: DriverShutdownInput[] = [];
  const terminates: DriverCallInput[] = [];
  const signals: string[] = [];
  let workload: { resolve: (r: ExitResult) => void; reject: (e: unknown) => void } | undefined;
  const exit = (r: ExitResult) => workload!.resolve(r);
  const machine = taskRunnerMachine.provide({
    actors: {
      hook: fromPromise<HookCallOutput, HookCallInput>(async ({ input }) => {
        hooks.push(input);
        return (await o.hook?.(input)) ?? {};
      }),
      driverStart: fromPromise<DriverStartOutput, DriverCallInput>(async ({ input }) => {
        starts.push(input);
        return o.start ? o.start(input) : { handle: { pid: starts.length } };
      }),
      driverWait: fromPromise<ExitResult, DriverCallInput>(
        () => new Promise<ExitResult>((resolve, reject) => (workload = { resolve, reject })),
      ),
      driverShutdown: fromPromise<void, DriverShutdownInput>(async ({ input }) => {
        shutdowns.push(input);
        if (o.shutdown) return o.shutdown(input);
        exit({ exitCode: 130, signal: 2 });
      }),
      driverTerminate: fromPromise<void, DriverCallInput>(async ({ input }) => {
        terminates.push(input);
        if (o.terminate) return o.terminate(input);
        exit({ exitCode: 137, signal: 9 });
      }),
      driverSignal: fromPromise<void, DriverCallInput & { signal: string }>(async ({ input }) => void signals.push(input.signal)),
      ...(o.sleepUntil && { sleepUntil: o.sleepUntil }),
    },
  });
  /** Which hook calls were made, as `<phase>:<hook>`. */
  const called = () => hooks.map((h) => `${h.phase}:${h.hook}`);
  return { machine, hooks, called, starts, shutdowns, terminates, signals, exit, lose: (e: Error) => workload!.reject(e) };
}

type Stubs = ReturnType<typeof stubs>;

function start(s: Stubs, input: Partial<TaskRunnerInput> = {}) {
  const clock = new SimulatedClock(0);
  const actor = createActor(s.machine, {
    clock,
    input: { allocId: 'a1', task, jobType: 'service', groupRestart: RESTART_TWICE, parkWhenDead: false, seed: 1, ...input },
  }).start();
  const taskState = () => actor.getSnapshot().context.taskState;
  const types = () => taskState().events.map((e) => e.type);
  return { clock, actor, taskState, types, value: () => actor.getSnapshot().value };
}

/** A hook that blocks in one phase until released. */
function blockingIn(phase: string) {
  const gate = deferred();
  return { gate, hook: (input: HookCallInput) => (input.phase === phase ? gate.promise.then(() => ({})) : {}) };
}

describe('an UPDATE while the task is pending (the root handler)', () => {
  it('kills a task an update drops from its allocation while it waits at the gate, failing it and never starting it', async () => {
    const s = stubs();
    const { actor, taskState, value } = start(s, { gateOpen: false });
    actor.send({ type: 'UPDATE', alloc: allocOf([]) });
    await settle();
    expect(taskState()).toMatchObject({ state: 'dead', failed: true });
    expect(taskState().events.at(-1)).toMatchObject({ type: 'Killing', message: 'task is no longer in the allocation', failsTask: true });
    actor.send({ type: 'GATE', open: true });
    await settle();
    expect(value()).toEqual({ terminal: 'stopped' });
    expect(s.starts).toHaveLength(0);
  });

  it('starts the task as an update that arrived while it waited at the gate describes it', async () => {
    const s = stubs();
    const { actor } = start(s, { gateOpen: false });
    actor.send({ type: 'UPDATE', alloc: allocOf([{ ...task, config: { v: 2 } }]) });
    actor.send({ type: 'GATE', open: true });
    await settle();
    expect(s.starts.map((i) => i.task.config)).toEqual([{ v: 2 }]);
  });
});

describe('a KILL or FAIL_SETUP while the driver is starting the task', () => {
  it('honours a kill that arrives while the driver starts the task once the workload runs: it is signalled, then Killed', async () => {
    const started = deferred<DriverStartOutput>();
    const s = stubs({ start: () => started.promise });
    const { actor, value, types, taskState } = start(s);
    await settle();
    expect(value()).toEqual({ pending: 'starting' });
    actor.send({ type: 'KILL' });
    await settle();
    expect(s.shutdowns).toHaveLength(0);
    started.resolve({ handle: { pid: 9 } });
    await settle();
    expect(s.shutdowns.map((i) => i.handle)).toEqual([{ pid: 9 }]);
    expect(types()).toEqual(['Received', 'Task Setup', 'Killing', 'Started', 'Terminated', 'Killed']);
    expect(taskState()).toMatchObject({ state: 'dead', failed: false });
  });

  it('fails a task whose alloc setup fails while the driver starts it, and stops the workload once it runs', async () => {
    const started = deferred<DriverStartOutput>();
    const s = stubs({ start: () => started.promise });
    const { actor, types, taskState } = start(s);
    await settle();
    actor.send({ type: 'FAIL_SETUP', reason: 'alloc dir: disk full' });
    await settle();
    expect(taskState().events.at(-1)).toMatchObject({ type: 'Setup Failure', displayMessage: 'alloc dir: disk full' });
    started.resolve({ handle: { pid: 9 } });
    await settle();
    expect(s.shutdowns).toHaveLength(1);
    expect(types()).toEqual(['Received', 'Task Setup', 'Setup Failure', 'Started', 'Terminated', 'Killed']);
    expect(taskState()).toMatchObject({ state: 'dead', failed: true });
    expect(s.starts).toHaveLength(1);
  });
});

describe('a running task', () => {
  it('fails on FAIL_SETUP: Setup Failure, its workload stopped, dead and failed without a restart', async () => {
    const s = stubs();
    const { actor, types, taskState } = start(s);
    await settle();
    actor.send({ type: 'FAIL_SETUP', reason: 'network namespace lost' });
    await settle();
    expect(s.shutdowns).toHaveLength(1);
    expect(types()).toEqual(['Received', 'Task Setup', 'Started', 'Setup Failure', 'Terminated', 'Killed']);
    expect(taskState()).toMatchObject({ state: 'dead', failed: true });
    expect(s.starts).toHaveLength(1);
  });

  it('records a workload lost while running as Failed Restoring Task and restarts it under the policy', async () => {
    const s = stubs();
    const { clock, types, taskState, value } = start(s);
    await settle();
    s.lose(new Error('reattach failed: no such process'));
    await settle();
    expect(taskState().events.at(-2)).toMatchObject({ type: 'Failed Restoring Task', message: 'lost the workload: reattach failed: no such process' });
    expect(types().at(-1)).toBe('Restarting');
    await clock.advance(12_500);
    expect(value()).toEqual(RUNNING);
    expect(s.starts).toHaveLength(2);
  });

  it('stores an update for a stopping alloc without running update hooks, and the kill hooks see it', async () => {
    const s = stubs();
    const { actor } = start(s, { hooks: { update: ['template'], preKilling: ['services'] } });
    await settle();
    const stopping = allocOf([{ ...task, meta: { rev: '2' } }], { desiredStatus: 'stop' });
    actor.send({ type: 'UPDATE', alloc: stopping });
    await settle();
    expect(s.called()).toEqual([]);
    actor.send({ type: 'KILL' });
    await settle();
    expect(s.called()).toEqual(['preKilling:services']);
    expect(s.hooks[0]!.alloc).toEqual(stopping);
    expect(s.hooks[0]!.task.meta).toEqual({ rev: '2' });
  });

  it('leaves no signal actor behind once the driver has delivered a signal', async () => {
    const s = stubs();
    const { actor } = start(s);
    await settle();
    actor.send({ type: 'SIGNAL', signal: 'SIGHUP' });
    expect(Object.keys(actor.getSnapshot().children)).toContain('signal.1');
    await settle();
    expect(s.signals).toEqual(['SIGHUP']);
    expect(Object.keys(actor.getSnapshot().children)).not.toContain('signal.1');
  });
});

describe('while a restart stops the workload (running.killing)', () => {
  it('turns the restart into a kill when KILL arrives: Killing and Killed, and the task never runs again', async () => {
    const b = blockingIn('preKilling');
    const s = stubs({ hook: b.hook });
    const { actor, types, taskState, clock } = start(s, { hooks: { preKilling: ['drain'] } });
    await settle();
    actor.send({ type: 'RESTART' });
    await settle();
    actor.send({ type: 'KILL' });
    b.gate.resolve();
    await clock.advance(60_000);
    expect(types()).toEqual(['Received', 'Task Setup', 'Started', 'Restart Signaled', 'Killing', 'Terminated', 'Killed']);
    expect(taskState()).toMatchObject({ state: 'dead', failed: false });
    expect(s.starts).toHaveLength(1);
  });

  it('fails the task when its alloc setup fails during the restart, which then never starts it again', async () => {
    const b = blockingIn('preKilling');
    const s = stubs({ hook: b.hook });
    const { actor, types, taskState, clock } = start(s, { hooks: { preKilling: ['drain'] } });
    await settle();
    actor.send({ type: 'RESTART' });
    await settle();
    actor.send({ type: 'FAIL_SETUP', reason: 'mount lost' });
    b.gate.resolve();
    await clock.advance(60_000);
    expect(types()).toEqual(['Received', 'Task Setup', 'Started', 'Restart Signaled', 'Setup Failure', 'Terminated', 'Killed']);
    expect(taskState()).toMatchObject({ state: 'dead', failed: true });
    expect(s.starts).toHaveLength(1);
  });
});

describe('a driver kill call or a durable timer that fails', () => {
  it('records a kill signal the driver failed to send as Driver Failure and still force-kills at the kill timeout', async () => {
    const s = stubs({ shutdown: async () => Promise.reject(new Error('permission denied')) });
    const { actor, clock, taskState } = start(s, { task: { ...task, killTimeout: 2_000 } });
    await settle();
    actor.send({ type: 'KILL' });
    await settle();
    expect(taskState().events.at(-1)).toMatchObject({ type: 'Driver Failure', displayMessage: 'failed to stop the task: permission denied' });
    expect(s.terminates).toHaveLength(0);
    await clock.advance(2_000);
    expect(s.terminates).toHaveLength(1);
    expect(taskState().state).toBe('dead');
  });

  it('records a failed force kill as Driver Failure and waits for the workload to exit', async () => {
    const s = stubs({ shutdown: async () => {}, terminate: async () => Promise.reject(new Error('no such process')) });
    const { actor, clock, taskState, value } = start(s, { task: { ...task, killTimeout: 1_000 } });
    await settle();
    actor.send({ type: 'KILL' });
    await clock.advance(1_000);
    expect(value()).toEqual({ running: { killing: 'awaitingExit' } });
    expect(taskState().events.at(-1)).toMatchObject({ type: 'Driver Failure', displayMessage: 'failed to stop the task: no such process' });
    s.exit({ exitCode: 137, signal: 9 });
    await settle();
    expect(taskState()).toMatchObject({ state: 'dead', failed: false });
    expect(taskState().events.at(-1)!.type).toBe('Killed');
  });

  const brokenTimer = () => fromPromise<void, { until: number }>(async () => Promise.reject(new Error('timer lost')));

  it('starts the task again when its restart delay timer fails, rather than staying pending', async () => {
    const s = stubs({ sleepUntil: brokenTimer() });
    const { value } = start(s);
    await settle();
    s.exit({ exitCode: 1, signal: 0 });
    await settle();
    expect(s.starts).toHaveLength(2);
    expect(value()).toEqual(RUNNING);
  });

  it('sends the kill signal when its shutdown delay timer fails, rather than waiting forever', async () => {
    const s = stubs({ sleepUntil: brokenTimer() });
    const { actor } = start(s, { task: { ...task, shutdownDelay: 5_000 } });
    await settle();
    actor.send({ type: 'KILL' });
    await settle();
    expect(s.shutdowns).toHaveLength(1);
  });

  it('force-kills at once when its kill timeout timer fails', async () => {
    const s = stubs({ sleepUntil: brokenTimer(), shutdown: async () => {} });
    const { actor, taskState } = start(s);
    await settle();
    actor.send({ type: 'KILL' });
    await settle();
    expect(s.terminates).toHaveLength(1);
    expect(taskState().state).toBe('dead');
  });
});

describe('exited and dead tasks', () => {
  it('ends a task killed while its exited hooks run instead of restarting it', async () => {
    const b = blockingIn('exited');
    const s = stubs({ hook: b.hook });
    const { actor, clock, types, taskState } = start(s, { hooks: { exited: ['logs'] } });
    await settle();
    s.exit({ exitCode: 1, signal: 0 });
    await settle();
    actor.send({ type: 'KILL' });
    b.gate.resolve();
    await clock.advance(60_000);
    expect(types()).toEqual(['Received', 'Task Setup', 'Started', 'Terminated', 'Killing', 'Killed']);
    expect(taskState()).toMatchObject({ state: 'dead', failed: false });
    expect(s.starts).toHaveLength(1);
  });

  it('parks a dead task by default, without its stop hooks, for its alloc to restart or kill', async () => {
    const s = stubs();
    const { value } = start(s, { jobType: 'batch', parkWhenDead: undefined, hooks: { stop: ['logs'] } });
    await settle();
    s.exit({ exitCode: 0, signal: 0 });
    await settle();
    expect(value()).toEqual({ terminal: 'parked' });
    expect(s.called()).toEqual([]);
  });

  /** A batch task that exited 0 under an alloc: dead, parked. */
  async function parked(hooks: TaskRunnerInput['hooks'] = { stop: ['logs'] }) {
    const s = stubs();
    const t = start(s, { jobType: 'batch', parkWhenDead: true, hooks });
    await settle();
    s.exit({ exitCode: 0, signal: 0 });
    await settle();
    expect(t.value()).toEqual({ terminal: 'parked' });
    return { s, ...t };
  }

  it('stops a parked task on KILL: its stop hooks run and it is marked killed for good', async () => {
    const { s, actor, value } = await parked();
    actor.send({ type: 'KILL' });
    await settle();
    expect(s.called()).toEqual(['stop:logs']);
    expect(value()).toEqual({ terminal: 'stopped' });
    expect(actor.getSnapshot().context.killRequested).toBe(true);
  });

  it('fails a parked task on FAIL_SETUP and runs its stop hooks', async () => {
    const { s, actor, value, taskState } = await parked();
    actor.send({ type: 'FAIL_SETUP', reason: 'alloc dir lost' });
    await settle();
    expect(taskState()).toMatchObject({ state: 'dead', failed: true });
    expect(taskState().events.at(-1)).toMatchObject({ type: 'Setup Failure', displayMessage: 'alloc dir lost' });
    expect(s.called()).toEqual(['stop:logs']);
    expect(value()).toEqual({ terminal: 'stopped' });
  });

  it("runs a parked task again on its alloc's forced restart, with Restart Signaled and Restarting", async () => {
    const { s, actor, types, taskState } = await parked();
    actor.send({ type: 'RESTART', force: true });
    await settle();
    expect(types().slice(-3)).toEqual(['Restart Signaled', 'Restarting', 'Started']);
    expect(taskState()).toMatchObject({ state: 'running', restarts: 1 });
    expect(s.starts).toHaveLength(2);
  });

  it('draws terminal.stopped as a final state: a stopped task never runs again', () => {
    expect(machineGraph(taskRunnerMachine).root.states.terminal!.states.stopped!.type).toBe('final');
  });
});

describe('commands a state cannot honour are answered with an error naming why', () => {
  interface Row { state: string; command: 'RESTART' | 'SIGNAL'; code: string; why: string; reach: () => Promise<ReturnType<typeof start>> }
  const pending = async () => {
    const t = start(stubs({ hook: blockingIn('prestart').hook }), { hooks: { prestart: ['vault'] } });
    await settle();
    return t;
  };
  const killing = async () => {
    const t = start(stubs({ hook: blockingIn('preKilling').hook }), { hooks: { preKilling: ['drain'] } });
    await settle();
    t.actor.send({ type: 'KILL' });
    return t;
  };
  const exited = async () => {
    const s = stubs({ hook: blockingIn('exited').hook });
    const t = start(s, { hooks: { exited: ['logs'] } });
    await settle();
    s.exit({ exitCode: 1, signal: 0 });
    await settle();
    return t;
  };
  const dead = (park: boolean) => async () => {
    const s = stubs();
    const t = start(s, { jobType: 'batch', parkWhenDead: park });
    await settle();
    s.exit({ exitCode: 0, signal: 0 });
    await settle();
    return t;
  };
  const rows: Row[] = [
    { state: 'pending', command: 'RESTART', code: 'ErrTaskNotRunning', why: 'the task is not running', reach: pending },
    { state: 'running.killing', command: 'RESTART', code: 'ErrTaskKilling', why: 'the task is being stopped', reach: killing },
    { state: 'exited', command: 'RESTART', code: 'ErrTaskNotRunning', why: 'the task has exited', reach: exited },
    { state: 'exited', command: 'SIGNAL', code: 'ErrTaskNotRunning', why: 'the task has exited', reach: exited },
    { state: 'terminal.parked', command: 'RESTART', code: 'ErrTaskNotRunning', why: 'the task is dead', reach: dead(true) },
    { state: 'terminal.parked', command: 'SIGNAL', code: 'ErrTaskNotRunning', why: 'the task is dead', reach: dead(true) },
    { state: 'terminal.stopped', command: 'SIGNAL', code: 'ErrTaskNotRunning', why: 'the task is dead', reach: dead(false) },
    { state: 'terminal.stopped', command: 'RESTART', code: 'ErrTaskRunComplete', why: 'the task has finished and will not run again', reach: dead(false) },
  ];

  it.each(rows)('in $state, $command is refused with $code: "$why"', async ({ command, code, why, reach }) => {
    const { actor, value } = await reach();
    const before = value();
    const emitted: string[] = [];
    actor.on('command.rejected', (e) => emitted.push(e.rejection.code));
    actor.send(command === 'RESTART' ? { type: 'RESTART' } : { type: 'SIGNAL', signal: 'SIGHUP' });
    expect(actor.getSnapshot().context.rejections).toMatchObject([
      { command, code, message: `cannot ${command.toLowerCase()} task "web": ${why}` },
    ]);
    expect(emitted).toEqual([code]);
    expect(value()).toEqual(before);
  });
});

describe('detaching on SHUTDOWN', () => {
  it('runs the shutdown hooks once however many SHUTDOWNs arrive while they run', async () => {
    const b = blockingIn('shutdown');
    const s = stubs({ hook: b.hook });
    const { actor, value } = start(s, { hooks: { shutdown: ['logmon'] } });
    await settle();
    actor.send({ type: 'SHUTDOWN' });
    actor.send({ type: 'SHUTDOWN' });
    b.gate.resolve();
    await settle();
    expect(value()).toBe('detached');
    expect(s.called()).toEqual(['shutdown:logmon']);
  });
});

describe('prestart hooks reported Done', () => {
  // vault (not Done) and artifact (Done) both set SOURCE; in Nomad the later hook's env wins, skipped or not.
  const twoSources = (vault: () => HookCallOutput = () => ({ env: { SOURCE: 'vault' } })) => (i: HookCallInput): HookCallOutput => {
    if (i.phase !== 'prestart') return {};
    return i.hook === 'vault' ? vault() : { done: true, env: { SOURCE: 'artifact' } };
  };

  it("re-apply their env on a restart, so a later Done hook's value still wins over an earlier hook's", async () => {
    const s = stubs({ hook: twoSources() });
    const { clock } = start(s, { hooks: { prestart: ['vault', 'artifact'] } });
    await settle();
    s.exit({ exitCode: 1, signal: 0 });
    await clock.advance(12_500);
    expect(s.called()).toEqual(['prestart:vault', 'prestart:artifact', 'prestart:vault']);
    expect(s.starts.map((i) => i.hookEnv.SOURCE)).toEqual(['artifact', 'artifact']);
  });

  /** Runs the task, persists it while running, and resumes it in a new actor with RESTORED. */
  async function restored(s: Stubs, hooks: TaskRunnerInput['hooks']) {
    const first = start(s, { hooks });
    await settle();
    expect(first.value()).toEqual(RUNNING);
    const snapshot = JSON.parse(JSON.stringify(first.actor.getPersistedSnapshot()));
    first.actor.stop();
    const actor = createActor(s.machine, {
      clock: first.clock,
      snapshot,
      input: { allocId: 'a1', task, jobType: 'service', groupRestart: RESTART_TWICE, parkWhenDead: false, hooks },
    }).start();
    actor.send({ type: 'RESTORED' });
    await settle();
    return actor;
  }

  it('are skipped on restore with their env re-applied, while the others run again before the poststart hooks', async () => {
    const s = stubs({ hook: twoSources() });
    await restored(s, { prestart: ['vault', 'artifact'], poststart: ['services'] });
    expect(s.called()).toEqual(['prestart:vault', 'prestart:artifact', 'poststart:services', 'prestart:vault', 'poststart:services']);
    expect(s.hooks.at(-1)!.hookEnv.SOURCE).toBe('artifact');
  });

  it('on restore, a prestart hook error is recorded and the running task keeps running', async () => {
    let runs = 0;
    const s = stubs({
      hook: twoSources(() => {
        if (runs++ > 0) throw new Error('vault sealed');
        return {};
      }),
    });
    const actor = await restored(s, { prestart: ['vault', 'artifact'], poststart: ['services'] });
    const ts = actor.getSnapshot().context.taskState;
    expect(ts.events.at(-1)).toMatchObject({ type: 'Task hook failed', displayMessage: 'prestart hook "vault" failed: vault sealed' });
    expect(ts.state).toBe('running');
    expect(actor.getSnapshot().value).toEqual(RUNNING);
    expect(s.called().slice(-2)).toEqual(['prestart:vault', 'poststart:services']);
  });
});

describe('restart jitter', () => {
  async function firstRestartDelay(seed?: number) {
    const s = stubs();
    const t = start(s, { seed });
    await settle();
    s.exit({ exitCode: 1, signal: 0 });
    await settle();
    return t.taskState().events.at(-1)!.startDelay!;
  }

  it('draws the restart jitter from the seed the runner was given', async () => {
    const one = await firstRestartDelay(1);
    expect(await firstRestartDelay(1)).toBe(one);
    expect(await firstRestartDelay(7)).not.toBe(one);
  });
});

describe('actor names', () => {
  it('names the durable timers and the kill calls after what they wait for, as the inspector shows them', async () => {
    const never = () => new Promise<void>(() => {});
    const s = stubs({ shutdown: never, terminate: never });
    const { actor, clock } = start(s, { task: { ...task, shutdownDelay: 1_000, killTimeout: 2_000 } });
    const children = () => Object.keys(actor.getSnapshot().children).sort();
    await settle();
    s.exit({ exitCode: 1, signal: 0 });
    await settle();
    expect(children()).toEqual(['restartDelay']);
    await clock.advance(12_500);
    actor.send({ type: 'KILL' });
    await settle();
    expect(children()).toEqual(['driver:wait', 'shutdownDelay']);
    await clock.advance(1_000);
    expect(children()).toEqual(['driver:shutdown', 'driver:wait', 'killTimeout']);
    await clock.advance(2_000);
    expect(children()).toEqual(['driver:terminate', 'driver:wait']);
  });
});
