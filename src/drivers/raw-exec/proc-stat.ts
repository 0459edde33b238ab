/**
 * Readers for Linux `/proc`: the few fields raw_exec needs to identify a process (start time), to find its
 * process group, to account CPU and memory, and to read a zombie's exit status. Synchronous on purpose:
 * each file is a few hundred bytes served from kernel memory, and a sync read cannot interleave with an exit.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Linux's USER_HZ: the unit of `/proc/<pid>/stat` times. It is 100 on every mainstream architecture. */
export const DEFAULT_CLOCK_TICKS = 100;

/** The fields of `/proc/<pid>/stat` raw_exec uses (field numbers as in proc(5)). */
export interface ProcStat {
  pid: number;
  comm: string;
  /** Field 3: R, S, D, Z (zombie), X (dead), ... */
  state: string;
  ppid: number;
  /** Field 5: process group id. */
  pgrp: number;
  /** Fields 14 and 15: CPU time in clock ticks. */
  utime: number;
  stime: number;
  /** Field 22: start time in clock ticks since boot; with the pid it identifies one process for good. */
  startTime: number;
  /** Field 52 (Linux 3.5+): the waitpid status, meaningful once the process is a zombie. */
  exitStatus?: number;
}

/** Parses the text of `/proc/<pid>/stat`; comm may hold spaces and parentheses, so split after the last `)`. */
export function parseProcStat(text: string): ProcStat {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) throw new Error(`malformed /proc stat line: ${text.slice(0, 80)}`);
  const rest = text.slice(close + 2).trim().split(/\s+/);
  // rest[0] is field 3, so field n is rest[n - 3].
  const field = (n: number): number => Number(rest[n - 3]);
  const stat: ProcStat = {
    pid: Number(text.slice(0, open).trim()),
    comm: text.slice(open + 1, close),
    state: rest[0] ?? '?',
    ppid: field(4),
    pgrp: field(5),
    utime: field(14),
    stime: field(15),
    startTime: field(22),
  };
  if (rest.length >= 50) stat.exitStatus = field(52);
  return stat;
}

/** The stat of a pid, or undefined when there is no such process (or /proc cannot be read). */
export function readProcStat(pid: number): ProcStat | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** True while `pid` is a process that has not exited (a zombie has exited, it only awaits its reaper). */
export function isLive(stat: ProcStat | undefined): stat is ProcStat {
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X' && stat.state !== 'x';
}

/** Memory figures from `/proc/<pid>/status`, in bytes; undefined when the process is gone. */
export interface ProcMemory {
  rss: number;
  vms: number;
  swap: number;
}

/** Reads VmRSS/VmSize/VmSwap from `/proc/<pid>/status` (kB there, so no page-size guess is needed). */
export function readProcMemory(pid: number): ProcMemory | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = (key: string): number => {
    const m = new RegExp(`^${key}:\\s+(\\d+)\\s+kB`, 'm').exec(text);
    return m ? Number(m[1]) * 1024 : 0;
  };
  return { rss: kb('VmRSS'), vms: kb('VmSize'), swap: kb('VmSwap') };
}

/** Every live process whose process group is `pgid` (the leader included while it lives). */
export function processGroupMembers(pgid: number): ProcStat[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const members: ProcStat[] = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readProcStat(Number(name));
    if (stat && stat.pgrp === pgid && isLive(stat)) members.push(stat);
  }
  return members;
}

/** Decodes a waitpid status into Nomad's exit convention: a signal death reports 128 + signo. */
export function decodeWaitStatus(status: number): { exitCode: number; signal: number } {
  const signo = status & 0x7f;
  if (signo === 0) return { exitCode: (status >> 8) & 0xff, signal: 0 };
  return { exitCode: 128 + signo, signal: signo };
}
