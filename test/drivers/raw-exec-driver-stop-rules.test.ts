/**
 * How a raw_exec stop waits out the kill timeout (raw-exec-driver.ts, `shutdown`), rule by rule, on a recovered
 * process and a simulated clock: the wait holds nothing once over (no timer on the clock, no listener on the
 * caller's signal), a caller who gives up sends no SIGKILL, and a workload found lost during the wait answers
 * the stop with the loss at once instead of after the timeout.
 */
import { getEventListeners } from 'node:events';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WorkloadLostError } from '../../src/drivers/raw-exec/errors.ts';
import { createRawExecDriver } from '../../src/drivers/raw-exec/raw-exec-driver.ts';
import { driverFixtures, isAlive, NO_PID, stepUntilSettled } from './raw-exec-driver-fixtures.ts';

const { task, context, sleeper } = driverFixtures();
const driver = createRawExecDriver({ supervise: false, pollIntervalMs: 100 });

describe('a stop that is over holds nothing', () => {
  it('leaves no timer on the clock and no listener on the caller\'s signal once the task has exited on the kill signal', async () => {
    const { pid, startTime } = await sleeper();
    const ctx = context();
    const c = driver.recover({ driver: 'raw_exec', taskName: 'web', pid, startTime }, task(), ctx);
    const caller = new AbortController();
    const stopping = c.shutdown({ signal: 'SIGTERM', timeout: 10_000 }, caller.signal);
    expect(await stepUntilSettled(ctx.clock, stopping, 10_000)).toBe(true);
    await expect(stopping).resolves.toBeUndefined();
    expect(ctx.clock.now()).toBeLessThan(10_000);
    expect(ctx.clock.pendingTimers).toBe(0);
    expect(getEventListeners(caller.signal, 'abort')).toEqual([]);
  });
});

describe('a caller who gives up on a stop', () => {
  it('gets its reason at once, and the task is sent no SIGKILL when the kill timeout passes', async () => {
    const { pid, startTime } = await sleeper('trap "" TERM; exec sleep 600', 'sleep');
    const ctx = context();
    const c = driver.recover({ driver: 'raw_exec', taskName: 'web', pid, startTime }, task(), ctx);
    const caller = new AbortController();
    const stopping = c.shutdown({ signal: 'SIGTERM', timeout: 1_000 }, caller.signal);
    await ctx.clock.advance(500);
    let answer: unknown;
    stopping.catch((e: unknown) => (answer = e));
    caller.abort(new Error('given up'));
    // At once: within the turn of the loop the abort came in, with no step of the clock.
    await new Promise((r) => setImmediate(r));
    expect(answer).toEqual(new Error('given up'));
    await ctx.clock.advance(5_000);
    await new Promise((r) => setTimeout(r, 50));
    expect(isAlive(pid)).toBe(true);
    expect(ctx.clock.pendingTimers).toBe(0);
  });
});

describe('a workload found lost while its stop waits', () => {
  it('answers the stop with the loss at once, not after the kill timeout', async () => {
    const { pid, startTime } = await sleeper();
    const ctx = context();
    mkdirSync(ctx.taskDir, { recursive: true });
    // Supervised, but the supervisor is gone and left no status: once the workload dies, its end is lost.
    const supervisor = { prefix: join(ctx.taskDir, 'exec-0-tok'), pid: NO_PID, startTime: 1 };
    const c = driver.recover({ driver: 'raw_exec', taskName: 'web', pid, startTime, state: { pgid: pid, supervisor } }, task(), ctx);
    const stopping = c.shutdown({ signal: 'SIGTERM', timeout: 5_000 }, new AbortController().signal);
    expect(await stepUntilSettled(ctx.clock, stopping, 5_000)).toBe(true);
    await expect(stopping).rejects.toThrow(WorkloadLostError);
    expect(ctx.clock.now()).toBeLessThan(5_000);
  });
});
