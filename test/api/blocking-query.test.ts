/**
 * Nomad's blocking query rules on the agent's index (`?index=N&wait=D`): answer at once when the object is
 * already past N (or N is 0), otherwise on the first change that moves that object past N, or when the wait
 * ends (with the unchanged index), or when the client goes away. A change to another object wakes nothing.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StateIndex, waitForIndex } from '../../src/api/state-index.ts';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** Whether `p` has settled, and with what, after the microtasks queued so far. */
async function peek<T>(p: Promise<T>): Promise<{ done: false } | { done: true; value: T }> {
  let out: { done: false } | { done: true; value: T } = { done: false };
  void p.then((value) => (out = { done: true, value }));
  await vi.advanceTimersByTimeAsync(0);
  return out;
}

describe('waitForIndex', () => {
  it.each([
    ['index 0 answers at once', 0, 5],
    ['an object already past the index answers at once', 4, 5],
  ])('%s', async (_rule, minIndex, objectIndex) => {
    expect(await peek(waitForIndex(new StateIndex(10), () => objectIndex, minIndex, 60_000))).toEqual({ done: true, value: objectIndex });
  });

  it('an object at the index waits, and answers on the change that moves it past', async () => {
    const index = new StateIndex(10);
    let objectIndex = 5;
    const answer = waitForIndex(index, () => objectIndex, 5, 60_000);
    expect(await peek(answer)).toEqual({ done: false });
    objectIndex = index.next();
    index.changed(objectIndex);
    expect(await peek(answer)).toEqual({ done: true, value: 11 });
  });

  it('a change to another object wakes nothing', async () => {
    const index = new StateIndex(10);
    const answer = waitForIndex(index, () => 5, 5, 60_000);
    index.changed(index.next());
    expect(await peek(answer)).toEqual({ done: false });
  });

  it('the end of the wait answers with the unchanged index', async () => {
    const answer = waitForIndex(new StateIndex(10), () => 5, 5, 30_000);
    await vi.advanceTimersByTimeAsync(29_999);
    expect(await peek(answer)).toEqual({ done: false });
    await vi.advanceTimersByTimeAsync(1);
    expect(await peek(answer)).toEqual({ done: true, value: 5 });
  });

  it('a client that goes away ends the wait', async () => {
    const abort = new AbortController();
    const answer = waitForIndex(new StateIndex(10), () => 5, 5, 60_000, abort.signal);
    abort.abort();
    expect(await peek(answer)).toEqual({ done: true, value: 5 });
  });
});

describe('StateIndex', () => {
  it('hands out increasing indexes from where it starts', () => {
    const index = new StateIndex(41);
    expect([index.current, index.next(), index.next(), index.current]).toEqual([41, 42, 43, 43]);
  });
});
