/** Text helpers shared by the commands: Nomad-style aligned columns, times and task state words. */
import type { TaskSpec, TaskState } from '../jobspec/types.ts';

/** Left-aligned columns separated by two spaces (Nomad's `columnize`); the first row is the header. */
export function columns(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, visibleLength(cell))));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell + ' '.repeat(widths[i]! - visibleLength(cell)))).join('  ').trimEnd());
}

/** `key = value` lines with the `=` aligned, as `nomad alloc status` prints its header. */
export function keyValues(pairs: [string, string][]): string[] {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${k.padEnd(width)} = ${v}`);
}

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

/** The printed width of a string, not counting ANSI colour codes. */
export function visibleLength(s: string): number {
  return s.replace(ANSI, '').length;
}

/** RFC 3339 in local time, seconds precision (Nomad's `formatTime`). */
export function formatTime(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  const off = -d.getTimezoneOffset();
  const zone = off === 0 ? 'Z' : `${off > 0 ? '+' : '-'}${pad(Math.floor(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}${zone}`;
}

/** `2m3s ago` (Nomad's `prettyTimeDiff`), coarsened to the two largest units. */
export function timeAgo(ms: number, now: number = Date.now()): string {
  let s = Math.max(0, Math.round((now - ms) / 1000));
  if (s === 0) return 'just now';
  const units: [string, number][] = [['d', 86400], ['h', 3600], ['m', 60], ['s', 1]];
  const parts: string[] = [];
  for (const [u, n] of units) {
    if (s >= n && parts.length < 2) {
      parts.push(`${Math.floor(s / n)}${u}`);
      s %= n;
    }
  }
  return `${parts.join('')} ago`;
}

/** `12:04:05` local wall-clock time, for live event lines. */
export function clockTime(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** `pending`, `running`, `dead` or `dead (failed)`. */
export function taskStateWord(s: TaskState): string {
  return s.state === 'dead' && s.failed ? 'dead (failed)' : s.state;
}

/** `prestart`, `poststart sidecar`, ... or `main` for a task without a lifecycle block. */
export function lifecycleWord(t: TaskSpec | undefined): string {
  if (!t?.lifecycle) return t?.leader ? 'main (leader)' : 'main';
  return `${t.lifecycle.hook}${t.lifecycle.sidecar ? ' sidecar' : ''}`;
}

/** An alloc id as lists show it: the first 8 characters of a UUID, anything else whole. */
export function shortId(id: string): string {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-/i.test(id) ? id.slice(0, 8) : id;
}

const STAGE = { prestart: 0, main: 1, poststart: 2, poststop: 3 } as const;

/**
 * Tasks in the order they run (prestart, main, poststart, poststop), keeping the job file's order within
 * a stage; job-file parsers do not all keep block order, and a table in run order reads better anyway.
 */
export function inRunOrder<T extends { lifecycle?: TaskSpec['lifecycle'] }>(tasks: readonly T[]): T[] {
  return tasks
    .map((t, i) => ({ t, i }))
    .sort((a, b) => STAGE[a.t.lifecycle?.hook ?? 'main'] - STAGE[b.t.lifecycle?.hook ?? 'main'] || a.i - b.i)
    .map(({ t }) => t);
}
