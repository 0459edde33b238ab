/**
 * createTaskManager as the runtime binds it (agent/task.go): the controller's update runs before Do and its
 * failure is reported, not retried; each status goes out with its step's outcome; progress starts the
 * backoff over; the manager refuses updates from the moment it starts closing; a parent signal that is
 * already cancelled closes it; and its logs are the controller's. On a SimulatedClock and stub controllers.
 */
import { of } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { waitFor } from 'xstate';
import type { Controller, LogLine } from '../../src/drivers/controller.ts';
import { ErrClosed, makeTemporary } from '../../src/drivers/errors.ts';
import { logPublisherFunc, type LogMessage } from '../../src/drivers/executor.ts';
import { SwarmTaskState, type SwarmTask } from '../../src/drivers/task-status.ts';
import { createTaskManager, type TaskManager } from '../../src/runtime/create-task-manager.ts';
import { SimulatedClock, settle } from '../../src/testing/simulated-clock.ts';
import { StubController } from '../../src/testing/stub-controller.ts';

const { NEW, ACCEPTED, PREPARING, READY, STARTING, RUNNING, SHUTDOWN } = SwarmTaskState;

function swarmTask(desired: SwarmTask['desiredState'], state: SwarmTask['status']['state'] = NEW): SwarmTask {
  return {
    id: 'task-1',
    desiredState: desired,
    status: { timestamp: 0, state, message: '' },
    spec: { name: 'web', driver: 'mock', config: {} },
  };
}

const idle = (tm: TaskManager) => waitFor(tm.actor, (s) => s.matches('idle'));

describe('createTaskManager: the controller update before Do', () => {
  it("reports a failed controller update as the step's failure and runs Do at once without retrying the update", async () => {
    const clock = new SimulatedClock();
    const ctlr = new StubController({
      update: async () => {
        throw new Error('image changed: not supported');
      },
    });
    const task = swarmTask(ACCEPTED);
    const tm = createTaskManager(task, ctlr, { clock });
    const failures: string[] = [];
    tm.actor.on('step.failed', (ev) => void failures.push(ev.failure.message));
    await idle(tm);
    tm.update({ ...task, desiredState: READY, spec: { ...task.spec, config: { image: 'v2' } } });
    await idle(tm);
    expect(failures).toEqual(['updating task controller failed: image changed: not supported']);
    expect(tm.actor.getSnapshot().context.lastFailure?.message).toBe('updating task controller failed: image changed: not supported');
    // The failed update is not retried: Do ran on, preparing the task with the controller it has.
    expect(tm.getTask().status).toMatchObject({ state: READY, message: 'prepared' });
    expect(tm.getTask().status.err).toBeUndefined();
    expect(ctlr.calls).toEqual({ update: 1, prepare: 1 });
  });
});

describe('createTaskManager: outcomes and backoff', () => {
  it("emits each status with its step's outcome: progress while the task moves, noop once it is where it should be", async () => {
    const tm = createTaskManager(swarmTask(READY), new StubController(), { clock: new SimulatedClock() });
    const outcomes: [number, string][] = [];
    // The first step has started, but its result comes back asynchronously: the listener hears it.
    tm.actor.on('status', (ev) => void outcomes.push([(ev.status as SwarmTask['status']).state, ev.outcome]));
    await idle(tm);
    expect(outcomes).toEqual([
      [ACCEPTED, 'progress'],
      [PREPARING, 'progress'],
      [READY, 'progress'],
      [READY, 'noop'],
    ]);
  });

  it('starts the exponential backoff over after a step that makes progress (swarmkit#2617)', async () => {
    const clock = new SimulatedClock();
    const ctlr = new StubController({
      prepare: async () => {
        if (ctlr.callCount('prepare') <= 2) throw makeTemporary(new Error('registry unreachable'));
      },
      start: async () => {
        throw makeTemporary(new Error('port busy'));
      },
    });
    const tm = createTaskManager(swarmTask(RUNNING, PREPARING), ctlr, {
      clock,
      backoff: { kind: 'exponential', initial: 100, max: 10_000, factor: 2, jitter: 0 },
    });
    // The delay of each retry wait, recorded as the manager enters it.
    const delays: number[] = [];
    let waiting = false;
    tm.actor.subscribe((s) => {
      if (s.matches('retryWait') && !waiting) delays.push(s.context.retryDelay);
      waiting = s.matches('retryWait');
    });
    const retrying = () => waitFor(tm.actor, (s) => s.matches('retryWait'));
    await retrying();
    await clock.advance(100);
    await retrying();
    await clock.advance(200);
    // The third prepare succeeds (READY, then STARTING): the failing start is retry number one again.
    await waitFor(tm.actor, (s) => s.matches('retryWait') && tm.getTask().status.state === STARTING);
    expect(delays).toEqual([100, 200, 100]);
    expect(ctlr.calls).toMatchObject({ prepare: 3, start: 1 });
    await tm.close();
  });
});

describe('createTaskManager: closing', () => {
  it('refuses an update with ErrClosed while the cancelled step is still finishing', async () => {
    const clock = new SimulatedClock();
    // A wait that takes 500 ms of clock time to notice its cancellation.
    const ctlr = new StubController({
      wait: (signal) => new Promise((_, reject) => signal.addEventListener('abort', () => clock.setTimeout(() => reject(signal.reason), 500))),
    });
    const task = swarmTask(RUNNING, RUNNING);
    const tm = createTaskManager(task, ctlr, { clock });
    await settle();
    const closed = tm.close();
    await settle();
    expect(tm.actor.getSnapshot().value).toEqual({ running: 'closing' });
    expect(() => tm.update({ ...task, desiredState: SHUTDOWN })).toThrow(ErrClosed);
    expect(tm.actor.getSnapshot().context.rejections).toHaveLength(1);
    await clock.advance(500);
    await closed;
    expect(ctlr.calls).toEqual({ wait: 1 });
  });

  it('closes at once when its parent signal was cancelled before it started, after the first step only', async () => {
    const ac = new AbortController();
    ac.abort();
    const ctlr = new StubController();
    const statuses: number[] = [];
    const tm = createTaskManager(swarmTask(RUNNING, NEW), ctlr, {
      clock: new SimulatedClock(),
      signal: ac.signal,
      onStatus: (s) => void statuses.push(s.state),
    });
    await settle();
    expect(tm.actor.getSnapshot().value).toBe('closed');
    // SwarmKit primes the pump before it sees the cancelled context: one step (NEW -> ACCEPTED), no more.
    expect(statuses).toEqual([ACCEPTED]);
    expect(ctlr.calls).toEqual({});
  });
});

describe('createTaskManager: logs', () => {
  it("publishes the controller's log lines tagged with the task id, in order, and ends with the stream", async () => {
    const lines: LogLine[] = [
      { stream: 'stdout', line: 'listening on :8080', time: 1 },
      { stream: 'stderr', line: 'warning: no TLS', time: 2 },
    ];
    const ctlr: Controller = Object.assign(new StubController(), { logs: () => of(...lines) });
    const tm = createTaskManager(swarmTask(ACCEPTED), ctlr, { clock: new SimulatedClock() });
    const got: LogMessage[] = [];
    await tm.logs(logPublisherFunc((m) => void got.push(m)), { follow: false }, new AbortController().signal);
    expect(got).toEqual(lines.map((l) => ({ ...l, taskId: 'task-1' })));
    await tm.close();
  });
});
