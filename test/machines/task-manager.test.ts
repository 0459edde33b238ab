import { describe, expect, it } from 'vitest';
import { SimulatedClock, waitFor } from 'xstate';
import {
  DEFAULT_TASK_RETRY_DELAY,
  retryDelayOf,
  type ManagedTask,
  type TaskManagerBackoff,
} from '../../machines/task-manager.ts';
import { mulberry32 } from '../../machines/restart-tracker.ts';
import { createTaskManager } from '../../src/runtime/create-task-manager.ts';
import { ErrClosed, makeTemporary } from '../../src/drivers/errors.ts';
import { SwarmTaskState, type SwarmTask, type SwarmTaskStatus } from '../../src/drivers/task-status.ts';
import { StubController } from '../../src/testing/stub-controller.ts';
import { settle } from '../../src/testing/simulated-clock.ts';
import { managedTask, startManager } from './task-manager-fixtures.ts';

const { NEW, ACCEPTED, PREPARING, READY, STARTING, RUNNING, COMPLETE, SHUTDOWN } = SwarmTaskState;


describe('task manager machine: stepping', () => {
  it('runs the first step as soon as it starts', () => {
    const m = startManager();
    expect(m.value()).toEqual({ running: 'stepping' });
    expect(m.steps).toHaveLength(1);
    expect(m.steps[0]!.input).toEqual({ task: managedTask(), updated: false });
  });

  it('steps again at once after progress, with the new status', async () => {
    const m = startManager();
    await m.finishStep({ outcome: 'progress', status: { state: ACCEPTED } });
    expect(m.steps).toHaveLength(2);
    expect((m.steps[1]!.input.task as ManagedTask).status).toEqual({ state: ACCEPTED });
  });

  it('reports every status a step returns', async () => {
    const m = startManager();
    await m.finishStep({ outcome: 'progress', status: { state: ACCEPTED } });
    await m.finishStep({ outcome: 'noop', status: { state: ACCEPTED } });
    expect(m.emitted.filter((e) => e.type === 'status')).toEqual([
      { type: 'status', taskId: 't1', status: { state: ACCEPTED }, outcome: 'progress' },
      { type: 'status', taskId: 't1', status: { state: ACCEPTED }, outcome: 'noop' },
    ]);
  });

  it('scenario 33: goes idle after ErrTaskNoop and runs no further step without an update', async () => {
    const m = startManager();
    await m.finishStep({ outcome: 'noop', status: { state: NEW } });
    expect(m.value()).toBe('idle');
    await m.advance(60_000);
    expect(m.steps).toHaveLength(1);
  });

  it('scenario 33: runs the next step 1 s after ErrTaskRetry', async () => {
    const m = startManager();
    await m.finishStep({ outcome: 'retry', status: { state: PREPARING, err: 'registry unreachable' } });
    expect(m.value()).toBe('retryWait');
    await m.advance(DEFAULT_TASK_RETRY_DELAY - 1);
    expect(m.steps).toHaveLength(1);
    await m.advance(1);
    expect(m.value()).toEqual({ running: 'stepping' });
    expect(m.steps).toHaveLength(2);
  });

  it('keeps retrying every second under the default fixed backoff', async () => {
    const m = startManager();
    for (let i = 0; i < 3; i++) {
      await m.finishStep({ outcome: 'retry', status: { state: PREPARING } });
      expect(m.context().retryDelay).toBe(1_000);
      await m.advance(1_000);
    }
    expect(m.steps).toHaveLength(4);
    expect(m.context().retries).toBe(3);
  });

  it('runs the next step at once after a failed controller update, without the update', async () => {
    const m = startManager();
    await settle();
    m.actor.send({ type: 'UPDATE', task: managedTask({ desiredState: SHUTDOWN }) });
    await m.finishStep({ outcome: 'progress', status: { state: ACCEPTED } });
    expect(m.steps[1]!.input.updated).toBe(true);
    await m.finishStep({ outcome: 'error', error: 'updating task controller failed: immutable field' });
    expect(m.value()).toEqual({ running: 'stepping' });
    expect(m.steps).toHaveLength(3);
    expect(m.steps[2]!.input.updated).toBe(false);
    expect(m.context().lastFailure).toEqual({ message: 'updating task controller failed: immutable field', time: 0 });
    expect(m.emitted).toContainEqual({
      type: 'step.failed', taskId: 't1', failure: { message: 'updating task controller failed: immutable field', time: 0 },
    });
  });

  it('records a step that throws and retries it after the backoff instead of spinning', async () => {
    const m = startManager();
    await settle();
    m.steps[0]!.reject(new Error('controller exploded'));
    await settle();
    expect(m.value()).toBe('retryWait');
    expect(m.context().lastFailure?.message).toBe('controller exploded');
    await m.advance(1_000);
    expect(m.steps).toHaveLength(2);
  });
});

