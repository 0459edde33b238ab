/**
 * Which output pipes an agent reads again (launch.ts `openOutput`): a live supervisor's own, through
 * `/proc/<pid>/fd/5` and `6`; never those of a process that now holds the supervisor's pid under another
 * start time; nor half of a pair. Whatever it does not hand over it closes. Each rule holds whoever opens
 * them (output-pipes.ts): the agent itself, as on the main thread, or the spawner helper, as in a worker
 * thread. A shell stands in for the supervisor: like SUPERVISOR_SCRIPT under dash, it holds two pipes
 * read-write on fds 5 and 6.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { isMainThread } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { openOutput } from '../../src/drivers/raw-exec/launch.ts';
import { openHere, openInHelper } from '../../src/drivers/raw-exec/output-pipes.ts';
import { readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import { attemptPrefix, ensurePrivateDir, type SupervisorRef } from '../../src/drivers/raw-exec/supervisor.ts';
import { leftoversRemovedAfterEach } from './raw-exec-leftovers.ts';
import { until } from './until.ts';

const { dirs, children } = leftoversRemovedAfterEach();

/** A stand-in supervisor holding pipes on `fds` (5 and 6 by default), with `out` written into fd 5. */
async function standIn(fds: number[] = [5, 6], out = 'hello'): Promise<{ pid: number; startTime: number; prefix: string }> {
  const open = fds.map((fd) => `exec ${fd}<<E\nE\nexec ${fd}<>/proc/self/fd/${fd}`).join('\n');
  const script = `${open}\n${fds.includes(5) ? `echo ${out} >&5\n` : ''}echo ready >&2; exec sleep 600`;
  const child = spawn('/bin/sh', ['-c', script], { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  await once(child.stderr!, 'data');
  const dir = mkdtempSync(join(tmpdir(), 'allocrun-output-'));
  dirs.push(dir);
  ensurePrivateDir(dir);
  return { pid: child.pid!, startTime: readProcStat(child.pid!)!.startTime, prefix: attemptPrefix(dir, 0, 'tok') };
}

/** How many of this process's fds are on the stand-in's pipe at `fd`. */
function ourFdsOn(pid: number, fd: number): number {
  const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
  return readdirSync('/proc/self/fd').filter((n) => {
    try {
      return readlinkSync(`/proc/self/fd/${n}`) === target;
    } catch {
      return false;
    }
  }).length;
}

/** Opened here only on the main thread: in a worker (Stryker's runs) that is the very leak output-pipes.ts avoids. */
const ways = [...(isMainThread ? [['opened here', openHere] as const] : []), ['opened by the spawner helper', openInHelper] as const];

describe.each(ways)("an agent reads a supervisor's output pipes again, %s", (_way, open) => {
  it("through a live supervisor's own fds 5 and 6", async () => {
    const s = await standIn();
    const ref: SupervisorRef = { prefix: s.prefix, pid: s.pid, startTime: s.startTime };
    const out = (await openOutput(ref, undefined, open))!;
    expect(out).toBeDefined();
    let text = '';
    out.stdout.on('data', (d: Buffer) => (text += d.toString()));
    await until(() => text === 'hello\n', 'the output');
    expect(ourFdsOn(s.pid, 6)).toBe(1);
    for (const sock of [out.stdout, out.stderr] as Socket[]) sock.destroy();
  });

  it('not through a process that holds the pid under another start time, leaving none of its pipes open', async () => {
    const s = await standIn();
    expect(await openOutput({ prefix: s.prefix, pid: s.pid, startTime: s.startTime + 1 }, undefined, open)).toBeUndefined();
    expect([ourFdsOn(s.pid, 5), ourFdsOn(s.pid, 6)]).toEqual([0, 0]);
  });

  it("not through a gone supervisor's FIFOs when only one is left, leaving it closed", async () => {
    const s = await standIn();
    execFileSync('mkfifo', ['-m', '600', `${s.prefix}.out`]);
    expect(await openOutput({ prefix: s.prefix, pid: 2 ** 22 + 23, startTime: undefined }, undefined, open)).toBeUndefined();
    const target = realpathSync(`${s.prefix}.out`);
    const held = readdirSync('/proc/self/fd').filter((n) => {
      try {
        return readlinkSync(`/proc/self/fd/${n}`) === target;
      } catch {
        return false;
      }
    });
    expect(held).toEqual([]);
  });

  it.each([[[5]], [[6]]])('not when only one of the two pipes is there (fd %j), leaving it closed', async (fds) => {
    const s = await standIn(fds);
    expect(await openOutput({ prefix: s.prefix, pid: s.pid, startTime: s.startTime }, undefined, open)).toBeUndefined();
    expect(ourFdsOn(s.pid, fds[0]!)).toBe(0);
  });
});
