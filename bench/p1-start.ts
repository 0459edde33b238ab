/**
 * P1: N single-task raw_exec allocations of `sleep` under one agent, from `run` to every one running,
 * against N plain `child_process.spawn`s of the same command (and pm2 starting them), in the same run.
 *
 *   npx tsx bench/p1-start.ts [--quick] [--n 100] [--rounds 3] [--no-pm2]
 */
import { benchArgs, isMain } from './lib/args.ts';
import { measureStartKill, type StartKillResult } from './lib/start-kill.ts';
import { fmt, printGoalRows, printTable, type GoalRow } from './lib/stats.ts';

/** The README row for P1. */
export function p1Goals(r: StartKillResult): GoalRow[] {
  const raw = r.fleets[0]!.startMs;
  const hooks = r.fleets[1]!.startMs;
  const pm2 = r.fleets.find((f) => f.name === 'pm2');
  return [
    {
      item: `P1 ${r.n} raw_exec allocs → running`,
      figure: `${fmt(hooks, 0)} ms${pm2 ? ` (pm2 ${fmt(pm2.startMs, 0)} ms, ${fmt(pm2.startMs / raw, 1)}×)` : ''}`,
      baseline: `raw spawn ${fmt(raw, 0)} ms`,
      ratio: `${fmt(hooks / raw, 2)}×`,
      goal: '≤ 1.25×',
      met: hooks / raw <= 1.25,
    },
  ];
}

/** Prints the P1 table. */
export function printP1(r: StartKillResult): void {
  const raw = r.fleets[0]!.startMs;
  console.log(`P1: ${r.n} processes of \`sleep 1000\` from start to all running; median of ${r.rounds} rounds`);
  printTable(
    ['fleet', 'to running ms', 'vs raw spawn', 'CPU ms here'],
    r.fleets.map((f) => [f.name, fmt(f.startMs, 1), `${fmt(f.startMs / raw, 2)}×`, f.name === 'pm2' ? `${fmt(f.startCpuMs, 0)} (+ daemon)` : fmt(f.startCpuMs, 0)]),
  );
  if (r.pm2Skipped) console.log(`pm2 skipped: ${r.pm2Skipped}`);
  printGoalRows(p1Goals(r));
}

if (isMain(import.meta.url)) {
  const args = benchArgs({ n: 100, quickN: 5 });
  printP1(await measureStartKill({ ...args, withPm2: !process.argv.includes('--no-pm2') }));
}
