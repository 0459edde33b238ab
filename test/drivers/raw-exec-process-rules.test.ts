/**
 * raw_exec's process helpers and /proc readers, rule by rule: where a command is looked for (Nomad's
 * `lookupBin`), which signals reach which processes and what a gone one answers, and what the /proc readers
 * make of a process, its memory, its group and its children. One `sleep` per test at most: milliseconds.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidSignalError } from '../../src/drivers/raw-exec/errors.ts';
import {
  DEFAULT_CLOCK_TICKS,
  decodeWaitStatus,
  descendantsOf,
  isLive,
  parseProcStat,
  processGroupMembers,
  readProcMemory,
  readProcStat,
  scanProcessGroups,
  type ProcStat,
} from '../../src/drivers/raw-exec/proc-stat.ts';
import { lookupBin, signalGroup, signalPid, toSignalNumber } from '../../src/drivers/raw-exec/process.ts';

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A pid no process holds (above the kernel's pid_max limit of 2^22). */
const NO_PID = 2 ** 22 + 7;

/** A task dir holding executables at `exes` and plain files at `plain` (paths relative to it). */
function taskDir(exes: string[], plain: string[] = []): string {
  const dir = mkdtempSync(join(tmpdir(), 'allocrun-lookup-'));
  dirs.push(dir);
  const put = (rel: string, mode: number) => {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), '#!/bin/sh\n');
    chmodSync(join(dir, rel), mode);
  };
  for (const rel of exes) put(rel, 0o755);
  for (const rel of plain) put(rel, 0o644);
  return dir;
}

/** A `sleep` in a process group of its own (as raw_exec starts a task), killed after the test. */
async function groupLeader(): Promise<ChildProcess & { pid: number }> {
  const child = spawn('/bin/sh', ['-c', 'sleep 30 & sleep 30; wait'], { detached: true, stdio: 'ignore' });
  children.push(child);
  await once(child, 'spawn');
  // Both sleeps are up once the group has three members.
  // Wait for the grandchild's exec, not only its fork: between the two it is a second `sh`.
    const sleeping = () => processGroupMembers(child.pid!).some((m) => m.comm === 'sleep');
    for (let i = 0; i < 1000 && !sleeping(); i++) await new Promise((r) => setTimeout(r, 10));
  return child as ChildProcess & { pid: number };
}

describe('a command is looked up as Nomad does: absolute as is, then local/, the task dir, then PATH', () => {
  it('takes an absolute path as it is when it is an executable file', () => {
    const dir = taskDir(['bin/tool'], ['bin/plain']);
    expect(lookupBin(join(dir, 'bin/tool'), '/elsewhere', undefined)).toBe(join(dir, 'bin/tool'));
    expect(lookupBin(join(dir, 'bin/plain'), dir, undefined)).toBeUndefined();
    expect(lookupBin(join(dir, 'bin'), dir, undefined)).toBeUndefined();
    expect(lookupBin(join(dir, 'missing'), dir, `${dir}/bin`)).toBeUndefined();
  });

  it('prefers <task dir>/local/<cmd> to <task dir>/<cmd>', () => {
    const dir = taskDir(['local/tool', 'tool']);
    expect(lookupBin('tool', dir, undefined)).toBe(join(dir, 'local/tool'));
  });

  it('finds <task dir>/<cmd> when local/ has none, and a relative path below the task dir', () => {
    const dir = taskDir(['tool', 'sub/tool2']);
    expect(lookupBin('tool', dir, undefined)).toBe(join(dir, 'tool'));
    expect(lookupBin('sub/tool2', dir, '/bin')).toBe(join(dir, 'sub/tool2'));
  });

  it('skips a file that is not executable, or not a file', () => {
    const dir = taskDir(['bin/tool'], ['local/tool', 'tool']);
    expect(lookupBin('tool', dir, join(dir, 'bin'))).toBe(join(dir, 'bin/tool'));
    mkdirSync(join(dir, 'local/dir'), { recursive: true });
    expect(lookupBin('dir', dir, undefined)).toBeUndefined();
  });

  it('searches PATH in order for a bare name only, relative entries from the task dir, empty ones skipped', () => {
    const dir = taskDir(['a/tool', 'b/tool', 'c/other']);
    expect(lookupBin('tool', dir, `::${dir}/c:${dir}/b:${dir}/a`)).toBe(join(dir, 'b/tool'));
    expect(lookupBin('tool', dir, 'c:a')).toBe(join(dir, 'a/tool'));
    expect(lookupBin('x/tool', dir, `${dir}/a`)).toBeUndefined();
    expect(lookupBin('tool', dir, undefined)).toBeUndefined();
    expect(lookupBin('tool', dir, '')).toBeUndefined();
  });
});

