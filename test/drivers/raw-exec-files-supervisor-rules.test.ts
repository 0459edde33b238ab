/**
 * The supervisor's files and the /proc readers (supervisor.ts, proc-stat.ts), the rules the first tables left
 * open: the private dir made under a task dir that is not there yet, and a plain file in its place refused by
 * name; a later intent of an attempt as private as its first; a void claim and a stop marker that leave no file
 * open; pruning only the agent's own `exec-` files; a malformed stat line named in at most 80 characters; a
 * zombie child that is no descendant to measure; memory in bytes, as /proc has it in kB. On temp dirs, with a zombie made by a parent that exec's into `sleep` and never reaps.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { descendantsOf, parseProcStat, readProcMemory, readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import { attemptPrefix, ensurePrivateDir, markStopping, privateDir, pruneAttempts, voidClaim, writeIntent } from '../../src/drivers/raw-exec/supervisor.ts';
import { leftoversRemovedAfterEach } from './raw-exec-leftovers.ts';
import { until } from './until.ts';

const { dirs, children } = leftoversRemovedAfterEach();

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'allocrun-supfiles2-'));
  dirs.push(d);
  return d;
}

const mode = (path: string) => statSync(path).mode & 0o777;

/** This process's fds open on `path`. */
function fdsOn(path: string): string[] {
  const target = realpathSync(path);
  return readdirSync('/proc/self/fd').filter((n) => {
    try {
      return readlinkSync(`/proc/self/fd/${n}`) === target;
    } catch {
      return false;
    }
  });
}

describe("the supervisor's private dir", () => {
  it('is made, 0700, under a task dir that is not there yet', () => {
    const taskDir = join(tempDir(), 'alloc', 'web');
    expect(ensurePrivateDir(taskDir)).toBe(privateDir(taskDir));
    expect(mode(privateDir(taskDir))).toBe(0o700);
  });

  it('refuses a plain file in its place, by name', () => {
    const taskDir = tempDir();
    writeFileSync(privateDir(taskDir), 'forged');
    expect(() => ensurePrivateDir(taskDir)).toThrow(
      `the supervisor's dir ${privateDir(taskDir)} is not a directory; it must be a directory of the agent's user (uid ${process.geteuid!()}): remove it and start the task again`,
    );
  });
});

describe('the files a start and a stop leave', () => {
  it("a later intent of the same attempt is as private as its first (0600)", () => {
    const taskDir = tempDir();
    ensurePrivateDir(taskDir);
    writeIntent(taskDir, 2, 'first');
    writeIntent(taskDir, 2, 'second');
    const path = join(privateDir(taskDir), 'exec-2.intent');
    expect(readFileSync(path, 'utf8')).toBe('second\n');
    expect(mode(path)).toBe(0o600);
  });

  it('a void claim leaves no file open', () => {
    const taskDir = tempDir();
    ensurePrivateDir(taskDir);
    const prefix = attemptPrefix(taskDir, 0, 'tok');
    expect(voidClaim(prefix)).toBe(true);
    expect(fdsOn(`${prefix}.claim`)).toEqual([]);
  });

  it('a stop marker for a kill leaves no file open once written', async () => {
    const taskDir = tempDir();
    ensurePrivateDir(taskDir);
    const prefix = attemptPrefix(taskDir, 0, 'tok');
    await markStopping(prefix);
    expect(existsSync(`${prefix}.stop`)).toBe(true);
    expect(fdsOn(`${prefix}.stop`)).toEqual([]);
  });

  it("pruning removes only the agent's own exec- files, not one that merely contains the name", () => {
    const taskDir = tempDir();
    ensurePrivateDir(taskDir);
    for (const n of ['exec-1-a.status', 'old-exec-1-a.status']) writeFileSync(join(privateDir(taskDir), n), '0\n');
    pruneAttempts(taskDir, 20);
    expect(readdirSync(privateDir(taskDir))).toEqual(['old-exec-1-a.status']);
  });
});

describe('the /proc readers', () => {
  it('name a malformed stat line by its first 80 characters only', () => {
    const line = `12 no parenthesis ${'x'.repeat(200)}`;
    expect(() => parseProcStat(line)).toThrow(new Error(`malformed /proc stat line: ${line.slice(0, 80)}`));
  });

  it('count a zombie child as no descendant', async () => {
    const parent = spawn('/bin/sh', ['-c', `/bin/sh -c 'exit 0' & /bin/sh -c 'sleep 600' & exec sleep 600`], { detached: true, stdio: 'ignore' });
    children.push(parent);
    await once(parent, 'spawn');
    const kids = () => readFileSync(`/proc/${parent.pid!}/task/${parent.pid!}/children`, 'utf8').trim().split(' ').filter(Boolean).map(Number);
    await until(() => kids().length === 2 && kids().some((k) => readProcStat(k)?.state === 'Z'), 'a zombie and a live child');
    const live = kids().find((k) => readProcStat(k)?.state !== 'Z')!;
    const zombie = kids().find((k) => k !== live)!;
    const found = descendantsOf(parent.pid!)!.map((s) => s.pid);
    expect(found).toContain(live);
    expect(found).not.toContain(zombie);
  });

  it('read memory in bytes, from the kB /proc reports', async () => {
    // A sleep's memory holds still while both are read.
    const sleeper = spawn('sleep', ['600'], { detached: true, stdio: 'ignore' });
    children.push(sleeper);
    await once(sleeper, 'spawn');
    await until(() => readProcStat(sleeper.pid!)?.comm === 'sleep', 'the exec');
    // Its comm is 'sleep' as soon as the exec starts, before the loader has mapped its libraries: read the
    // memory between two equal status reads, so both sides saw the same process image.
    const statusNow = () => readFileSync(`/proc/${sleeper.pid}/status`, 'utf8').replace(/^(State|voluntary_ctxt_switches|nonvoluntary_ctxt_switches):.*$/gm, '');
    let status = '';
    let read: ReturnType<typeof readProcMemory>;
    await until(() => {
      status = statusNow();
      read = readProcMemory(sleeper.pid!);
      return statusNow() === status;
    }, 'a still process image');
    const kB = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)![1]);
    expect(read!).toEqual({ rss: kB('VmRSS') * 1024, vms: kB('VmSize') * 1024, swap: (/^VmSwap/m.test(status) ? kB('VmSwap') : 0) * 1024 });
    expect(kB('VmRSS')).toBeGreaterThan(0);
  });
});
