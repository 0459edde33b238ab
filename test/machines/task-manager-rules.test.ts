// SwarmKit task manager rules (agent/task.go, /work/shared/spec/swarmkit-exec.md §Task manager) that
// test/machines/task-manager.test.ts leaves unobserved: the exponential backoff's default factor, which
// updates count as a change (TasksEqualStable is a deep equality), how a failing or crashing step is
// recorded, a step that fails while CLOSE waits for it, and what a closed manager keeps of rejected updates.
import { describe, expect, it } from 'vitest';
import { fromCallback } from 'xstate';
import { fromStep, type TaskManagerStepCommand, type TaskManagerStepInput } from '../../machines/task-manager.ts';
import { SwarmTaskState } from '../../src/drivers/task-status.ts';
import { settle } from '../../src/testing/simulated-clock.ts';
import { managedTask, startManager } from './task-manager-fixtures.ts';

const { NEW, PREPARING, RUNNING, SHUTDOWN } = SwarmTaskState;


describe('task manager: exponential backoff (swarmkit#2617)', () => {
  it('doubles the delay on each consecutive retry when the backoff names no factor', async () => {
    const m = startManager({ backoff: { kind: 'exponential', initial: 500, max: 8_000, jitter: 0 } });
    await m.finishStep({ outcome: 'retry', status: { state: PREPARING } });
    expect(m.context().retryDelay).toBe(500);
    await m.advance(500);
    await m.finishStep({ outcome: 'retry', status: { state: PREPARING } });
    expect(m.context().retryDelay).toBe(1_000);
    await m.advance(1_000);
    await m.finishStep({ outcome: 'retry', status: { state: PREPARING } });
    expect(m.context().retryDelay).toBe(2_000);
    await m.advance(1_999);
    expect(m.steps).toHaveLength(3);
    await m.advance(1);
    expect(m.steps).toHaveLength(4);
  });

  it("leaves the jitter's PRNG state untouched under SwarmKit's fixed backoff, which draws nothing", async () => {
    const m = startManager({ seed: 9 });
    await m.finishStep({ outcome: 'retry', status: { state: PREPARING } });
    await m.advance(1_000);
    await m.finishStep({ outcome: 'retry', status: { state: PREPARING } });
    expect(m.context().retryDelay).toBe(1_000);
    expect(m.context().seed).toBe(9);
  });
});

describe('task manager: an update changes the task unless it is stable-equal (TasksEqualStable)', () => {
  /** Starts idle on `spec`, hands over the same task with `next` as its spec, and says what the manager did. */
  async function updateSpec(spec: unknown, next: unknown) {
    const m = startManager({ task: managedTask({ spec }) });
    await m.finishStep({ outcome: 'noop', status: { state: NEW } });
    m.actor.send({ type: 'UPDATE', task: managedTask({ spec: next }) });
    await settle();
    return m;
  }

  function expectAdopted(m: ReturnType<typeof startManager>, spec: unknown) {
    expect(m.actor.getSnapshot().status).toBe('active');
    expect(m.emitted.filter((e) => e.type === 'update.ignored')).toEqual([]);
    expect(m.steps).toHaveLength(2);
    expect(m.steps[1]!.input).toMatchObject({ updated: true, task: { spec } });
  }

  it('adopts an update that turns a list setting into a map, even an empty one', async () => {
    const m = await updateSpec({ ports: [] }, { ports: {} });
    expectAdopted(m, { ports: {} });
  });

  it('adopts an update that turns a scalar setting into an empty object', async () => {
    const m = await updateSpec({ limits: 0 }, { limits: {} });
    expectAdopted(m, { limits: {} });
  });

  it('adopts an update that turns an empty object setting into a scalar', async () => {
    const m = await updateSpec({ limits: {} }, { limits: 0 });
    expectAdopted(m, { limits: 0 });
  });

  it('adopts an update that sets a null setting to an empty object', async () => {
    const m = await updateSpec({ limits: null }, { limits: {} });
    expectAdopted(m, { limits: {} });
  });

  it('adopts an update that clears an empty object setting to null', async () => {
    const m = await updateSpec({ limits: {} }, { limits: null });
    expectAdopted(m, { limits: null });
  });
});

