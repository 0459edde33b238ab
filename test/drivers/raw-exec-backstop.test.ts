import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { backstopRound, FULL_LOOK_EVERY } from '../../src/drivers/raw-exec/backstop.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

/** A pid no process holds: a child that has exited and been reaped. */
async function deadPid(): Promise<number> {
  const child = spawn('/bin/true');
  await once(child, 'exit');
  return child.pid!;
}

describe('the backstop round of adopted workloads', () => {
  it('serves every workload of a clock and interval with one timer', () => {
    const clock = new SimulatedClock(0);
    const round = backstopRound(clock, 5_000);
    const leaves = Array.from({ length: 50 }, () => round.add(process.pid, () => undefined));
    expect(clock.pendingTimers).toBe(1);
    for (const leave of leaves) leave();
    expect(clock.pendingTimers).toBe(0);
  });

  it('gives a live pid the full look only every few rounds, and a gone pid at the next round', async () => {
    const clock = new SimulatedClock(0);
    const round = backstopRound(clock, 1_000);
    const looks = { live: 0, gone: 0 };
    const watchLive = () => round.add(process.pid, () => {
      looks.live += 1;
      watchLive(); // still live: the workload joins again, as AdoptedWorkload's poll does
    });
    watchLive();
    round.add(await deadPid(), () => (looks.gone += 1));
    await clock.advance(1_000);
    expect(looks).toEqual({ live: 0, gone: 1 });
    await clock.advance(1_000 * (FULL_LOOK_EVERY - 1));
    expect(looks).toEqual({ live: 1, gone: 1 });
  });

  it('stops looking at a workload that left', async () => {
    const clock = new SimulatedClock(0);
    const round = backstopRound(clock, 1_000);
    let looked = false;
    const leave = round.add(await deadPid(), () => (looked = true));
    leave();
    await clock.advance(10_000);
    expect(looked).toBe(false);
  });
});