describe('task manager machine: backoff', () => {
  const exponential: TaskManagerBackoff = { kind: 'exponential', initial: 500, max: 8_000, factor: 2, jitter: 0.2 };

  async function retryDelays(seed: number, count: number): Promise<number[]> {
    const m = startManager({ backoff: exponential, seed });
    const delays: number[] = [];
    for (let i = 0; i < count; i++) {
      await m.finishStep({ outcome: 'retry', status: { state: PREPARING } });
      const delay = m.context().retryDelay;
      delays.push(delay);
      await m.advance(delay - 1);
      expect(m.steps).toHaveLength(i + 1);
      await m.advance(1);
      expect(m.steps).toHaveLength(i + 2);
    }
    return delays;
  }

  it('waits exactly the drawn delay before each retry', async () => {
    await retryDelays(7, 4);
  });

  it('grows the delay exponentially within the jitter band and caps it', async () => {
    const delays = await retryDelays(7, 7);
    delays.forEach((delay, i) => {
      const base = Math.min(8_000, 500 * 2 ** i);
      expect(delay).toBeGreaterThanOrEqual(base * 0.8);
      expect(delay).toBeLessThanOrEqual(base);
    });
  });

  it('draws the same delays from the same seed', async () => {
    expect(await retryDelays(42, 5)).toEqual(await retryDelays(42, 5));
  });

  it('draws different delays from a different seed', async () => {
    expect(await retryDelays(1, 5)).not.toEqual(await retryDelays(2, 5));
  });

  it('keeps the PRNG state in context, so the next draw continues the sequence', async () => {
    const m = startManager({ backoff: exponential, seed: 9 });
    await m.finishStep({ outcome: 'retry', status: { state: PREPARING } });
    const rng = mulberry32(9);
    expect(m.context().retryDelay).toBe(retryDelayOf(exponential, 1, rng.next()));
    expect(m.context().seed).toBe(rng.seed);
  });

  it('starts the backoff over after progress', async () => {
    const m = startManager({ backoff: { ...exponential, jitter: 0 } });
    await m.finishStep({ outcome: 'retry', status: { state: PREPARING } });
    await m.advance(500);
    await m.finishStep({ outcome: 'retry', status: { state: PREPARING } });
    expect(m.context().retryDelay).toBe(1_000);
    await m.advance(1_000);
    await m.finishStep({ outcome: 'progress', status: { state: READY } });
    await m.finishStep({ outcome: 'retry', status: { state: READY } });
    expect(m.context().retryDelay).toBe(500);
  });

  it('retryDelayOf: a fixed backoff ignores the attempt and the draw', () => {
    expect(retryDelayOf({ kind: 'fixed', delay: 1_000 }, 9, 0.99)).toBe(1_000);
  });

  it('retryDelayOf: jitter only shortens the delay, by at most its fraction', () => {
    expect(retryDelayOf(exponential, 3, 0)).toBe(2_000);
    expect(retryDelayOf(exponential, 3, 0.5)).toBe(1_800);
    expect(retryDelayOf(exponential, 20, 0)).toBe(8_000);
  });
});