describe('task manager: failed and crashed steps', () => {
  it('records a failed controller update that gives no reason as "the step failed"', async () => {
    const m = startManager();
    await m.finishStep({ outcome: 'error' });
    expect(m.context().lastFailure).toEqual({ message: 'the step failed', time: 0 });
    expect(m.emitted).toContainEqual({ type: 'step.failed', taskId: 't1', failure: { message: 'the step failed', time: 0 } });
  });

  it('reports a step that throws as step.failed with its message and the time', async () => {
    const m = startManager();
    m.clock.set(3_000);
    await settle();
    await m.failStep(new Error('controller exploded'));
    expect(m.emitted).toEqual([{ type: 'step.failed', taskId: 't1', failure: { message: 'controller exploded', time: 3_000 } }]);
  });

  it('records a step function that throws before returning a promise like a rejected step, and retries it after the backoff', async () => {
    let calls = 0;
    const m = startManager({
      do: fromStep(() => {
        calls++;
        throw new Error('no controller for this task');
      }),
    });
    await settle();
    expect(m.value()).toBe('retryWait');
    expect(m.context().lastFailure).toEqual({ message: 'no controller for this task', time: 0 });
    await m.advance(999);
    expect(calls).toBe(1);
    await m.advance(1);
    expect(calls).toBe(2);
  });

  it('records a do actor that crashes outside fromStep as "the step failed" and retries it after the backoff instead of stopping', async () => {
    let calls = 0;
    const crashing = fromCallback<TaskManagerStepCommand, TaskManagerStepInput>(() => {
      calls++;
      throw new Error('callback crashed');
    });
    const m = startManager({ do: crashing });
    await settle();
    expect(m.actor.getSnapshot().status).toBe('active');
    expect(m.value()).toBe('retryWait');
    expect(m.context().lastFailure).toEqual({ message: 'the step failed', time: 0 });
    expect(m.emitted).toEqual([{ type: 'step.failed', taskId: 't1', failure: { message: 'the step failed', time: 0 } }]);
    await m.advance(1_000);
    expect(calls).toBe(2);
  });

  it('records that its do step is not provided when run bare, and keeps retrying on the backoff', async () => {
    const m = startManager({ bare: true });
    await settle();
    expect(m.actor.getSnapshot().status).toBe('active');
    expect(m.value()).toBe('retryWait');
    expect(m.context().lastFailure?.message).toMatch(/the do actor is not provided; use createTaskManager\(\)/);
  });

  it('aborts the signal of the step in flight when the manager is stopped', async () => {
    const m = startManager();
    await settle();
    expect(m.steps[0]!.signal.aborted).toBe(false);
    m.actor.stop();
    expect(m.steps[0]!.signal.aborted).toBe(true);
  });
});

describe('task manager: close', () => {
  it('a step that throws after CLOSE cancelled it ends the manager closed, with the failure recorded and no retry', async () => {
    const m = startManager();
    await settle();
    m.actor.send({ type: 'CLOSE' });
    await m.failStep(new Error('wait interrupted'));
    expect(m.value()).toBe('closed');
    expect(m.context().lastFailure).toEqual({ message: 'wait interrupted', time: 0 });
    expect(m.emitted).toEqual([{ type: 'step.failed', taskId: 't1', failure: { message: 'wait interrupted', time: 0 } }]);
    await m.advance(10_000);
    expect(m.steps).toHaveLength(1);
  });

  it('rejects an update for another task after close under that task id', async () => {
    const m = startManager();
    await m.finishStep({ outcome: 'noop', status: { state: NEW } });
    m.actor.send({ type: 'CLOSE' });
    m.actor.send({ type: 'UPDATE', task: managedTask({ id: 't2', desiredState: SHUTDOWN }) });
    expect(m.context().rejections.map((r) => r.taskId)).toEqual(['t2']);
    expect(m.emitted).toContainEqual({ type: 'update.rejected', rejection: expect.objectContaining({ code: 'ErrClosed', taskId: 't2' }) });
  });

  it('keeps only the last 10 rejected updates in context, while every one is emitted', async () => {
    const m = startManager();
    await m.finishStep({ outcome: 'noop', status: { state: NEW } });
    m.actor.send({ type: 'CLOSE' });
    for (let i = 1; i <= 12; i++) {
      m.clock.set(i * 1_000);
      m.actor.send({ type: 'UPDATE', task: managedTask({ desiredState: SHUTDOWN }) });
    }
    expect(m.context().rejections.map((r) => r.time)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map((s) => s * 1_000));
    expect(m.emitted.filter((e) => e.type === 'update.rejected')).toHaveLength(12);
  });
});
