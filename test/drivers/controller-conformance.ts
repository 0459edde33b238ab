/**
 * The controller conformance suite: behaviour every driver's Controller must share (SwarmKit's contract
 * as the task runner relies on it). A driver's test file calls `describeControllerConformance` with a
 * harness that makes controllers for a few canned workloads.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Controller, ExitResult } from '../../src/drivers/controller.ts';

/** What a driver supplies to run the suite. */
export interface ConformanceHarness {
  name: string;
  /** A controller whose workload behaves as described. */
  make(kind: 'exits0' | 'exits3' | 'runsLong' | 'ignoresSigterm'): Promise<Controller> | Controller;
  /** Let `ms` of workload time pass: real drivers await real exit; simulated drivers advance their clock. */
  advance(ms: number): Promise<void>;
  cleanup?(): Promise<void>;
}

/** Steps of workload time between checks, and the most any one step sequence may take. */
const STEP_MS = 100;
const BUDGET_MS = 120_000;

const never = (): AbortSignal => new AbortController().signal;

/**
 * Advances workload time until `p` settles. A real driver's `advance` yields real time, so this is a
 * bounded poll, not a timed assertion: it only fails when the budget runs out.
 */
async function settleWith<T>(h: ConformanceHarness, p: Promise<T>): Promise<T> {
  let settled = false;
  const tracked = p.then(
    (v) => ((settled = true), v),
    (e: unknown) => {
      settled = true;
      throw e;
    },
  );
  // Attach a handler now so a rejection during the loop is not reported as unhandled.
  tracked.catch(() => {});
  for (let spent = 0; !settled; spent += STEP_MS) {
    if (spent >= BUDGET_MS) throw new Error(`${h.name}: operation did not settle within ${BUDGET_MS} ms of workload time`);
    await h.advance(STEP_MS);
  }
  return tracked;
}

async function started(h: ConformanceHarness, kind: Parameters<ConformanceHarness['make']>[0]): Promise<Controller> {
  const c = await h.make(kind);
  await settleWith(h, c.prepare(never()));
  await settleWith(h, c.start(never()));
  return c;
}

const SIGTERM_EXIT: ExitResult = { exitCode: 143, signal: 15 };
const SIGKILL_EXIT: ExitResult = { exitCode: 137, signal: 9 };

/** Registers the conformance tests for one driver. */
export function describeControllerConformance(h: ConformanceHarness): void {
  describe(`${h.name} controller conformance`, () => {
    afterEach(async () => {
      await h.cleanup?.();
    });

    it('prepare is re-entrant', async () => {
      const c = await h.make('exits0');
      await settleWith(h, c.prepare(never()));
      await settleWith(h, c.prepare(never()));
      await settleWith(h, c.start(never()));
      const exit = await settleWith(h, c.wait(never()));
      expect(exit).toMatchObject({ exitCode: 0, signal: 0 });
    });

    it('start then wait resolves with exit code 0', async () => {
      const c = await started(h, 'exits0');
      expect(await settleWith(h, c.wait(never()))).toMatchObject({ exitCode: 0, signal: 0 });
    });

    it('start then wait resolves with exit code 3', async () => {
      const c = await started(h, 'exits3');
      expect(await settleWith(h, c.wait(never()))).toMatchObject({ exitCode: 3, signal: 0 });
    });

    it('shutdown of a long runner ends wait with the kill signal', async () => {
      const c = await started(h, 'runsLong');
      const exit = settleWith(h, c.wait(never()));
      await settleWith(h, c.shutdown({ signal: 'SIGTERM', timeout: 10_000 }, never()));
      expect(await exit).toMatchObject(SIGTERM_EXIT);
    });

    it('shutdown after exit succeeds', async () => {
      const c = await started(h, 'exits0');
      await settleWith(h, c.wait(never()));
      await expect(settleWith(h, c.shutdown({ signal: 'SIGTERM', timeout: 1_000 }, never()))).resolves.toBeUndefined();
    });

    it('force-kills a workload that ignores SIGTERM after the timeout', async () => {
      const c = await started(h, 'ignoresSigterm');
      const exit = settleWith(h, c.wait(never()));
      await settleWith(h, c.shutdown({ signal: 'SIGTERM', timeout: 300 }, never()));
      expect(await exit).toMatchObject(SIGKILL_EXIT);
    });

    it('wait aborted by its signal rejects but the workload keeps running', async () => {
      const c = await started(h, 'runsLong');
      const abort = new AbortController();
      const waiting = c.wait(abort.signal);
      abort.abort(new Error('caller stopped waiting'));
      await expect(waiting).rejects.toThrow('caller stopped waiting');
      // Still running: a later shutdown ends it with the kill signal, not with some earlier exit.
      const exit = settleWith(h, c.wait(never()));
      await settleWith(h, c.shutdown({ signal: 'SIGTERM', timeout: 10_000 }, never()));
      expect(await exit).toMatchObject(SIGTERM_EXIT);
    });

    it('has a handle after start, if it offers handles', async () => {
      const c = await started(h, 'runsLong');
      if (!c.handle) return;
      const handle = c.handle();
      expect(handle).toBeDefined();
      expect(typeof handle!.driver).toBe('string');
      expect(typeof handle!.taskName).toBe('string');
      await settleWith(h, c.terminate(never()));
    });

    it('close leaves the workload running', async () => {
      const c = await started(h, 'runsLong');
      await c.close();
      const pid = c.handle?.()?.pid;
      if (pid !== undefined) expect(() => process.kill(pid, 0)).not.toThrow();
      // The workload was still running at close: a later kill is what ends it.
      const exit = settleWith(h, c.wait(never()));
      await settleWith(h, c.shutdown({ signal: 'SIGTERM', timeout: 10_000 }, never()));
      expect(await exit).toMatchObject(SIGTERM_EXIT);
    });
  });
}
