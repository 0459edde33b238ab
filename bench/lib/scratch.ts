/**
 * Where the benchmarks make their files, and when they remove them.
 *
 * On ext4 without a journal (the box these figures are measured on: `/proc/fs/jbd2` names no journal for
 * its disk), the kernel will not reuse an inode deleted less than 60 s ago (360 s while its inode table
 * block is still dirty), and it finds that out one free inode at a time (`find_inode_bit` →
 * `recently_deleted`, fs/ext4/ialloc.c). A benchmark that removes its tree of thousands of files therefore
 * makes every file and directory the *next* benchmark creates cost hundreds of µs of system CPU instead of
 * ~10-40: `perf` put a fifth of P1's samples there when it ran right after `http-register`'s 1,000 jobs
 * were removed. So under `npm run bench` (bench/run-all.ts sets `ALLOCRUN_BENCH_DISCARD`) a benchmark's
 * scratch dirs are listed, not removed, and run-all removes them all once every figure is taken. Run alone,
 * a benchmark removes its dirs as before.
 */
import { appendFileSync, mkdirSync, closeSync, openSync, readdirSync, readFileSync, existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The env variable naming the file run-all lists deferred dirs in. */
export const DISCARD_LIST_ENV = 'ALLOCRUN_BENCH_DISCARD';

/** A fresh scratch dir under the OS temp dir. */
export function scratchDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** Removes `dir` now, or, under run-all, lists it for removal once every benchmark has run. */
export async function discard(dir: string): Promise<void> {
  const list = process.env[DISCARD_LIST_ENV];
  if (list) {
    appendFileSync(list, `${dir}\n`);
    return;
  }
  await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}

/** Removes every dir listed in `list` (run-all's end). */
export async function discardListed(list: string): Promise<number> {
  const dirs = existsSync(list) ? readFileSync(list, 'utf8').split('\n').filter(Boolean) : [];
  for (const dir of dirs) await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  return dirs.length;
}

/** What making files costs here and now, so a reader can tell this box's file system from the code. */
export interface FileSystemProbe {
  /** CPU (user + system) per new directory with one new file in it, in µs. */
  perDirAndFileUs: number;
  /** "ext4 without a journal", "ext4", "tmpfs", ... as far as /proc tells. */
  kind: string;
}

/**
 * Makes 100 directories with one file each under `dir` (kept: removing them would tax what follows) and
 * times them in CPU: the kernel work one allocation's dirs and files cost here at this moment.
 */
export function probeFileSystem(dir: string): FileSystemProbe {
  const root = join(dir, 'fs-probe');
  mkdirSync(root, { recursive: true });
  const n = 100;
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    mkdirSync(join(root, `d${i}`));
    closeSync(openSync(join(root, `d${i}`, 'f'), 'wx'));
  }
  const c = process.cpuUsage(c0);
  return { perDirAndFileUs: (c.user + c.system) / n, kind: fileSystemKind(dir) };
}

/** The file system `path` is on, from /proc/self/mountinfo, and for ext4 whether it journals. */
function fileSystemKind(path: string): string {
  let best: { point: string; type: string; source: string } | undefined;
  try {
    for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
      const [left, right] = line.split(' - ');
      if (!left || !right) continue;
      const point = left.split(' ')[4]!;
      const [type, source] = right.split(' ');
      const under = point === '/' || path === point || path.startsWith(`${point}/`);
      if (under && (!best || point.length >= best.point.length)) best = { point, type: type!, source: source! };
    }
  } catch {
    return 'unknown';
  }
  if (!best) return 'unknown';
  if (best.type !== 'ext4') return best.type;
  const device = best.source.replace(/^\/dev\//, '');
  let journals: boolean | undefined;
  try {
    journals = readdirSync('/proc/fs/jbd2').some((j) => j.startsWith(`${device}-`));
  } catch {
    journals = undefined;
  }
  return journals === false ? 'ext4 without a journal' : 'ext4';
}

/** One line for a benchmark's output. */
export function describeProbe(where: string, p: FileSystemProbe): string {
  const note = p.kind === 'ext4 without a journal' ? ' (~10-40 µs where no inode was deleted in the last 1-6 minutes: scratch.ts)' : '';
  return `file system at ${where}: ${p.kind}; a new dir with one new file costs ${p.perDirAndFileUs.toFixed(0)} µs of CPU now${note}`;
}
