/**
 * Every process a benchmark starts is tracked by pid and start time, and killed by pid when the benchmark
 * ends however it ends (never by name: other work shares the machine). The start time guards against
 * killing an unrelated process that reused a pid.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { isLive, readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';

const tracked = new Map<number, number | undefined>();
let hooked = false;

/** Remembers `pid` (with its start time) so `killTracked` and process exit reap it. */
export function trackPid(pid: number | undefined): void {
  if (pid === undefined) return;
  tracked.set(pid, readProcStat(pid)?.startTime);
  if (!hooked) {
    hooked = true;
    process.on('exit', () => killTracked());
    for (const sig of ['SIGINT', 'SIGTERM'] as const) {
      process.once(sig, () => {
        killTracked();
        process.exit(130);
      });
    }
  }
}

/** True while `pid` is the live process that was tracked (same start time). */
function stillOurs(pid: number, startTime: number | undefined): boolean {
  const stat = readProcStat(pid);
  return isLive(stat) && (startTime === undefined || stat.startTime === startTime);
}

/** SIGKILLs every tracked process (and its group, when it leads one) that is still alive; returns how many. */
export function killTracked(): number {
  let killed = 0;
  for (const [pid, startTime] of tracked) {
    if (stillOurs(pid, startTime)) {
      const leader = readProcStat(pid)?.pgrp === pid;
      try {
        process.kill(leader ? -pid : pid, 'SIGKILL');
        killed++;
      } catch {
        // Gone between the check and the kill: nothing to do.
      }
    }
    tracked.delete(pid);
  }
  return killed;
}

/** Every live descendant of `pid`: its children, theirs (a raw_exec agent's supervisors are its spawner helper's children), and so on. */
export function descendantPidsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    const stat = readProcStat(Number(name));
    if (!stat || !isLive(stat)) continue;
    const siblings = children.get(stat.ppid);
    if (siblings) siblings.push(stat.pid);
    else children.set(stat.ppid, [stat.pid]);
  }
  const out: number[] = [];
  for (let queue = [pid]; queue.length > 0; ) {
    const next: number[] = [];
    for (const p of queue) for (const child of children.get(p) ?? []) next.push(child);
    out.push(...next);
    queue = next;
  }
  return out;
}

/**
 * CPU time (user + system, ms) of the children `pid` has reaped, theirs included (proc(5) fields 16 and 17,
 * cutime and cstime): summed by the kernel at full precision, where a short-lived child's own figures
 * round to zero ticks.
 */
export function reapedChildrenCpuMs(pid: number, ticksPerSecond = 100): number | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const rest = text.slice(text.lastIndexOf(')') + 2).trim().split(/\s+/);
  // rest[0] is field 3, so field n is rest[n - 3].
  return ((Number(rest[16 - 3]) + Number(rest[17 - 3])) * 1000) / ticksPerSecond;
}

/** CPU time (user + system, ms) and resident memory (bytes) of `pid` from /proc. */
export function procUsage(pid: number, ticksPerSecond = 100): { cpuMs: number } | undefined {
  const stat = readProcStat(pid);
  if (!stat) return undefined;
  return { cpuMs: ((stat.utime + stat.stime) * 1000) / ticksPerSecond };
}
