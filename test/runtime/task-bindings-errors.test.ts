/**
 * The errors a task's driver and hook calls raise (task-bindings.ts) and what becomes of the task's
 * controllers: a driver that is not there, a start that fails, a config that cannot be interpolated, a
 * hook the plan names but nobody registered, a signal the driver cannot send; a failed workload's
 * controller released before the next start; a restored task reattaching through its handle (Nomad's
 * RecoverTask), or failing to. In process, on stub controllers and a simulated clock.
 */
import { describe, expect, it } from 'vitest';
import { createActor, type InspectionEvent } from 'xstate';
import { of } from 'rxjs';
import { createTaskRunner, type TaskRunnerOptions } from '../../src/runtime/create-task-runner.ts';
import { DriverStartError, providedTaskRunnerMachine } from '../../src/runtime/task-bindings.ts';
import { registerRunner, type RunnerBindings } from '../../src/runtime/runner-registry.ts';
import type { Controller, Driver, DriverContext, DriverHandle } from '../../src/drivers/controller.ts';
import type { TaskPoststartRequest } from '../../src/hooks/types.ts';
import type { ExitResult, TaskSpec } from '../../src/jobspec/types.ts';
import type { TaskRunnerInput } from '../../machines/task-runner.ts';
import { SimulatedClock, settle } from '../../src/testing/simulated-clock.ts';
import { StubController, type StubControllerOptions } from '../../src/testing/stub-controller.ts';
import { untilAborted } from '../../src/testing/hook-recorder.ts';
import { capturingDriver } from '../../src/testing/capturing-driver.ts';

const web: TaskSpec = { name: 'web', driver: 'stub', config: {} };
const NO_RESTART = { attempts: 0, interval: 3_600_000, delay: 1_000, mode: 'fail' as const };

/** A workload that runs until its wait is aborted. */
const runsUntilStopped: StubControllerOptions = { wait: async (signal) => untilAborted(signal).then(() => ({ exitCode: 0, signal: 0 })) };

/** A driver of stub controllers; `recover`, when given, reattaches. */
const stubDriver = (make: () => Controller, recover?: Driver['recover']) => capturingDriver({ make, recover });

/** The errors `driver:start` failed with, as the inspector sees them. */
function startErrors() {
  const errors: unknown[] = [];
  const inspect = (ev: InspectionEvent) => {
    if (ev.type === '@xstate.event' && ev.event.type === 'xstate.error.actor.driver:start') errors.push((ev.event as unknown as { error: unknown }).error);
  };
  return { errors, inspect };
}

function standalone(task: TaskSpec, opts: TaskRunnerOptions) {
  const clock = new SimulatedClock(0);
  const runner = createTaskRunner(task, { clock, seed: 1, ...opts }).start();
  const types = () => runner.getState().events.map((e) => e.type);
  return { clock, runner, types };
}

/** A task-runner actor with bindings registered by hand (what createTaskRunner and createAllocRunner do). */
function bound(clock: SimulatedClock, bindings: Partial<RunnerBindings>, start: { input?: Partial<TaskRunnerInput>; snapshot?: unknown } = {}) {
  const actor = createActor(providedTaskRunnerMachine, {
    clock,
    ...(start.snapshot ? { snapshot: start.snapshot as never } : {}),
    input: { allocId: 'a1', task: web, jobType: 'batch', parkWhenDead: false, ...start.input },
  });
  registerRunner(actor.system, {
    allocId: 'a1',
    drivers: {},
    hooksFor: () => [],
    clock,
    allocDir: '/allocs/a1',
    taskDirOf: (t) => `/allocs/a1/${t.name}`,
    envFor: (t) => Object.freeze({ NOMAD_TASK_NAME: t.name }),
    controllers: new Map(),
    ...bindings,
  });
  return actor.start();
}

