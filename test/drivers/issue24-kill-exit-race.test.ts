/**
 * Issue 24: a kill racing a task's own exit took the agent down. The task runner aborts its driver:shutdown
 * call as soon as driver:wait reports the exit; when that abort lands while raw_exec is writing the
 * stopping marker, the exit-wait promise shutdown made afterwards rejected with nobody listening, and Node
 * ends the process on an unhandled rejection. Real processes throughout.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { realClock } from '../../src/drivers/clock.ts';
import type { DriverContext } from '../../src/drivers/controller.ts';
import { isLive, readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import { createRawExecDriver, type RawExecController } from '../../src/drivers/raw-exec/raw-exec-driver.ts';
import type { TaskSpec } from '../../src/jobspec/types.ts';

const never = (): AbortSignal => new AbortController().signal;
const dirs: string[] = [];
const started: RawExecController[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

afterEach(async () => {
  process.off('unhandledRejection', onUnhandled);
  for (const c of started.splice(0)) await c.terminate(never()).catch(() => undefined);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  unhandled.length = 0;
});

/** Polls `cond` until it holds; a bounded wait for a state, never a timed assertion. */
async function until(cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** What the task has written to its stdout log so far. */
function stdoutOf(name: string): string {
  const allocDir = dirs[dirs.length - 1]!;
  try {
    return readFileSync(join(allocDir, 'alloc', 'logs', `${name}.stdout.0`), 'utf8');
  } catch {
    return '';
  }
}

async function startTask(name: string, script: string): Promise<RawExecController> {
  const allocDir = mkdtempSync(join(tmpdir(), 'allocrun-race-'));
  dirs.push(allocDir);
  const task: TaskSpec = { name, driver: 'raw_exec', config: { command: '/bin/sh', args: ['-c', script] } };
  const ctx: DriverContext = { allocId: 'race', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, taskDir: join(allocDir, name), allocDir, clock: realClock };
  const c = createRawExecDriver().controller(task, ctx);
  started.push(c);
  await c.prepare(never());
  await c.start(never());
  return c;
}

/** Lets Node report any rejection left unhandled by what ran so far: it does so once the microtasks drain. */
async function rejectionsReported(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
}

describe('issue 24: a kill racing the exit of a raw_exec task', () => {
  it('a shutdown aborted while it writes the stopping marker rejects with the abort and leaves no rejection unhandled', async () => {
    process.on('unhandledRejection', onUnhandled);
    const c = await startTask('sleeper', 'exec sleep 600');
    const abort = new AbortController();
    const stopping = c.shutdown({ signal: 'SIGTERM', timeout: 5_000 }, abort.signal);
    // The marker is written off the thread: this abort lands while shutdown waits for that write.
    abort.abort();
    await expect(stopping).rejects.toMatchObject({ name: 'AbortError' });
    await rejectionsReported();
    expect(unhandled).toEqual([]);
  });

  it('a shutdown aborted while it waits for the exit leaves no rejection unhandled', async () => {
    process.on('unhandledRejection', onUnhandled);
    // The task notes each SIGTERM and carries on, so the shutdown is left waiting for an exit.
    const c = await startTask('stubborn', "trap 'echo term' TERM; echo ready; while :; do sleep 0.05; done");
    await until(() => stdoutOf('stubborn').includes('ready'), 'the task to install its trap');
    const abort = new AbortController();
    const stopping = c.shutdown({ signal: 'SIGTERM', timeout: 60_000 }, abort.signal);
    await until(() => stdoutOf('stubborn').includes('term'), 'the task to get SIGTERM');
    abort.abort();
    await expect(stopping).rejects.toMatchObject({ name: 'AbortError' });
    await rejectionsReported();
    expect(unhandled).toEqual([]);
    expect(isLive(readProcStat(c.pid!))).toBe(true);
  });

  it('a task that exits on its own while it is being shut down, the shutdown aborted by its exit, leaves no rejection unhandled', async () => {
    process.on('unhandledRejection', onUnhandled);
    // As the task runner does: the wait answers, and the shutdown under way is aborted at once.
    for (let i = 0; i < 10; i++) {
      const c = await startTask(`quick${i}`, 'exit 0');
      const abort = new AbortController();
      const exited = c.wait(never()).then(() => abort.abort());
      const stopping = c.shutdown({ signal: 'SIGTERM', timeout: 5_000 }, abort.signal).catch((err: unknown) => err);
      await exited;
      const outcome = await stopping;
      // Either the shutdown found the task gone, or its exit aborted it: never anything else.
      if (outcome !== undefined) expect(outcome).toMatchObject({ name: 'AbortError' });
    }
    await rejectionsReported();
    expect(unhandled).toEqual([]);
  });
});
