/**
 * `sleep` on a clock (src/drivers/clock.ts) resolves after the time on that clock, never before and never
 * with a negative wait; an abort rejects it with the signal's reason, at once when already aborted, and
 * cancels its timer; a timer that fired takes its abort listener away. realClock is the platform's time.
 */
import { describe, expect, it } from 'vitest';
import { realClock, sleep } from '../../src/drivers/clock.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

const settled = async (p: Promise<unknown>) => {
  let state = 'pending';
  p.then(() => (state = 'resolved'), () => (state = 'rejected'));
  await new Promise((r) => setImmediate(r));
  return state;
};

describe('sleep', () => {
  it('resolves once the clock has moved by the time asked, not before', async () => {
    const clock = new SimulatedClock();
    const p = sleep(clock, 1_000);
    await clock.advance(999);
    expect(await settled(p)).toBe('pending');
    await clock.advance(1);
    expect(await settled(p)).toBe('resolved');
  });

  it('treats a negative time as none', async () => {
    const clock = new SimulatedClock();
    const p = sleep(clock, -5);
    await clock.advance(0);
    expect(await settled(p)).toBe('resolved');
  });

  it('rejects with the reason at once when the signal is already aborted', async () => {
    const clock = new SimulatedClock();
    const reason = new Error('stop');
    await expect(sleep(clock, 1_000, AbortSignal.abort(reason))).rejects.toBe(reason);
  });

  it('rejects with the reason when aborted during the wait, and cancels its timer', async () => {
    const cleared: unknown[] = [];
    const clock = new SimulatedClock();
    const watched = { now: () => clock.now(), setTimeout: clock.setTimeout.bind(clock), clearTimeout: (id: unknown) => (cleared.push(id), clock.clearTimeout(id)) };
    const ac = new AbortController();
    const p = sleep(watched, 1_000, ac.signal);
    const reason = new Error('stop');
    ac.abort(reason);
    await expect(p).rejects.toBe(reason);
    expect(cleared).toHaveLength(1);
  });

  it('takes its abort listener away once the time has passed', async () => {
    const clock = new SimulatedClock();
    const ac = new AbortController();
    const removed: string[] = [];
    const remove = ac.signal.removeEventListener.bind(ac.signal);
    ac.signal.removeEventListener = ((type: string, l: EventListener) => (removed.push(type), remove(type, l))) as typeof ac.signal.removeEventListener;
    const p = sleep(clock, 10, ac.signal);
    await clock.advance(10);
    await p;
    expect(removed).toEqual(['abort']);
  });
});

describe('realClock', () => {
  it('tells the platform time and runs and clears platform timers', async () => {
    const before = Date.now();
    expect(realClock.now()).toBeGreaterThanOrEqual(before);
    const fired: string[] = [];
    const cancelled = realClock.setTimeout(() => fired.push('cancelled'), 1);
    realClock.clearTimeout(cancelled);
    await new Promise<void>((resolve) => realClock.setTimeout(() => (fired.push('ran'), resolve()), 5));
    expect(fired).toEqual(['ran']);
  });
});
