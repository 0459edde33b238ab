/**
 * The shared check scheduler (src/checks/scheduler.ts): many checks, one clock timer; runs in due order,
 * equal times in the order asked; a cancelled run never happens; clear() leaves nothing armed.
 */
import { describe, expect, it } from 'vitest';
import { CheckScheduler } from '../../src/checks/scheduler.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

describe('the check scheduler', () => {
  it('keeps one timer for any number of checks and runs each at its time, in order', async () => {
    const clock = new SimulatedClock(0);
    const s = new CheckScheduler(clock);
    const ran: [string, number][] = [];
    for (const [name, at] of [['c', 300], ['a', 100], ['b', 200], ['a2', 100]] as const) s.after(at, () => ran.push([name, clock.now()]));
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(1_000);
    expect(ran).toEqual([['a', 100], ['a2', 100], ['b', 200], ['c', 300]]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('re-arms for an earlier run asked later, and a run can schedule the next (a check every interval)', async () => {
    const clock = new SimulatedClock(0);
    const s = new CheckScheduler(clock);
    const ticks: number[] = [];
    const late: number[] = [];
    s.after(1_000, () => late.push(clock.now()));
    const tick = () => {
      ticks.push(clock.now());
      if (ticks.length < 4) s.after(250, tick);
    };
    s.after(250, tick);
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(2_000);
    expect(ticks).toEqual([250, 500, 750, 1_000]);
    expect(late).toEqual([1_000]);
  });

  it('never runs a cancelled run, and clear() drops every run and the timer', async () => {
    const clock = new SimulatedClock(0);
    const s = new CheckScheduler(clock);
    const ran: string[] = [];
    const cancel = s.after(100, () => ran.push('cancelled'));
    s.after(200, () => ran.push('kept'));
    cancel();
    expect(s.pending).toBe(1);
    await clock.advance(500);
    expect(ran).toEqual(['kept']);
    s.after(100, () => ran.push('cleared'));
    s.clear();
    expect(clock.pendingTimers).toBe(0);
    await clock.advance(500);
    expect(ran).toEqual(['kept']);
  });

  it('a run that throws does not stop the others due at the same time', async () => {
    const clock = new SimulatedClock(0);
    const s = new CheckScheduler(clock);
    const ran: string[] = [];
    s.after(100, () => {
      throw new Error('boom');
    });
    s.after(100, () => ran.push('second'));
    await clock.advance(200);
    expect(ran).toEqual(['second']);
  });
});