describe('errors users see from driver:start', () => {
  it('a task whose driver is not there fails validation, naming the task, the driver and the drivers there are, and is not restarted', async () => {
    const { errors, inspect } = startErrors();
    const { clock, runner, types } = standalone({ ...web, driver: 'docker' }, { inspect });
    await clock.advance(1);
    const failure = runner.getState().events.find((e) => e.type === 'Failed Validation');
    expect(failure?.message).toBe('task "web": driver "docker" is not available (known: mock, mock_driver, raw_exec)');
    expect(types()).toEqual(['Received', 'Task Setup', 'Failed Validation', 'Not Restarting']);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(DriverStartError);
    expect(errors[0]).toMatchObject({ name: 'DriverStartError', code: 'ErrDriverStart', recoverable: false, eventType: 'Failed Validation' });
  });

  it("a start error the driver does not mark recoverable is a Driver Failure with the driver's own message, and is not retried", async () => {
    const { errors, inspect } = startErrors();
    const { driver, made } = stubDriver(() => new StubController({ start: async () => Promise.reject(new Error('port 8080 is in use')) }));
    const { clock, runner, types } = standalone(web, { inspect, drivers: { stub: driver }, groupRestart: { ...NO_RESTART, attempts: 3 } });
    await clock.advance(60_000);
    expect(runner.getState().events.find((e) => e.type === 'Driver Failure')?.message).toBe('port 8080 is in use');
    expect(types()).toEqual(['Received', 'Task Setup', 'Driver Failure', 'Not Restarting']);
    expect(made).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(DriverStartError);
    expect(errors[0]).toMatchObject({ code: 'ErrDriverStart', recoverable: false, message: 'port 8080 is in use' });
  });

  it('a driver config that cannot be interpolated fails validation, naming the task, and the driver is never asked', async () => {
    const clock = new SimulatedClock(0);
    const { errors, inspect } = startErrors();
    const { driver, made } = stubDriver(() => new StubController(runsUntilStopped));
    const actor = createActor(providedTaskRunnerMachine, { clock, inspect, input: { allocId: 'a1', task: web, jobType: 'service', parkWhenDead: false } });
    registerRunner(actor.system, {
      allocId: 'a1',
      drivers: { stub: driver },
      hooksFor: () => [],
      clock,
      allocDir: '/allocs/a1',
      taskDirOf: (t) => `/allocs/a1/${t.name}`,
      envFor: () => ({}),
      interpolate: () => {
        throw new Error('${attr.gpu} cannot be resolved');
      },
      controllers: new Map(),
    });
    actor.start();
    await clock.advance(60_000);
    const events = actor.getSnapshot().context.taskState.events;
    expect(events.map((e) => e.type)).toEqual(['Received', 'Task Setup', 'Failed Validation', 'Not Restarting']);
    expect(events[2]!.message).toBe('task "web": ${attr.gpu} cannot be resolved');
    expect(made).toHaveLength(0);
    expect(errors[0]).toMatchObject({ code: 'ErrDriverStart', recoverable: false, eventType: 'Failed Validation' });
  });
});

describe('errors users see from hook and signal calls', () => {
  it('a hook the plan names but the runner has not registered fails its call, naming the hook and the task', async () => {
    const clock = new SimulatedClock(0);
    const actor = bound(clock, { hooksFor: () => [{ name: 'other', prestart: async () => undefined }] }, { input: { hooks: { prestart: ['ghost'] } } });
    await clock.advance(1);
    const failure = actor.getSnapshot().context.taskState.events.find((e) => e.type === 'Task hook failed');
    expect(failure?.message).toBe('ghost: hook "ghost" is not registered for task "web"');
    actor.stop();
  });

  it('a signal to a task whose driver cannot send signals is answered with ErrSignalFailed, naming the driver', async () => {
    const noSignal = () => Object.assign(new StubController(runsUntilStopped), { signal: undefined }) as Controller;
    const { driver } = stubDriver(noSignal);
    const { clock, runner } = standalone(web, { drivers: { stub: driver } });
    await clock.advance(1);
    runner.send({ type: 'SIGNAL', signal: 'SIGHUP' });
    await clock.advance(1);
    expect(runner.actor.getSnapshot().context.rejections).toEqual([
      { command: 'SIGNAL', code: 'ErrSignalFailed', message: 'driver "stub" cannot send signals', time: 1 },
    ]);
    expect(runner.getState().state).toBe('running');
  });
});

describe("controllers (SwarmKit's Remove/Close)", () => {
  it('the controller of a workload whose wait failed is removed and closed before the next start', async () => {
    const log: string[] = [];
    let n = 0;
    const { driver } = stubDriver(() => {
      const id = ++n;
      return new StubController({
        start: async () => void log.push(`start ${id}`),
        wait: async (signal) => (id === 1 ? Promise.reject(new Error('lost track of pid 4242')) : untilAborted(signal).then(() => ({ exitCode: 0, signal: 0 }))),
        remove: async () => void log.push(`remove ${id}`),
        close: async () => void log.push(`close ${id}`),
      });
    });
    const { clock, runner } = standalone(web, { drivers: { stub: driver }, groupRestart: { ...NO_RESTART, attempts: 1 } });
    await clock.advanceUntil(() => n === 2);
    await clock.advance(1);
    expect(runner.getState().events.find((e) => e.type === 'Failed Restoring Task')?.message).toBe('lost the workload: lost track of pid 4242');
    expect(log).toEqual(['start 1', 'remove 1', 'close 1', 'start 2']);
  });
});

