/**
 * Waits that leave nothing behind on the caller's AbortSignal (launch.ts's wait for a claimed supervisor,
 * workload.ts's waits for an exit): a task's signal outlives many waits, and a listener left per wait (the wait
 * for a claimed supervisor steps every 2 ms for up to 5 s) would pile up on it. Read with node:events'
 * getEventListeners; on a simulated clock, with the supervisor's records written by hand.
 */
import { getEventListeners } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findEarlierSpawn } from '../../src/drivers/raw-exec/launch.ts';
import { attemptPrefix, ensurePrivateDir, writeIntent } from '../../src/drivers/raw-exec/supervisor.ts';
import { AdoptedWorkload, SpawnedWorkload } from '../../src/drivers/raw-exec/workload.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { leftoversRemovedAfterEach } from './raw-exec-leftovers.ts';

const NO_PID = 2 ** 22 + 29;
const { dirs } = leftoversRemovedAfterEach();
const listeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

function prefix(files: Record<string, string> = {}): { taskDir: string; prefix: string } {
  const taskDir = mkdtempSync(join(tmpdir(), 'allocrun-listeners-'));
  dirs.push(taskDir);
  ensurePrivateDir(taskDir);
  const p = attemptPrefix(taskDir, 2, 'tok');
  for (const [suffix, text] of Object.entries(files)) writeFileSync(`${p}${suffix}`, text);
  return { taskDir, prefix: p };
}

describe('the wait for a claimed supervisor', () => {
  it('leaves no listener on the signal after its steps, nor once aborted', async () => {
    const { taskDir, prefix: p } = prefix({ '.claim': '' });
    writeIntent(taskDir, 2, 'tok');
    const clock = new SimulatedClock();
    const ac = new AbortController();
    let found: unknown = 'pending';
    void findEarlierSpawn({ task: 'web', taskDir, attempt: 2, clock, pollMs: 100 }, ac.signal).then((w) => (found = w), (e: unknown) => (found = e));
    for (let i = 0; i < 5; i++) await clock.advance(2);
    expect(found).toBe('pending');
    expect(listeners(ac.signal)).toBe(1);
    writeFileSync(`${p}.status`, '0\n');
    await clock.advance(2);
    expect(found).toBeInstanceOf(AdoptedWorkload);
    expect(listeners(ac.signal)).toBe(0);

    const other = prefix({ '.claim': '' }).taskDir;
    writeIntent(other, 2, 'tok');
    const aborted = new AbortController();
    const waiting = findEarlierSpawn({ task: 'web', taskDir: other, attempt: 2, clock, pollMs: 100 }, aborted.signal).catch((e: unknown) => e);
    await clock.advance(2);
    expect(listeners(aborted.signal)).toBe(1);
    aborted.abort(new Error('stop'));
    expect(((await waiting) as Error).message).toBe('stop');
    expect(listeners(aborted.signal)).toBe(0);
  });
});

describe("a spawned workload's wait", () => {
  it('leaves no listener once it resolves, rejects, or is aborted', async () => {
    const ok = new AbortController();
    await new SpawnedWorkload(() => undefined, NO_PID, undefined, Promise.resolve({ exitCode: 0, signal: 0 })).waitExit(ok.signal);
    expect(listeners(ok.signal)).toBe(0);
    const failed = new AbortController();
    await new SpawnedWorkload(() => undefined, NO_PID, undefined, Promise.reject(new Error('gone'))).waitExit(failed.signal).catch(() => undefined);
    expect(listeners(failed.signal)).toBe(0);
    const aborted = new AbortController();
    const waiting = new SpawnedWorkload(() => undefined, NO_PID, undefined, new Promise(() => undefined)).waitExit(aborted.signal).catch(() => undefined);
    aborted.abort(new Error('stop'));
    await waiting;
    expect(listeners(aborted.signal)).toBe(0);
  });
});

describe("an adopted workload's wait", () => {
  it('leaves no listener once it resolves, is lost, or is aborted', async () => {
    const gone = { pid: NO_PID, startTime: undefined };
    const ok = new AbortController();
    const { prefix: done } = prefix({ '.status': '0\n' });
    await new AdoptedWorkload(NO_PID, NO_PID, 1, new SimulatedClock(), 100, { prefix: done, ...gone }, 'web').waitExit(ok.signal);
    expect(listeners(ok.signal)).toBe(0);
    const lost = new AbortController();
    const { prefix: none } = prefix();
    await new AdoptedWorkload(NO_PID, NO_PID, 1, new SimulatedClock(), 100, { prefix: none, ...gone }, 'web').waitExit(lost.signal).catch(() => undefined);
    expect(listeners(lost.signal)).toBe(0);
    const aborted = new AbortController();
    const live = { pid: process.pid, startTime: undefined };
    const waiting = new AdoptedWorkload(NO_PID, NO_PID, 1, new SimulatedClock(), 100, { prefix: none, ...live }, 'web').waitExit(aborted.signal).catch(() => undefined);
    aborted.abort(new Error('stop'));
    await waiting;
    expect(listeners(aborted.signal)).toBe(0);
  });
});
