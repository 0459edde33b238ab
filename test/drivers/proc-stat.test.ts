/**
 * Table tests for the /proc readers raw_exec relies on to tell one process from another and to read a
 * zombie's exit: `parseProcStat` over real-shaped lines (proc(5) field numbers) and `decodeWaitStatus`.
 */
import { describe, expect, it } from 'vitest';
import { decodeWaitStatus, isLive, parseProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';

/** The fields of a stat line a case sets; the rest are zero (or the defaults below). */
interface StatFields {
  pid?: number;
  comm?: string;
  state?: string;
  ppid?: number;
  pgrp?: number;
  utime?: number;
  stime?: number;
  start?: number;
  exit?: number;
}

/** A 52-field stat line as Linux 3.5+ writes it, with the fields raw_exec reads set from `f`. */
function statLine(f: StatFields): string {
  const fields = Array.from({ length: 50 }, () => '0'); // fields 3..52
  const set = (n: number, v: string | number) => (fields[n - 3] = String(v));
  set(3, f.state ?? 'S');
  set(4, f.ppid ?? 1);
  set(5, f.pgrp ?? 100);
  set(14, f.utime ?? 0);
  set(15, f.stime ?? 0);
  set(22, f.start ?? 0);
  set(25, '18446744073709551615'); // rsslim: larger than 2^53, must not disturb the fields read
  set(52, f.exit ?? 0);
  return `${f.pid ?? 100} (${f.comm ?? 'sleep'}) ${fields.join(' ')}\n`;
}

describe('parseProcStat', () => {
  it.each<[string, StatFields]>([
    ['a plain process', { pid: 4242, comm: 'sleep', state: 'S', ppid: 1, pgrp: 4242, utime: 12, stime: 3, start: 1371021 }],
    ['a comm with spaces', { comm: 'my worker', pgrp: 7 }],
    ['a comm with parentheses and a space after one', { comm: 'a) (b', pgrp: 9 }],
    ['a comm that looks like fields', { comm: ') R 1 2 3', ppid: 5, pgrp: 6 }],
    ['a zombie with its wait status', { state: 'Z', exit: 9 << 8 }],
    ['a running process', { state: 'R', utime: 1e6, stime: 2e6 }],
  ])('%s', (_, f) => {
    const s = parseProcStat(statLine(f));
    expect(s).toEqual({
      pid: f.pid ?? 100,
      comm: f.comm ?? 'sleep',
      state: f.state ?? 'S',
      ppid: f.ppid ?? 1,
      pgrp: f.pgrp ?? 100,
      utime: f.utime ?? 0,
      stime: f.stime ?? 0,
      startTime: f.start ?? 0,
      exitStatus: f.exit ?? 0,
    });
  });

  it('leaves exitStatus out on kernels older than 3.5 (fewer than 52 fields)', () => {
    const old = '12 (init) S 0 12 12 0 -1 4194560 0 0 0 0 7 8 0 0 20 0 1 0 55 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n';
    expect(parseProcStat(old)).toEqual({ pid: 12, comm: 'init', state: 'S', ppid: 0, pgrp: 12, utime: 7, stime: 8, startTime: 55 });
  });

  it('parses the line of this very process', async () => {
    const { readFileSync } = await import('node:fs');
    const s = parseProcStat(readFileSync('/proc/self/stat', 'utf8'));
    expect(s.pid).toBeGreaterThan(0);
    expect(isLive(s)).toBe(true);
    expect(Number.isInteger(s.startTime) && s.startTime > 0).toBe(true);
  });

  it.each([[''], ['1234'], ['1234 sleep) S 1'], ['1234 )sleep( S 1']])('refuses a malformed line %j', (line) => {
    expect(() => parseProcStat(line)).toThrow(/malformed \/proc stat line/);
  });
});

describe('isLive', () => {
  it.each([
    ['R', true], ['S', true], ['D', true], ['T', true], ['Z', false], ['X', false], ['x', false],
  ])('state %s → %s', (state, live) => {
    expect(isLive(parseProcStat(statLine({ state })))).toBe(live);
  });

  it('is false for a process that is gone', () => {
    expect(isLive(undefined)).toBe(false);
  });
});

describe('decodeWaitStatus (Nomad: a signal death reports 128 + signo)', () => {
  it.each([
    ['exit 0', 0, { exitCode: 0, signal: 0 }],
    ['exit 1', 1 << 8, { exitCode: 1, signal: 0 }],
    ['exit 255', 255 << 8, { exitCode: 255, signal: 0 }],
    ['SIGTERM', 15, { exitCode: 143, signal: 15 }],
    ['SIGKILL', 9, { exitCode: 137, signal: 9 }],
    ['SIGSEGV with a core dump', 0x80 | 11, { exitCode: 139, signal: 11 }],
  ])('%s', (_, status, decoded) => {
    expect(decodeWaitStatus(status)).toEqual(decoded);
  });
});