describe('after the workload exits, while its controller is being released', () => {
  /** A workload that exits when told, and a controller whose remove finishes when told. */
  function exitingWorkload() {
    let exit!: () => void;
    let removed!: () => void;
    const removing = new Promise<void>((r) => (removed = r));
    const ctrl = Object.assign(
      new StubController({
        wait: () => new Promise<ExitResult>((r) => (exit = () => r({ exitCode: 0, signal: 0 }))),
        remove: () => removing,
      }),
      { stats: () => of(), network: () => ({ ip: '10.0.0.9' }), exec: async () => ({ output: '', exitCode: 0 }) },
    );
    return { ctrl, exit: () => exit(), removed: () => removed() };
  }

  it('a poststart hook that starts then is given no stats, network or exec of the released controller', async () => {
    const w = exitingWorkload();
    let firstDone!: () => void;
    const seen: TaskPoststartRequest[] = [];
    const { driver } = stubDriver(() => w.ctrl);
    const { clock } = standalone(web, {
      jobType: 'batch',
      drivers: { stub: driver },
      hooks: [
        { name: 'slow', poststart: () => new Promise<void>((r) => (firstDone = r)) },
        { name: 'late', poststart: async (req) => void seen.push(req) },
      ],
    });
    await clock.advance(1);
    w.exit();
    await settle();
    firstDone();
    await settle();
    w.removed();
    await clock.advance(1);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.stats).toBeUndefined();
    expect(seen[0]).not.toHaveProperty('driverNetwork');
    expect(seen[0]).not.toHaveProperty('driverExec');
  });

  it('a kill that arrives then sends nothing to the released controller and records no driver failure: the task exited, there is nothing to stop', async () => {
    const w = exitingWorkload();
    const { driver } = stubDriver(() => w.ctrl);
    const { clock, runner } = standalone(web, { jobType: 'batch', drivers: { stub: driver } });
    await clock.advance(1);
    w.exit();
    await settle();
    runner.send({ type: 'KILL' });
    // Past the kill timeout: the force kill runs too.
    await clock.advance(10_000);
    w.removed();
    await clock.advance(1);
    expect(w.ctrl.callCount('shutdown') + w.ctrl.callCount('terminate')).toBe(0);
    expect(runner.getState().events.filter((e) => e.type === 'Driver Failure')).toEqual([]);
    expect(runner.getState().state).toBe('dead');
    expect(runner.getState().failed).toBe(false);
  });
});

describe("a restored task reattaches through its driver handle (Nomad's RecoverTask)", () => {
  const HANDLE: DriverHandle = { driver: 'stub', taskName: 'web', pid: 4242, state: { port: 8080 } };

  /** A running task's persisted snapshot; its controller gives `handle`. */
  async function runningSnapshot(handle: DriverHandle | undefined) {
    const clock = new SimulatedClock(0);
    const { driver } = stubDriver(() => Object.assign(new StubController(runsUntilStopped), { handle: () => handle }));
    const actor = bound(clock, { drivers: { stub: driver } });
    await clock.advance(1);
    expect(actor.getSnapshot().context.taskState.state).toBe('running');
    const snapshot = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()));
    actor.stop();
    return { clock, snapshot };
  }

  it("reattaches through the driver's recover with the handle, the task and its directories, and waits on that workload", async () => {
    const { clock, snapshot } = await runningSnapshot(HANDLE);
    const recovered: { handle: DriverHandle; task: TaskSpec; ctx: DriverContext }[] = [];
    const { driver, made } = stubDriver(
      () => new StubController(),
      (handle, task, ctx) => {
        recovered.push({ handle, task, ctx });
        return new StubController({ wait: async () => ({ exitCode: 3, signal: 0 }) });
      },
    );
    const actor = bound(clock, { drivers: { stub: driver } }, { snapshot });
    await clock.advance(1);
    expect(made).toHaveLength(0);
    expect(recovered).toHaveLength(1);
    expect(recovered[0]!.handle).toEqual(HANDLE);
    expect(recovered[0]!.task.name).toBe('web');
    expect(recovered[0]!.ctx).toMatchObject({ allocId: 'a1', taskDir: '/allocs/a1/web', allocDir: '/allocs/a1' });
    // Only a start has an attempt number.
    expect(recovered[0]!.ctx).not.toHaveProperty('attempt');
    expect(actor.getSnapshot().context.taskState.events.find((e) => e.type === 'Terminated')?.exitCode).toBe(3);
    actor.stop();
  });

  it('a driver that cannot recover loses the workload: Failed Restoring Task, naming the task', async () => {
    const { clock, snapshot } = await runningSnapshot(HANDLE);
    const { driver } = stubDriver(() => new StubController());
    const actor = bound(clock, { drivers: { stub: driver } }, { snapshot });
    await clock.advance(1);
    const lost = actor.getSnapshot().context.taskState.events.find((e) => e.type === 'Failed Restoring Task');
    expect(lost?.message).toBe('lost the workload: task "web" has no live workload to reattach to');
    actor.stop();
  });

  it('a workload started without a handle cannot be reattached, even by a driver that can recover', async () => {
    const { clock, snapshot } = await runningSnapshot(undefined);
    let recovers = 0;
    const { driver } = stubDriver(
      () => new StubController(),
      () => {
        recovers++;
        return new StubController();
      },
    );
    const actor = bound(clock, { drivers: { stub: driver } }, { snapshot });
    await clock.advance(1);
    const lost = actor.getSnapshot().context.taskState.events.find((e) => e.type === 'Failed Restoring Task');
    expect(lost?.message).toBe('lost the workload: task "web" has no live workload to reattach to');
    expect(recovers).toBe(0);
    actor.stop();
  });
});
