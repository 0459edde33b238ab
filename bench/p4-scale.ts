/**
 * P4: ten thousand live three-task allocations in one agent, on the mock driver (real clock, the main
 * task runs for 24 h, so no OS processes are involved): heap per allocation after a full GC (beside a
 * bare XState allocation of the same shape), KILL → terminal latency while the rest live, and the time a
 * new agent takes to restore them all. The fleet and the restarted agent each run in a child process
 * with --expose-gc (an agent restart is a new process). Runner records go to the agent's LMDB store, as
 * `allocrun agent` keeps them (bench/store-restore.ts sets it beside the file store).
 *
 *   npx tsx bench/p4-scale.ts [--quick] [--n 10000]
 */
import { fork } from 'node:child_process';
import { benchArgs, isMain } from './lib/args.ts';
import { compiledEntry } from './lib/compiled-entry.ts';
import { killTracked, trackPid } from './lib/pids.ts';
import type { RestoreReport, ScaleReport } from './lib/scale-agent.ts';
import { P4_GOAL } from './lib/goals.ts';
import { fmt, printGoalRows, printTable, type GoalRow } from './lib/stats.ts';
import { discard, scratchDir } from './lib/scratch.ts';

/** Everything P4 measures: the first agent's figures and the restarted agent's. */
export type P4Report = ScaleReport & RestoreReport;

/** Runs one scale-agent child (plain JavaScript, as an installed package runs: see compiled-entry.ts) and returns its report. */
async function child<T>(args: string[], store: 'lmdb' | 'files'): Promise<T> {
  const proc = fork(await compiledEntry('bench/lib/scale-agent.ts'), args, {
    execArgv: ['--expose-gc', '--max-old-space-size=8192'],
    env: { ...process.env, ALLOCRUN_BENCH_STORE: store },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  trackPid(proc.pid);
  let report: T | undefined;
  proc.on('message', (m: T) => (report = m));
  const code = await new Promise<number | null>((resolve) => proc.on('exit', (c) => resolve(c)));
  killTracked();
  if (!report) throw new Error(`the scale agent (${args[0]}) exited (${code}) without a report`);
  return report;
}

/**
 * Runs the fleet in one child, then the restart in a second one on the same data dir: an agent restart is a
 * new process, which starts with none of the first agent's heap.
 */
export async function runP4(opts: { n: number; kills: number; drainMs?: number; store?: 'lmdb' | 'files' }): Promise<P4Report> {
  const dataDir = await scratchDir('allocrun-p4-');
  const store = opts.store ?? 'lmdb';
  try {
    const fleet = await child<ScaleReport>(['run', dataDir, String(opts.n), String(opts.kills), String(opts.drainMs ?? 2_000)], store);
    const restart = await child<RestoreReport>(['restore', dataDir], store);
    return { ...fleet, ...restart };
  } finally {
    await discard(dataDir);
  }
}

/** The README rows for P4. */
export function p4Goals(r: P4Report): GoalRow[] {
  const kb = r.heapPerAlloc / 1024;
  return [
    {
      item: `P4 heap per live 3-task alloc (${r.allocs}, mock)`,
      figure: `${fmt(kb, 1)} KB`,
      baseline: `bare XState ${fmt(r.bareHeapPerAlloc / 1024, 1)} KB`,
      ratio: `${fmt(r.heapPerAlloc / r.bareHeapPerAlloc, 1)}×`,
      goal: P4_GOAL.heap.text,
      met: P4_GOAL.heap.met(kb),
    },
    {
      item: `P4 KILL → dead p99 among ${r.allocs} live allocs`,
      figure: `${fmt(r.killP99, 1)} ms (p50 ${fmt(r.killP50, 1)})`,
      baseline: '',
      ratio: '',
      goal: P4_GOAL.killP99.text,
      met: P4_GOAL.killP99.met(r.killP99),
    },
    {
      item: `P4 agent restart restores all`,
      figure: `${r.restored} in ${fmt(r.restoreMs / 1000, 2)} s`,
      baseline: `first start ${fmt(r.startMs / 1000, 1)} s`,
      ratio: `${fmt(r.restoreMs / r.startMs, 2)}×`,
      goal: P4_GOAL.restore.text,
      met: P4_GOAL.restore.met(r.restoreMs, r.restored === r.allocs - r.kills),
    },
  ];
}

if (isMain(import.meta.url)) {
  const args = benchArgs({ n: 10_000, quickN: 100, rounds: 1 });
  const r = await runP4({ n: args.n, kills: Math.min(200, Math.max(5, Math.floor(args.n / 10))) });
  console.log(`P4: ${r.allocs} live 3-task allocations in one agent (mock driver, main runs 24 h, built-in hooks on)`);
  printTable(
    ['measure', 'figure'],
    [
      ['heap per alloc after GC', `${fmt(r.heapPerAlloc / 1024, 1)} KB (bare XState: ${fmt(r.bareHeapPerAlloc / 1024, 1)} KB)`],
      ['all started and running', `${fmt(r.startMs / 1000, 2)} s`],
      [`KILL → terminal, ${r.kills} allocs one by one`, `p50 ${fmt(r.killP50, 1)} ms, p99 ${fmt(r.killP99, 1)} ms, max ${fmt(r.killMax, 1)} ms`],
      ['restart: restored and running', `${r.restored} in ${fmt(r.restoreMs / 1000, 2)} s`],
    ],
  );
  printGoalRows(p4Goals(r));
}
