/**
 * Issue 24: nothing a hook or driver does takes the agent down. A hook or driver implementation that
 * throws (synchronously, from a method that is not even async) or rejects, in any phase, ends up as a task
 * event on its allocation naming what failed and why, and the runner carries on to the allocation's end.
 * In process, on stub controllers; the process-level handler for errors that escape every call is
 * exercised in a real process by last-resort.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { filter, firstValueFrom } from 'rxjs';
import type { Controller, Driver, ExitResult } from '../../src/drivers/controller.ts';
import type { TaskHook } from '../../src/hooks/types.ts';
import type { AllocSpec, AllocState, TaskEvent, TaskSpec } from '../../src/jobspec/types.ts';
import { createAllocRunner, type AllocRunner } from '../../src/runtime/create-alloc-runner.ts';

const NO_RESTART = { attempts: 0, interval: 3_600_000, delay: 0, mode: 'fail' as const };

/** Errors Node would have ended the process for, caught for the length of each test. */
const escaped: unknown[] = [];
const onEscape = (err: unknown) => escaped.push(err);
beforeEach(() => {
  process.on('unhandledRejection', onEscape);
});
const runners: AllocRunner[] = [];
afterEach(() => {
  process.off('unhandledRejection', onEscape);
  escaped.length = 0;
  for (const r of runners.splice(0)) r.stop();
});

/**
 * A workload that runs until it is shut down or terminated. Every method is a plain function, not async:
 * `broken` replaces one with a function that throws synchronously, the rudest way an implementation fails.
 */
