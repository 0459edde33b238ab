/**
 * The stop marker before the signal (raw-exec-driver.ts, `shutdown` and `terminate`), with the interleaving
 * forced: the marker file (`<prefix>.stop`) is made a FIFO, so the driver's write of it blocks until the test
 * opens the other end. While it is held, the task must not have been signalled (a restored agent reads an exit
 * with a marker as the agent's stop, one without as the task's own); and a task that exits on its own while
 * the marker is written, with a caller that has given up meanwhile, is a stop that succeeded.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RawExecController } from '../../src/drivers/raw-exec/raw-exec-driver.ts';
import { lookupBin } from '../../src/drivers/raw-exec/process.ts';
import { createRawExecDriver } from '../../src/drivers/raw-exec/raw-exec-driver.ts';
import { driverFixtures, isAlive, never } from './raw-exec-driver-fixtures.ts';

const { task, context } = driverFixtures();
const canSupervise = ['setsid', 'mkfifo'].every((tool) => lookupBin(tool, '/', '/usr/bin:/bin') !== undefined);
const driver = createRawExecDriver({ pollIntervalMs: 20 });

/**
 * Every marker is removed after its test, failed or not, and the read ends opened on them closed: a write
 * left blocked on a FIFO would hold a libuv thread for good, and so would the kill below of a task the test
 * left running, were the FIFO left.
 */
const markers: string[] = [];
const readEnds: number[] = [];
/** And every task is killed, whatever the test left it doing. */
const started: RawExecController[] = [];
afterEach(async () => {
  for (const marker of markers.splice(0)) {
    // A reader unblocks a write the test never released; the FIFO gone, a later one makes a plain file.
    readEnds.push(openSync(marker, constants.O_RDONLY | constants.O_NONBLOCK));
    rmSync(marker);
  }
  for (const c of started.splice(0)) await c.terminate(never()).catch(() => undefined);
  for (const fd of readEnds.splice(0)) closeSync(fd);
});

/**
 * A supervised task running `script`, and its stop marker made a FIFO nobody reads yet. `release` opens the
 * FIFO's read end and keeps it open to the end of the test: the driver's open for writing then completes
 * whenever it runs (it may still wait its turn in libuv's thread pool when the test releases it).
 */
async function heldMarker(script: string) {
  const ctx = context();
  const c = driver.controller(task({ command: '/bin/sh', args: ['-c', script] }), { ...ctx, attempt: 0 });
  await c.prepare(never());
  await c.start(never());
  started.push(c);
  const prefix = (c.handle()!.state as { supervisor: { prefix: string } }).supervisor.prefix;
  execFileSync('mkfifo', ['-m', '600', `${prefix}.stop`]);
  markers.push(`${prefix}.stop`);
  const release = () => void readEnds.push(openSync(`${prefix}.stop`, constants.O_RDONLY | constants.O_NONBLOCK));
  return { c, ctx, pid: c.pid!, release };
}

/** Turns the loop a few times: whatever the driver would do without the marker written, it would have done. */
async function turns(n = 20): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

describe.runIf(canSupervise)('the stop marker is written before the first signal', () => {
  it.each([
    ['shutdown', (c: RawExecController) => c.shutdown({ signal: 'SIGTERM', timeout: 5_000 }, never()), { exitCode: 143, signal: 15 }],
    ['terminate', (c: RawExecController) => c.terminate(never()), { exitCode: 137, signal: 9 }],
  ])('%s signals nothing while the marker is being written', async (_name, stop, exit) => {
    const { c, pid, release } = await heldMarker('exec sleep 600');
    let stopped = false;
    const stopping = stop(c).then(() => (stopped = true));
    await turns();
    expect([stopped, isAlive(pid)]).toEqual([false, true]);
    release();
    await stopping;
    await expect(c.wait(never())).resolves.toEqual(exit);
  });
});

describe.runIf(canSupervise)('a task that exits on its own while the marker is written', () => {
  it.each([
    ['shutdown', (c: RawExecController, signal: AbortSignal) => c.shutdown({ signal: 'SIGTERM', timeout: 5_000 }, signal)],
    ['terminate', (c: RawExecController, signal: AbortSignal) => c.terminate(signal)],
  ])('makes %s succeed, even for a caller that has given up meanwhile', async (_name, stop) => {
    const { c, ctx, release } = await heldMarker('while [ ! -e go ]; do sleep 0.01; done; exit 5');
    const caller = new AbortController();
    const stopping = stop(c, caller.signal);
    writeFileSync(join(ctx.taskDir, 'go'), '');
    await expect(c.wait(never())).resolves.toEqual({ exitCode: 5, signal: 0 });
    caller.abort(new Error('given up'));
    release();
    await expect(stopping).resolves.toBeUndefined();
  });
});

describe.runIf(canSupervise)('stopBegun: what a restore reads of the stop marker of a handle\'s attempt', () => {
  it.each([
    ['no stop begun', undefined, undefined],
    ['a kill', 'kill' as const, 'kill'],
    ['a restart', 'restart' as const, 'restart'],
  ])('%s', async (_name, reason, expected) => {
    const ctx = context();
    const c = driver.controller(task({ command: '/bin/sh', args: ['-c', 'exec sleep 600'] }), { ...ctx, attempt: 0 });
    await c.prepare(never());
    await c.start(never());
    started.push(c);
    const handle = c.handle()!;
    if (reason) await c.shutdown({ signal: 'SIGTERM', timeout: 5_000, reason }, never());
    expect(driver.stopBegun(handle)).toBe(expected);
    // Another driver's handle is never read as this one's.
    expect(driver.stopBegun({ ...handle, driver: 'exec' })).toBeUndefined();
  });
});