describe('signals are named as Nomad names them', () => {
  it.each([
    ['SIGTERM', constants.signals.SIGTERM],
    ['TERM', constants.signals.SIGTERM],
    ['SIGKILL', constants.signals.SIGKILL],
    ['hup', constants.signals.SIGHUP],
  ])('%s is %i', (name, n) => {
    expect(toSignalNumber(name)).toBe(n);
  });

  it('an unknown name is an InvalidSignalError naming it', () => {
    expect(() => toSignalNumber('SIGNOPE')).toThrow(InvalidSignalError);
    expect(() => toSignalNumber('SIGNOPE')).toThrow('unknown signal "SIGNOPE"');
  });
});

describe('a signal reaches one pid or a whole group, and a gone one answers false', () => {
  it('signalPid answers true for a process it signalled and false for no process', async () => {
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    children.push(child);
    await once(child, 'spawn');
    expect(signalPid(child.pid!, 0)).toBe(true);
    expect(signalPid(NO_PID, 0)).toBe(false);
  });

  it('signalPid throws what is not ESRCH', () => {
    // pid 1 exists and signal 0 to it only checks permission: as root it succeeds, else EPERM is thrown.
    if (process.geteuid?.() === 0) {
      expect(() => signalPid(1, 99_999)).toThrow();
    } else {
      expect(() => signalPid(1, 0)).toThrow(/EPERM/);
    }
  });

  it('signalGroup reaches every member of the group', async () => {
    const leader = await groupLeader();
    const members = processGroupMembers(leader.pid);
    expect(members.length).toBe(3);
    expect(signalGroup(leader.pid, constants.signals.SIGKILL)).toBe(true);
    await once(leader, 'exit');
    for (let i = 0; i < 500 && processGroupMembers(leader.pid).length > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(processGroupMembers(leader.pid)).toEqual([]);
  });

  it('signalGroup answers false for an empty group', () => {
    expect(signalGroup(NO_PID, 0)).toBe(false);
  });

  it.each([1, 0, -1, Number.NaN])('signalGroup refuses group %s: it would reach our own group or every process', (pgid) => {
    expect(() => signalGroup(pgid, 0)).toThrow(`refusing to signal process group ${pgid}`);
  });
});

describe('the /proc readers', () => {
  it('read this process: its pid, its parent, its group, a start time', () => {
    const self = readProcStat(process.pid)!;
    expect(self.pid).toBe(process.pid);
    expect(self.ppid).toBe(process.ppid);
    expect(self.startTime).toBeGreaterThan(0);
    expect(isLive(self)).toBe(true);
  });

  it('read no process for a pid nobody holds', () => {
    expect(readProcStat(NO_PID)).toBeUndefined();
    expect(readProcMemory(NO_PID)).toBeUndefined();
  });

  it.each([
    ['R', true],
    ['S', true],
    ['D', true],
    ['Z', false],
    ['X', false],
    ['x', false],
  ])('a process in state %s is live: %s', (state, live) => {
    expect(isLive({ state } as ProcStat)).toBe(live);
  });

  it('undefined is not live', () => {
    expect(isLive(undefined)).toBe(false);
  });

  it('refuses a stat line without its (comm)', () => {
    expect(() => parseProcStat('123 sleep S 1')).toThrow('malformed /proc stat line: 123 sleep S 1');
    expect(() => parseProcStat('123 )sleep( S 1')).toThrow('malformed /proc stat line');
  });

  it('reads memory in bytes from the kB of /proc/<pid>/status', async () => {
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    children.push(child);
    await once(child, 'spawn');
    // A process just exec'd still grows: compare a reading taken between two that agree.
    const vm = () => readFileSync(`/proc/${child.pid}/status`, 'utf8').split('\n').filter((l) => l.startsWith('Vm')).join('\n');
    let status = '';
    let mem = readProcMemory(child.pid!)!;
    for (let i = 0; i < 200; i++) {
      const before = vm();
      mem = readProcMemory(child.pid!)!;
      if (before === vm()) {
        status = before;
        break;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(mem.rss).toBe(kB(status, 'VmRSS') * 1024);
    expect(mem.vms).toBe(kB(status, 'VmSize') * 1024);
    expect(mem.swap).toBe(kB(status, 'VmSwap') * 1024);
    expect(mem.rss).toBeGreaterThan(0);
    expect(mem.vms).toBeGreaterThan(mem.rss);
  });

  it('a group leader leads its own group', async () => {
    const leader = await groupLeader();
    const stat = readProcStat(leader.pid)!;
    expect([stat.pid, stat.pgrp, stat.ppid, stat.comm]).toEqual([leader.pid, leader.pid, process.pid, 'sh']);
  });

  it('group members: every live process of the group, found in one scan of /proc', async () => {
    const leader = await groupLeader();
    const members = processGroupMembers(leader.pid);
    expect(members.map((m) => m.pgrp)).toEqual([leader.pid, leader.pid, leader.pid]);
    expect(members.map((m) => m.pid)).toContain(leader.pid);
    expect(scanProcessGroups().get(leader.pid)?.map((m) => m.pid).sort()).toEqual(members.map((m) => m.pid).sort());
    expect(processGroupMembers(NO_PID)).toEqual([]);
  });

  it('descendants: children and grandchildren, not the process itself', async () => {
    const leader = await groupLeader();
    const found = descendantsOf(leader.pid);
    if (found === undefined) return; // a kernel without /proc/<pid>/task/<tid>/children
    const members = processGroupMembers(leader.pid).map((m) => m.pid);
    expect(found.map((s) => s.pid).sort()).toEqual(members.filter((p) => p !== leader.pid).sort());
    expect(descendantsOf(NO_PID)).toEqual([]);
  });

  it('descendants reach a grandchild through its parent', async () => {
    const child = spawn('/bin/sh', ['-c', '/bin/sh -c "sleep 30; :" & wait'], { stdio: 'ignore', detached: true });
    children.push(child);
    await once(child, 'spawn');
    // Wait for the grandchild's exec, not only its fork: between the two it is a second `sh`.
    const sleeping = () => processGroupMembers(child.pid!).some((m) => m.comm === 'sleep');
    for (let i = 0; i < 1000 && !sleeping(); i++) await new Promise((r) => setTimeout(r, 10));
    const found = descendantsOf(child.pid!);
    if (found === undefined) return;
    expect(found.length).toBe(2);
    expect(found.map((s) => s.comm).sort()).toEqual(['sh', 'sleep']);
  });

  it('the unit of /proc times is 100 ticks a second (USER_HZ)', () => {
    expect(DEFAULT_CLOCK_TICKS).toBe(100);
  });

  it.each([
    [0x0000, { exitCode: 0, signal: 0 }],
    [0x0300, { exitCode: 3, signal: 0 }],
    [0xff00, { exitCode: 255, signal: 0 }],
    [0x0009, { exitCode: 137, signal: 9 }],
    [0x008f, { exitCode: 143, signal: 15 }],
    [0x007f, { exitCode: 255, signal: 127 }],
  ])('a wait status of %i decodes to %j', (status, exit) => {
    expect(decodeWaitStatus(status)).toEqual(exit);
  });
});

function kB(status: string, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return m ? Number(m[1]) : 0;
}
