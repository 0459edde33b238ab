/**
 * Driver calls a controller marks signal-free (src/hooks/signal-free.ts `signalFreeCalls`) are handed the one
 * never-aborted signal, so the start and the release make no AbortSignal for them; unmarked calls, and every call
 * of an unmarked (user's) controller, still get their own. The mock marks prepare and remove, and start unless
 * its config blocks the start (start_block_for, which reads the signal).
 */
import { describe, expect, it } from 'vitest';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.ts';
import type { Controller, Driver } from '../../src/drivers/controller.ts';
import { ignoresSignal, NEVER_ABORTED, signalFreeCalls } from '../../src/hooks/signal-free.ts';
import { createTaskRunner } from '../../src/runtime/create-task-runner.ts';
import type { TaskSpec } from '../../src/jobspec/types.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

/** A driver whose controllers record the signal of each call, marked with `marks` when given. */
function recordingDriver(seen: Record<string, AbortSignal[]>, marks?: ('prepare' | 'start' | 'remove')[]): Driver {
  const record = (call: string, signal: AbortSignal) => (seen[call] ??= []).push(signal);
  return {
    name: 'rec',
    controller(): Controller {
      let exit!: () => void;
      const exited = new Promise<void>((r) => (exit = r));
      const ctrl: Controller = {
        prepare: async (signal) => void record('prepare', signal),
        start: async (signal) => {
          record('start', signal);
          exit();
        },
        wait: async (signal) => {
          record('wait', signal);
          await exited;
          return { exitCode: 0, signal: 0 };
        },
        shutdown: async () => undefined,
        terminate: async () => undefined,
        remove: async (signal) => void record('remove', signal),
        close: async () => undefined,
      };
      return marks ? signalFreeCalls(ctrl, Object.fromEntries(marks.map((m) => [m, ctrl[m]]))) : ctrl;
    },
  };
}

const task: TaskSpec = { name: 't', driver: 'rec', config: {} };

async function runOnce(driver: Driver): Promise<void> {
  const clock = new SimulatedClock(0);
  const runner = createTaskRunner(task, { clock, jobType: 'batch', drivers: { rec: driver }, allocDir: '/nonexistent/a' }).start();
  await clock.advanceUntil(() => runner.getState().state === 'dead');
  runner.stop();
}

describe('signal-free driver calls', () => {
  it("a controller's marked calls are handed the never-aborted signal; its unmarked ones a signal of their own", async () => {
    const seen: Record<string, AbortSignal[]> = {};
    await runOnce(recordingDriver(seen, ['prepare', 'start', 'remove']));
    // (A standalone batch task that exits 0 is started again by its restart policy: four runs, each checked.)
    for (const call of ['prepare', 'start', 'remove']) {
      expect(seen[call]!.length).toBeGreaterThan(0);
      for (const s of seen[call]!) expect([call, s]).toEqual([call, NEVER_ABORTED]);
    }
    expect(seen['wait']!.length).toBeGreaterThan(0);
    for (const s of seen['wait']!) expect(s).not.toBe(NEVER_ABORTED);
  });

  it("an unmarked controller's calls each get their own signal, as before", async () => {
    const seen: Record<string, AbortSignal[]> = {};
    await runOnce(recordingDriver(seen));
    const signals = ['prepare', 'start', 'wait', 'remove'].map((c) => seen[c]![0]!);
    for (const s of signals) expect(s).not.toBe(NEVER_ABORTED);
    expect(new Set(signals.slice(0, 2)).size).toBe(1); // prepare and start are one call's
    expect(signals[3]).not.toBe(signals[2]);
  });

  it('the mock marks prepare and remove at once, and start once prepared without a start_block_for', async () => {
    const ctx = { allocId: 'a', taskDir: '/nonexistent/a/t', allocDir: '/nonexistent/a', clock: new SimulatedClock(0), env: {} };
    const plain = createMockDriver().controller({ name: 't', driver: 'mock', config: { run_for: '1s' } }, ctx);
    expect([ignoresSignal(plain, 'prepare'), ignoresSignal(plain, 'remove'), ignoresSignal(plain, 'start')]).toEqual([true, true, false]);
    await plain.prepare(NEVER_ABORTED);
    expect(ignoresSignal(plain, 'start')).toBe(true);
    const blocking = createMockDriver().controller({ name: 't', driver: 'mock', config: { run_for: '1s', start_block_for: '5s' } }, ctx);
    await blocking.prepare(NEVER_ABORTED);
    expect(ignoresSignal(blocking, 'start')).toBe(false);
    expect(ignoresSignal({}, 'start')).toBe(false);
  });

  it('a marked method replaced on the controller (a wrapper that reads its signal) is not taken for the marked one', async () => {
    const ctx = { allocId: 'a', taskDir: '/nonexistent/a/t', allocDir: '/nonexistent/a', clock: new SimulatedClock(0), env: {} };
    const c = createMockDriver().controller({ name: 't', driver: 'mock', config: { run_for: '1s' } }, ctx);
    const start = c.start.bind(c);
    c.start = async (signal) => {
      signal.throwIfAborted();
      return start(signal);
    };
    await c.prepare(NEVER_ABORTED);
    expect([ignoresSignal(c, 'prepare'), ignoresSignal(c, 'start')]).toEqual([true, false]);
  });
});

