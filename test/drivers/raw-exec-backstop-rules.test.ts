/**
 * The backstop round of adopted workloads (backstop.ts), rule by rule: one round per clock and interval,
 * one timer per round while anyone is in it, a gone pid (or one that names no process) looked at the next
 * round, every pid every FULL_LOOK_EVERY rounds, and a look that joins again lands in the next round. On a
 * simulated clock; the only processes are this one (a live pid) and a reaped `true` (a gone one).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { beforeAll, describe, expect, it } from 'vitest';
import { backstopRound, FULL_LOOK_EVERY } from '../../src/drivers/raw-exec/backstop.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

let gonePid: number;
beforeAll(async () => {
  const child = spawn('/bin/true');
  await once(child, 'exit');
  gonePid = child.pid!;
});

describe('one round per clock and interval', () => {
  it('is the same round for the same clock and interval, so its workloads share one timer', () => {
    const clock = new SimulatedClock(0);
    expect(backstopRound(clock, 1_000)).toBe(backstopRound(clock, 1_000));
    backstopRound(clock, 1_000).add(process.pid, () => undefined);
    backstopRound(clock, 1_000).add(process.pid, () => undefined);
    expect(clock.pendingTimers).toBe(1);
  });

  it('is another round for another interval, or another clock', () => {
    const clock = new SimulatedClock(0);
    expect(backstopRound(clock, 1_000)).not.toBe(backstopRound(clock, 2_000));
    expect(backstopRound(clock, 1_000)).not.toBe(backstopRound(new SimulatedClock(0), 1_000));
  });

  it('is due one interval after the first workload joins', async () => {
    const clock = new SimulatedClock(0);
    const looked: number[] = [];
    backstopRound(clock, 700).add(gonePid, () => looked.push(clock.now()));
    await clock.advance(699);
    expect(looked).toEqual([]);
    await clock.advance(1);
    expect(looked).toEqual([700]);
  });
});

describe('the round keeps its timer while anyone is in it', () => {
  it('a workload leaving keeps the round going for those still in it', async () => {
    const clock = new SimulatedClock(0);
    const round = backstopRound(clock, 1_000);
    const leave = round.add(process.pid, () => undefined);
    let looked = 0;
    round.add(gonePid, () => (looked += 1));
    leave();
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(1_000);
    expect(looked).toBe(1);
  });

  it('leaving twice, or after the look, harms no one else', async () => {
    const clock = new SimulatedClock(0);
    const round = backstopRound(clock, 1_000);
    const leaveGone = round.add(gonePid, () => undefined);
    await clock.advance(1_000);
    let looked = 0;
    round.add(gonePid, () => (looked += 1));
    leaveGone();
    leaveGone();
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(1_000);
    expect(looked).toBe(1);
  });

  it('arms no timer once every workload in it has had its look', async () => {
    const clock = new SimulatedClock(0);
    backstopRound(clock, 1_000).add(gonePid, () => undefined);
    await clock.advance(1_000);
    expect(clock.pendingTimers).toBe(0);
  });

  it('a workload that joins again from its look is in the next round, on one timer', async () => {
    const clock = new SimulatedClock(0);
    const round = backstopRound(clock, 1_000);
    const looks: number[] = [];
    const join = () => round.add(gonePid, () => {
      looks.push(clock.now());
      if (looks.length < 3) join();
    });
    join();
    await clock.advance(1_000);
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(2_000);
    expect(looks).toEqual([1_000, 2_000, 3_000]);
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('who gets the full look in a round', () => {
  it.each([
    ['a pid that names no process (-1: an adopted workload whose pid was never recorded)', -1],
    ['pid 0 (signal 0 to it would answer for our own group)', 0],
  ])('%s, at the next round', async (_what, pid) => {
    const clock = new SimulatedClock(0);
    let looked = 0;
    backstopRound(clock, 1_000).add(pid, () => (looked += 1));
    await clock.advance(1_000);
    expect(looked).toBe(1);
  });

  it(`a live pid exactly every ${FULL_LOOK_EVERY} rounds, counted per round, not per workload`, async () => {
    const clock = new SimulatedClock(0);
    const round = backstopRound(clock, 1_000);
    const at: number[] = [];
    const watch = () => round.add(process.pid, () => {
      at.push(clock.now() / 1_000);
      watch();
    });
    watch();
    // A second live workload joining later is looked at on the same rounds, not FULL_LOOK_EVERY after it joined.
    await clock.advance(2_000);
    const later: number[] = [];
    const watchLater = () => round.add(process.pid, () => {
      later.push(clock.now() / 1_000);
      watchLater();
    });
    watchLater();
    await clock.advance(1_000 * (2 * FULL_LOOK_EVERY - 2));
    expect(at).toEqual([FULL_LOOK_EVERY, 2 * FULL_LOOK_EVERY]);
    expect(later).toEqual([FULL_LOOK_EVERY, 2 * FULL_LOOK_EVERY]);
  });

  it('a live pid that is not looked at stays in the round without joining again', async () => {
    const clock = new SimulatedClock(0);
    const round = backstopRound(clock, 1_000);
    let looked = 0;
    round.add(process.pid, () => (looked += 1));
    await clock.advance(1_000 * (FULL_LOOK_EVERY - 1));
    expect(looked).toBe(0);
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(1_000);
    expect(looked).toBe(1);
    // Looked at and not joined again: out of the round.
    expect(clock.pendingTimers).toBe(0);
  });
});
