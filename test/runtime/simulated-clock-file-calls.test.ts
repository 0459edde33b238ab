/**
 * The simulated clock holds time still while file system calls are in flight: a timer due in the advanced span
 * fires only after the real I/O started before it has answered (and what it started has run), as the
 * runtime's alloc and task dirs need on a loaded machine. A FIFO's open answers when the test says so.
 */
import { execFileSync } from 'node:child_process';
import { open } from 'node:fs/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

const dir = mkdtempSync(join(tmpdir(), 'allocrun-clock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fifos = 0;
/** A FIFO whose open for reading answers `afterMs` of real time later (when a writer opens it), or never. */
function slowFileCall(afterMs: number | undefined): { done: () => boolean; answered: Promise<void>; finish(): Promise<void> } {
  const path = join(dir, `fifo-${fifos++}`);
  execFileSync('mkfifo', [path]);
  let done = false;
  const reading = open(path, 'r').then(async (fh) => {
    done = true;
    await fh.close();
  });
  const writer = () => open(path, 'w').then((fh) => fh.close());
  const timer = afterMs === undefined ? undefined : setTimeout(() => void writer(), afterMs);
  return {
    done: () => done,
    answered: reading,
    // Whatever happened, the FIFO's reader is let go, so no pool thread stays blocked after the row.
    async finish() {
      clearTimeout(timer);
      if (!done) await writer();
      await reading;
    },
  };
}

describe('a simulated clock and the file system calls in flight', () => {
  it.each([
    // A wait far longer than the call needs, so a loaded machine's slow pool cannot run it out.
    { name: 'a timer in the advanced span fires after a call that answers in 60 ms of real time', answersIn: 60, fileCallWaitMs: 60_000, doneFirst: true },
    { name: 'a call still in flight after the wait (a FIFO no one writes) holds time no longer', answersIn: undefined, fileCallWaitMs: 30, doneFirst: false },
    { name: 'a clock that waits for none (fileCallWaitMs 0, as the benchmarks) fires the timer at once', answersIn: 60, fileCallWaitMs: 0, doneFirst: false },
  ])('$name', async ({ answersIn, fileCallWaitMs, doneFirst }) => {
    const clock = new SimulatedClock(0, { fileCallWaitMs });
    const call = slowFileCall(answersIn);
    try {
      let seenAtTimer: boolean | undefined;
      clock.setTimeout(() => (seenAtTimer = call.done()), 100);
      await clock.advance(100);
      expect(seenAtTimer).toBe(doneFirst);
      expect(clock.now()).toBe(100);
    } finally {
      await call.finish();
    }
  });

  it('lets what the answered call started run before the next timer', async () => {
    const clock = new SimulatedClock(0, { fileCallWaitMs: 60_000 });
    const call = slowFileCall(40);
    const order: string[] = [];
    try {
      // The call's answer starts a chain of promise callbacks; the timer at 50 comes after all of them.
      void call.answered.then(async () => {
        for (let i = 0; i < 3; i++) await Promise.resolve();
        order.push('chain');
      });
      clock.setTimeout(() => order.push('timer'), 50);
      await clock.advance(50);
      expect(order).toEqual(['chain', 'timer']);
    } finally {
      await call.finish();
    }
  });
});