describe('task manager machine: updates', () => {
  it('TestTaskManager (agent/task.go): an update cancels the step in flight but awaits it; the next step sees the new spec', async () => {
    const m = startManager();
    await settle();
    m.actor.send({ type: 'UPDATE', task: managedTask({ desiredState: SHUTDOWN }) });
    await settle();
    expect(m.steps[0]!.signal.aborted).toBe(true);
    // No second operation while the cancelled one is still running on the controller.
    expect(m.steps).toHaveLength(1);
    await m.finishStep({ outcome: 'progress', status: { state: ACCEPTED } });
    expect(m.steps).toHaveLength(2);
    expect(m.steps[1]!.input.updated).toBe(true);
    expect(m.steps[1]!.input.task).toMatchObject({ desiredState: SHUTDOWN, status: { state: ACCEPTED } });
  });

  it('TestTaskManager (agent/task.go): the status a cancelled step returns is kept and reported', async () => {
    const m = startManager({ task: managedTask({ status: { state: RUNNING } }) });
    await settle();
    m.actor.send({ type: 'UPDATE', task: managedTask({ desiredState: SHUTDOWN }) });
    await m.finishStep({ outcome: 'progress', status: { state: COMPLETE, message: 'finished' } });
    expect(m.context().task).toMatchObject({ desiredState: SHUTDOWN, status: { state: COMPLETE, message: 'finished' } });
    expect(m.emitted.filter((e) => e.type === 'status')).toEqual([
      { type: 'status', taskId: 't1', status: { state: COMPLETE, message: 'finished' }, outcome: 'progress' },
    ]);
  });

  it('TestTaskManager (agent/task.go): a cancelled step that returns ErrTaskRetry waits the fixed 1 s before the next step', async () => {
    const m = startManager({ task: managedTask({ status: { state: RUNNING } }) });
    await settle();
    m.actor.send({ type: 'UPDATE', task: managedTask({ desiredState: SHUTDOWN }) });
    await m.finishStep({ outcome: 'retry', status: { state: RUNNING } });
    expect(m.value()).toBe('retryWait');
    await m.advance(DEFAULT_TASK_RETRY_DELAY - 1);
    expect(m.steps).toHaveLength(1);
    await m.advance(1);
    expect(m.steps).toHaveLength(2);
    expect(m.steps[1]!.input).toMatchObject({ updated: true, task: { desiredState: SHUTDOWN } });
  });

  it('a noop from a step an update cancelled runs the next step at once, so the update is applied', async () => {
    const m = startManager();
    await settle();
    m.actor.send({ type: 'UPDATE', task: managedTask({ spec: { image: 'redis:8' } }) });
    await m.finishStep({ outcome: 'noop', status: { state: NEW } });
    expect(m.steps).toHaveLength(2);
    expect(m.steps[1]!.input).toMatchObject({ updated: true, task: { spec: { image: 'redis:8' } } });
  });

  it("keeps the manager's own status over the one an update carries", async () => {
    const m = startManager();
    await m.finishStep({ outcome: 'noop', status: { state: ACCEPTED } });
    m.actor.send({ type: 'UPDATE', task: managedTask({ desiredState: SHUTDOWN, status: { state: NEW } }) });
    expect(m.context().task).toMatchObject({ desiredState: SHUTDOWN, status: { state: ACCEPTED } });
  });

  it('an update while idle runs a step at once', async () => {
    const m = startManager();
    await m.finishStep({ outcome: 'noop', status: { state: NEW } });
    m.actor.send({ type: 'UPDATE', task: managedTask({ spec: { image: 'redis:8' } }) });
    await settle();
    expect(m.value()).toEqual({ running: 'stepping' });
    expect(m.steps).toHaveLength(2);
    expect(m.steps[1]!.input).toMatchObject({ updated: true, task: { spec: { image: 'redis:8' } } });
  });

  it('an update during the retry wait runs the step at once and cancels the timer', async () => {
    const m = startManager();
    await m.finishStep({ outcome: 'retry', status: { state: PREPARING } });
    m.actor.send({ type: 'UPDATE', task: managedTask({ desiredState: SHUTDOWN }) });
    await settle();
    expect(m.steps).toHaveLength(2);
    await m.finishStep({ outcome: 'noop', status: { state: SHUTDOWN } });
    await m.advance(10_000);
    expect(m.steps).toHaveLength(2);
    expect(m.value()).toBe('idle');
  });

  it('scenario 31: ignores an update that differs only in status and meta', async () => {
    const m = startManager();
    await m.finishStep({ outcome: 'noop', status: { state: NEW } });
    m.actor.send({ type: 'UPDATE', task: managedTask({ status: { state: COMPLETE }, meta: { version: 9 } }) });
    await settle();
    expect(m.value()).toBe('idle');
    expect(m.steps).toHaveLength(1);
    expect(m.emitted).toContainEqual({ type: 'update.ignored', taskId: 't1', reason: 'unchanged' });
  });

  it('scenario 31: ignores an update that lowers the desired state', async () => {
    const m = startManager({ task: managedTask({ desiredState: SHUTDOWN }) });
    await m.finishStep({ outcome: 'noop', status: { state: NEW } });
    m.actor.send({ type: 'UPDATE', task: managedTask({ desiredState: RUNNING, spec: { image: 'redis:8' } }) });
    await settle();
    expect(m.steps).toHaveLength(1);
    expect(m.context().task.desiredState).toBe(SHUTDOWN);
    expect(m.emitted).toContainEqual({ type: 'update.ignored', taskId: 't1', reason: 'lowerDesiredState' });
  });

  it('ignores an update for another task', async () => {
    const m = startManager();
    await m.finishStep({ outcome: 'noop', status: { state: NEW } });
    m.actor.send({ type: 'UPDATE', task: managedTask({ id: 't2', desiredState: SHUTDOWN }) });
    await settle();
    expect(m.steps).toHaveLength(1);
    expect(m.context().task.id).toBe('t1');
    expect(m.emitted).toContainEqual({ type: 'update.ignored', taskId: 't1', reason: 'otherTask' });
  });
});

