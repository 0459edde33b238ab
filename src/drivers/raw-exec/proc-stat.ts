/**
 * Readers for Linux `/proc`: the few fields raw_exec needs to identify a process (start time), to find its
 * process group, to account CPU and memory, and to read a zombie's exit status. Synchronous on purpose:
 * each file is a few hundred bytes served from kernel memory, and a sync read cannot interleave with an exit.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';

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

const VM_FIELDS = { rss: /^VmRSS:\s+(\d+)\s+kB/m, vms: /^VmSize:\s+(\d+)\s+kB/m, swap: /^VmSwap:\s+(\d+)\s+kB/m };

/** Reads VmRSS/VmSize/VmSwap from `/proc/<pid>/status` (kB there, so no page-size guess is needed). */
export function readProcMemory(pid: number): ProcMemory | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  return parseProcMemory(text);
}

/** The memory figures of a `/proc/<pid>/status` text, in bytes; a field it lacks (VmSwap without swap) is 0. */
export function parseProcMemory(text: string): ProcMemory {
  const kb = (re: RegExp): number => {
    const m = re.exec(text);
    return m ? Number(m[1]) * 1024 : 0;
  };
  return { rss: kb(VM_FIELDS.rss), vms: kb(VM_FIELDS.vms), swap: kb(VM_FIELDS.swap) };
}

/** Whether a /proc entry name is a pid (all digits), without a regex per entry. */
export function isPidName(name: string): boolean {
  if (name.length === 0) return false;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** Every live process on the host by process group: one pass over `/proc`, one `stat` read per process. */
export function scanProcessGroups(): Map<number, ProcStat[]> {
  const groups = new Map<number, ProcStat[]>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return groups;
  }
  for (const name of entries) {
    if (!isPidName(name)) continue;
    const stat = readProcStat(Number(name));
    if (!isLive(stat)) continue;
    const members = groups.get(stat.pgrp);
    if (members) members.push(stat);
    else groups.set(stat.pgrp, [stat]);
  }
  return groups;
}

/** Every live process whose process group is `pgid` (the leader included while it lives). */
export function processGroupMembers(pgid: number): ProcStat[] {
  return scanProcessGroups().get(pgid) ?? [];
}

let childrenFiles: boolean | undefined;

/** Whether this kernel offers `/proc/<pid>/task/<tid>/children` (CONFIG_PROC_CHILDREN), checked once. */
function hasChildrenFiles(): boolean {
  childrenFiles ??= existsSync(`/proc/${process.pid}/task/${process.pid}/children`);
  return childrenFiles;
}

/**
 * The live descendants of `pid` (not `pid` itself), found through `/proc/<pid>/task/<tid>/children`
 * without scanning every process on the host. Undefined when the kernel has no such files: the caller
 * must scan `/proc` instead.
 */
export function descendantsOf(pid: number): ProcStat[] | undefined {
  if (!hasChildrenFiles()) return undefined;
  const found: ProcStat[] = [];
  const seen = new Set<number>([pid]);
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${parent}/task`);
    } catch {
      continue; // exited meanwhile
    }
    for (const tid of tids) {
      let text: string;
      try {
        text = readFileSync(`/proc/${parent}/task/${tid}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const word of text.split(' ')) {
        if (!isPidName(word)) continue;
        const child = Number(word);
        if (seen.has(child)) continue;
        seen.add(child);
        const stat = readProcStat(child);
        if (!isLive(stat)) continue;
        found.push(stat);
        queue.push(child);
      }
    }
  }
  return found;
}

/** Decodes a waitpid status into Nomad's exit convention: a signal death reports 128 + signo. */
export function decodeWaitStatus(status: number): { exitCode: number; signal: number } {
  const signo = status & 0x7f;
  if (signo === 0) return { exitCode: (status >> 8) & 0xff, signal: 0 };
  return { exitCode: 128 + signo, signal: signo };
}
