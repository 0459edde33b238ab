/** Small statistics and formatting helpers shared by the benchmarks. */
import { spawnerPid } from '../../src/drivers/raw-exec/spawner.ts';
import { procUsage } from './pids.ts';

/** The median of `xs` (the upper one for an even count); NaN for none. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}

/** The q-quantile (0..1) of `xs` by the nearest-rank method. */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** `x` with `digits` decimals, or `n/a` when it is not a finite number. */
export function fmt(x: number, digits = 1): string {
  return Number.isFinite(x) ? x.toFixed(digits) : 'n/a';
}

/** Prints rows as a left-aligned text table under a header. */
export function printTable(header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  console.log(line(header));
  for (const r of rows) console.log(line(r));
}

/** One line of the README's benchmark table: what was measured, against what, and whether the goal holds. */
export interface GoalRow {
  item: string;
  figure: string;
  /** What the ratio divides by. */
  baseline: string;
  /** The floors measured in the same run (bare XState, pm2, ...), each with its own ratio. */
  floor?: string;
  ratio: string;
  goal: string;
  met: boolean | undefined;
}

/** The header of the goal table, matching `goalRowLine`. */
export const GOAL_TABLE_HEADER = '| item | figure | baseline | floors, same run | ratio | goal | met? |\n|---|---|---|---|---|---|---|';

/** One goal row as a Markdown table line. */
export function goalRowLine(r: GoalRow): string {
  const met = r.met === undefined ? 'n/a' : r.met ? 'met' : 'not met';
  return `| ${r.item} | ${r.figure} | ${r.baseline} | ${r.floor ?? ''} | ${r.ratio} | ${r.goal} | ${met} |`;
}

/** Prints goal rows as Markdown, ready for the README's benchmark table. */
export function printGoalRows(rows: readonly GoalRow[]): void {
  console.log('');
  for (const r of rows) console.log(goalRowLine(r));
}

/** Where a CPU measurement starts: this process's usage and its raw_exec spawner helper's, if one runs. */
export interface CpuMark {
  usage: NodeJS.CpuUsage;
  helperMs: number;
}

/** CPU (ms) the raw_exec spawner helper has used; it works for this process, so it counts as this process's. */
function helperCpuMs(): number {
  const pid = spawnerPid();
  return pid === undefined ? 0 : (procUsage(pid)?.cpuMs ?? 0);
}

/** Marks the start of a CPU measurement (see `cpuMsSince`). */
export function cpuMark(): CpuMark {
  return { usage: process.cpuUsage(), helperMs: helperCpuMs() };
}

/** Milliseconds of CPU (user + system) this process, and its spawner helper, used since `since`. */
export function cpuMsSince(since: CpuMark): number {
  const c = process.cpuUsage(since.usage);
  return (c.user + c.system) / 1000 + Math.max(0, helperCpuMs() - since.helperMs);
}