describe('task manager machine: close', () => {
  it('CLOSE cancels the step in flight, waits for it, keeps its status and ends closed without another step', async () => {
    const m = startManager();
    await settle();
    m.actor.send({ type: 'CLOSE' });
    await settle();
    expect(m.steps[0]!.signal.aborted).toBe(true);
    expect(m.value()).toEqual({ running: 'closing' });
    await m.finishStep({ outcome: 'retry', status: { state: ACCEPTED } });
    expect(m.value()).toBe('closed');
    expect(m.context().task.status).toEqual({ state: ACCEPTED });
    await m.advance(10_000);
    expect(m.steps).toHaveLength(1);
  });

  it('CLOSE is idempotent', async () => {
    const m = startManager();
    await settle();
    m.actor.send({ type: 'CLOSE' });
    m.actor.send({ type: 'CLOSE' });
    await m.finishStep({ outcome: 'retry' });
    m.actor.send({ type: 'CLOSE' });
    await settle();
    expect(m.value()).toBe('closed');
    expect(m.actor.getSnapshot().status).toBe('active');
    expect(m.emitted).toEqual([]);
  });

  it('CLOSE cancels a pending retry timer', async () => {
    const m = startManager();
    await m.finishStep({ outcome: 'retry', status: { state: PREPARING } });
    m.actor.send({ type: 'CLOSE' });
    expect(m.value()).toBe('closed');
    await m.advance(10_000);
    expect(m.steps).toHaveLength(1);
  });

  it('an update while closing is rejected, not adopted', async () => {
    const m = startManager();
    await settle();
    m.actor.send({ type: 'CLOSE' });
    m.actor.send({ type: 'UPDATE', task: managedTask({ desiredState: SHUTDOWN }) });
    expect(m.context().task.desiredState).toBe(RUNNING);
    expect(m.context().rejections).toHaveLength(1);
  });

  it('an update after close is rejected, recorded in context and emitted', async () => {
    const m = startManager();
    m.clock.set(7_000);
    await settle();
    m.actor.send({ type: 'CLOSE' });
    await m.finishStep({ outcome: 'retry' });
    m.actor.send({ type: 'UPDATE', task: managedTask({ desiredState: SHUTDOWN }) });
    const rejection = { code: 'ErrClosed', message: 'the task manager is closed: updates are no longer accepted', taskId: 't1', time: 7_000 };
    expect(m.context().rejections).toEqual([rejection]);
    expect(m.emitted).toContainEqual({ type: 'update.rejected', rejection });
    expect(m.steps).toHaveLength(1);
  });

  it('keeps a JSON-serialisable context', async () => {
    const m = startManager({ backoff: { kind: 'exponential', initial: 100, max: 1_000 } });
    await m.finishStep({ outcome: 'retry', status: { state: PREPARING, err: 'x' } });
    const context = m.context();
    expect(JSON.parse(JSON.stringify(context))).toEqual(context);
  });
});