function fakeController(broken?: { method: keyof Controller; error: Error }): Controller {
  let exit!: (r: ExitResult) => void;
  const exited = new Promise<ExitResult>((resolve) => (exit = resolve));
  const c: Controller = {
    prepare: () => Promise.resolve(),
    start: () => Promise.resolve(),
    wait: () => exited,
    shutdown: () => (exit({ exitCode: 143, signal: 15 }), Promise.resolve()),
    terminate: () => (exit({ exitCode: 137, signal: 9 }), Promise.resolve()),
    remove: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
  if (broken) {
    (c as unknown as Record<string, () => never>)[broken.method] = () => {
      throw broken.error;
    };
  }
  return c;
}

function driverOf(make: () => Controller): Driver {
  return { name: 'fake', controller: () => make() };
}

function allocOf(task: Partial<TaskSpec> = {}): AllocSpec {
  return {
    id: `issue24-${Math.random().toString(36).slice(2, 10)}`,
    job: 'j',
    group: 'g',
    type: 'service',
    tasks: [{ name: 'web', driver: 'fake', config: {}, restart: NO_RESTART, killTimeout: 50, ...task }],
  };
}

function start(spec: AllocSpec, driver: Driver, hooks: TaskHook[] = []): AllocRunner {
  const runner = createAllocRunner(spec, { drivers: { fake: driver }, taskHooks: hooks, builtinHooks: false });
  runners.push(runner);
  return runner.start();
}

const eventsOf = (s: AllocState, task = 'web'): TaskEvent[] => s.taskStates[task]?.events ?? [];

/** Resolves with the alloc state once one of `task`'s events is of `type` and mentions `text`. */
function recorded(runner: AllocRunner, type: string, text: string, task = 'web'): Promise<TaskEvent> {
  const find = (s: AllocState) => eventsOf(s, task).find((e) => e.type === type && `${e.message} ${e.displayMessage}`.includes(text));
  return firstValueFrom(runner.state$.pipe(filter((s) => find(s) !== undefined))).then((s) => find(s)!);
}

/** Resolves once the task is running (its Started event is in). */
const running = (runner: AllocRunner) => recorded(runner, 'Started', '');

/** A hook whose `phase` method throws synchronously. */
function throwingHook(phase: 'prestart' | 'poststart' | 'preKilling' | 'exited' | 'stop', message: string): TaskHook {
  return {
    name: `broken-${phase}`,
    [phase]: () => {
      throw new Error(message);
    },
  } as TaskHook;
}

describe('issue 24: a hook that throws is recorded on its allocation and the runner lives on', () => {
  it('a prestart hook that throws fails the start with Task hook failed, naming the hook and its message, and the allocation fails', async () => {
    const runner = start(allocOf(), driverOf(() => fakeController()), [throwingHook('prestart', 'prestart went wrong')]);
    const ev = await recorded(runner, 'Task hook failed', 'prestart went wrong');
    expect(ev.message).toContain('broken-prestart');
    expect((await runner.done).clientStatus).toBe('failed');
    expect(escaped).toEqual([]);
  });

  it('a poststart hook that throws is recorded as Task hook failed, naming the hook, and the task keeps running', async () => {
    const runner = start(allocOf(), driverOf(() => fakeController()), [throwingHook('poststart', 'poststart went wrong')]);
    const ev = await recorded(runner, 'Task hook failed', 'poststart went wrong');
    expect(ev.details).toMatchObject({ hook: 'broken-poststart', phase: 'poststart' });
    expect(runner.getState().taskStates.web?.state).toBe('running');
    runner.send({ type: 'KILL' });
    expect((await runner.done).taskStates.web?.state).toBe('dead');
    expect(escaped).toEqual([]);
  });

  it('a preKilling hook that throws is recorded as Task hook failed and the kill still stops the task', async () => {
    const runner = start(allocOf(), driverOf(() => fakeController()), [throwingHook('preKilling', 'preKilling went wrong')]);
    await running(runner);
    runner.send({ type: 'KILL' });
    await recorded(runner, 'Task hook failed', 'preKilling went wrong');
    const end = await runner.done;
    expect(eventsOf(end).map((e) => e.type)).toContain('Killed');
    expect(escaped).toEqual([]);
  });

  it('an exited hook that throws is recorded as Task hook failed and the exit is still reported', async () => {
    const runner = start(allocOf(), driverOf(() => fakeController()), [throwingHook('exited', 'exited went wrong')]);
    await running(runner);
    runner.send({ type: 'KILL' });
    await recorded(runner, 'Task hook failed', 'exited went wrong');
    expect(eventsOf(await runner.done).map((e) => e.type)).toContain('Terminated');
    expect(escaped).toEqual([]);
  });

  it('a stop hook that throws is recorded as Task hook failed and the allocation still reaches its end', async () => {
    const runner = start(allocOf(), driverOf(() => fakeController()), [throwingHook('stop', 'stop went wrong')]);
    await running(runner);
    runner.send({ type: 'KILL' });
    await recorded(runner, 'Task hook failed', 'stop went wrong');
    expect((await runner.done).taskStates.web?.state).toBe('dead');
    expect(escaped).toEqual([]);
  });
});

describe('issue 24: a driver that throws is recorded on its allocation and the runner lives on', () => {
  it("a driver whose controller() throws fails the start with Driver Failure and the driver's message", async () => {
    const driver: Driver = {
      name: 'fake',
      controller: () => {
        throw new Error('no controller for you');
      },
    };
    const runner = start(allocOf(), driver);
    await recorded(runner, 'Driver Failure', 'no controller for you');
    expect((await runner.done).clientStatus).toBe('failed');
    expect(escaped).toEqual([]);
  });

  it.each(['prepare', 'start'] as const)('a controller whose %s throws fails the start with Driver Failure and its message', async (method) => {
    const runner = start(allocOf(), driverOf(() => fakeController({ method, error: new Error(`${method} went wrong`) })));
    await recorded(runner, 'Driver Failure', `${method} went wrong`);
    expect((await runner.done).clientStatus).toBe('failed');
    expect(escaped).toEqual([]);
  });

  it('a controller whose wait throws loses the workload: the task event carries the message and the task ends', async () => {
    const runner = start(allocOf(), driverOf(() => fakeController({ method: 'wait', error: new Error('wait went wrong') })));
    await recorded(runner, 'Failed Restoring Task', 'wait went wrong');
    expect((await runner.done).taskStates.web?.state).toBe('dead');
    expect(escaped).toEqual([]);
  });

  it('a controller whose shutdown throws records Driver Failure on the kill, and the force kill after the kill timeout stops the task', async () => {
    const runner = start(allocOf(), driverOf(() => fakeController({ method: 'shutdown', error: new Error('shutdown went wrong') })));
    await running(runner);
    runner.send({ type: 'KILL' });
    await recorded(runner, 'Driver Failure', 'failed to stop the task: shutdown went wrong');
    const end = await runner.done;
    expect(end.taskStates.web?.state).toBe('dead');
    expect(eventsOf(end).find((e) => e.type === 'Terminated')?.exitCode).toBe(137);
    expect(escaped).toEqual([]);
  });

  it.each(['remove', 'close'] as const)(
    "a controller whose %s throws after the exit records Driver Failure naming the call, and the exit is still reported",
    async (method) => {
      const runner = start(allocOf(), driverOf(() => fakeController({ method, error: new Error(`${method} went wrong`) })));
      await running(runner);
      runner.send({ type: 'KILL' });
      const ev = await recorded(runner, 'Driver Failure', `${method} went wrong`);
      expect(ev.message).toContain(`(${method})`);
      const end = await runner.done;
      expect(eventsOf(end).find((e) => e.type === 'Terminated')?.exitCode).toBe(143);
      expect(end.taskStates.web?.state).toBe('dead');
      expect(escaped).toEqual([]);
    },
  );
});