describe('createTaskManager: the machine with Do and a controller', () => {
  function swarmTask(desired: SwarmTask['desiredState'], state: SwarmTask['status']['state'] = NEW): SwarmTask {
    return {
      id: 'task-1',
      desiredState: desired,
      status: { timestamp: 0, state, message: '' },
      spec: { name: 'web', driver: 'mock', config: {} },
    };
  }

  function reporter() {
    const statuses: SwarmTaskStatus[] = [];
    /** Reported states with consecutive repeats (noops) dropped, as SwarmKit's reporter does. */
    const states = () => statuses.map((s) => s.state).filter((s, i, all) => i === 0 || all[i - 1] !== s);
    return { statuses, states, onStatus: (s: SwarmTaskStatus) => void statuses.push(s) };
  }

  const idle = (tm: ReturnType<typeof createTaskManager>) => waitFor(tm.actor, (s) => s.matches('idle'));

  /** A wait that runs until its signal aborts, then rejects with the abort reason after `lag` ms of clock time. */
  const waitUntilAborted = (clock: SimulatedClock, lag = 0) => (signal: AbortSignal) =>
    new Promise<never>((_, reject) =>
      signal.addEventListener('abort', () => (lag > 0 ? clock.setTimeout(() => reject(signal.reason), lag) : reject(signal.reason))),
    );


  it('scenario 29 (TestTaskManager): desired ACCEPTED reports ACCEPTED then idles; desired READY then prepares and readies it', async () => {
    const clock = new SimulatedClock();
    const ctlr = new StubController();
    const r = reporter();
    const task = swarmTask(ACCEPTED);
    const tm = createTaskManager(task, ctlr, { clock, onStatus: r.onStatus });
    await idle(tm);
    expect(r.states()).toEqual([ACCEPTED]);
    tm.update({ ...task, desiredState: READY });
    await idle(tm);
    expect(r.states()).toEqual([ACCEPTED, PREPARING, READY]);
    expect(ctlr.calls).toEqual({ update: 1, prepare: 1 });
  });

  it('scenario 30 (TestTaskManager): desired RUNNING starts, runs and completes it; close is idempotent, then updates fail with ErrClosed', async () => {
    const clock = new SimulatedClock();
    const ctlr = new StubController();
    const r = reporter();
    const task = swarmTask(ACCEPTED);
    const tm = createTaskManager(task, ctlr, { clock, onStatus: r.onStatus });
    await idle(tm);
    tm.update({ ...task, desiredState: READY });
    await idle(tm);
    clock.increment(1_000);
    tm.update({ ...task, desiredState: RUNNING });
    await idle(tm);
    expect(r.states()).toEqual([ACCEPTED, PREPARING, READY, STARTING, RUNNING, COMPLETE]);
    await tm.close();
    expect(tm.actor.getSnapshot().value).toBe('closed');
    await tm.close();
    expect(() => tm.update({ ...task, desiredState: SHUTDOWN })).toThrow(ErrClosed);
    expect(ctlr.calls).toEqual({ start: 1, wait: 1, prepare: 1, update: 2 });
  });

  it('close leaves the workload running: no shutdown, remove or close on the controller', async () => {
    const clock = new SimulatedClock();
    const ctlr = new StubController({ wait: waitUntilAborted(clock) });
    const tm = createTaskManager(swarmTask(RUNNING, RUNNING), ctlr, { clock });
    await settle();
    await tm.close();
    expect(ctlr.calls).toEqual({ wait: 1 });
  });

  it('TestTaskManager (agent/task.go): an update to SHUTDOWN cancels the wait, which retries, and Shutdown runs 1 s later', async () => {
    const clock = new SimulatedClock();
    const ctlr = new StubController({ wait: waitUntilAborted(clock) });
    const r = reporter();
    const task = swarmTask(RUNNING, RUNNING);
    const tm = createTaskManager(task, ctlr, { clock, onStatus: r.onStatus });
    await settle();
    tm.update({ ...task, desiredState: SHUTDOWN });
    await waitFor(tm.actor, (s) => s.matches('retryWait'));
    // The cancelled Wait said nothing about the task: still RUNNING, no error recorded.
    expect(tm.getTask().status).toMatchObject({ state: RUNNING });
    expect(tm.getTask().status.err).toBeUndefined();
    clock.increment(DEFAULT_TASK_RETRY_DELAY - 1);
    await settle();
    expect(ctlr.callCount('shutdown')).toBe(0);
    clock.increment(1);
    await idle(tm);
    expect(r.states()).toEqual([RUNNING, SHUTDOWN]);
    expect(tm.getTask().status).toMatchObject({ state: SHUTDOWN, message: 'shutdown', timestamp: DEFAULT_TASK_RETRY_DELAY });
    expect(ctlr.calls).toEqual({ wait: 1, update: 1, shutdown: 1 });
  });

  it('TestTaskManager (agent/task.go): a Wait that ends cleanly as an update arrives is kept as COMPLETE "finished", and the exited workload is not shut down', async () => {
    const clock = new SimulatedClock();
    let exit!: () => void;
    // The workload exits just as the update lands: the wait resolves before it could see the abort.
    const ctlr = new StubController({ wait: () => new Promise((resolve) => (exit = () => resolve({ exitCode: 0, signal: 0 }))) });
    const r = reporter();
    const task = swarmTask(RUNNING, RUNNING);
    const tm = createTaskManager(task, ctlr, { clock, onStatus: r.onStatus });
    await settle();
    tm.update({ ...task, desiredState: SHUTDOWN });
    exit();
    await idle(tm);
    expect(r.states()).toEqual([COMPLETE]);
    expect(tm.getTask()).toMatchObject({ desiredState: SHUTDOWN, status: { state: COMPLETE, message: 'finished' } });
    expect(ctlr.calls).toEqual({ wait: 1, update: 1 });
  });

  it('the step after an update waits for the cancelled one to settle, so controller calls never overlap', async () => {
    const clock = new SimulatedClock();
    // A controller whose wait takes 500 ms of clock time to notice the abort.
    const ctlr = new StubController({ wait: waitUntilAborted(clock, 500) });
    const task = swarmTask(RUNNING, RUNNING);
    const tm = createTaskManager(task, ctlr, { clock });
    await settle();
    tm.update({ ...task, desiredState: SHUTDOWN });
    await settle();
    clock.increment(500);
    await settle();
    expect(tm.actor.getSnapshot().value).toBe('retryWait');
    expect(ctlr.callCount('update')).toBe(0);
    clock.increment(DEFAULT_TASK_RETRY_DELAY);
    await idle(tm);
    expect(ctlr.calls).toEqual({ wait: 1, update: 1, shutdown: 1 });
  });

  it('retries a temporary prepare failure 1 s later on the clock', async () => {
    const clock = new SimulatedClock();
    clock.set(10_000);
    const ctlr = new StubController({
      prepare: async () => {
        if (ctlr.callCount('prepare') === 1) throw makeTemporary(new Error('registry unreachable'));
      },
    });
    const tm = createTaskManager(swarmTask(READY, PREPARING), ctlr, { clock });
    await waitFor(tm.actor, (s) => s.matches('retryWait'));
    expect(tm.getTask().status).toMatchObject({ state: PREPARING, err: 'registry unreachable', timestamp: 10_000 });
    clock.increment(999);
    await settle();
    expect(ctlr.callCount('prepare')).toBe(1);
    clock.increment(1);
    await idle(tm);
    expect(tm.getTask().status).toMatchObject({ state: READY, message: 'prepared', timestamp: 11_000 });
    expect(tm.getTask().status.err).toBeUndefined();
  });

  it('close waits for the cancelled step to settle', async () => {
    const clock = new SimulatedClock();
    // A controller whose wait takes 500 ms of clock time to notice the abort.
    const ctlr = new StubController({ wait: waitUntilAborted(clock, 500) });
    const tm = createTaskManager(swarmTask(RUNNING, RUNNING), ctlr, { clock });
    await settle();
    let closed = false;
    void tm.close().then(() => (closed = true));
    await settle();
    expect(closed).toBe(false);
    expect(tm.actor.getSnapshot().value).toEqual({ running: 'closing' });
    clock.increment(500);
    await settle();
    expect(closed).toBe(true);
  });

  it('closes when its parent signal aborts', async () => {
    const ac = new AbortController();
    const tm = createTaskManager(swarmTask(RUNNING, ACCEPTED), new StubController(), { clock: new SimulatedClock(), signal: ac.signal });
    await idle(tm);
    ac.abort();
    await waitFor(tm.actor, (s) => s.matches('closed'));
  });
});
