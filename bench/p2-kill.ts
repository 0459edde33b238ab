/**
 * P2: KILL sent to N single-task raw_exec allocations of `sleep` until every one is terminal, against
 * signalling N plain spawned processes until each has exited (and pm2 stopping them), in the same run.
 *
 *   npx tsx bench/p2-kill.ts [--quick] [--n 100] [--rounds 3] [--no-pm2]
 */
import { benchArgs, isMain } from './lib/args.ts';
import { measureStartKill, type StartKillResult } from './lib/start-kill.ts';
import { fmt, printGoalRows, printTable, type GoalRow } from './lib/stats.ts';

/** The README row for P2. */
export function p2Goals(r: StartKillResult): GoalRow[] {
  const raw = r.fleets[0]!.killMs;
  const hooks = r.fleets[1]!.killMs;
  const pm2 = r.fleets.find((f) => f.name === 'pm2');
  return [
    {
      item: `P2 KILL → all ${r.n} dead`,
      figure: `${fmt(hooks, 0)} ms${pm2 ? ` (pm2 ${fmt(pm2.killMs, 0)} ms, ${fmt(pm2.killMs / raw, 1)}×)` : ''}`,
      baseline: `raw kill → exit ${fmt(raw, 0)} ms`,
      ratio: `${fmt(hooks / raw, 2)}×`,
      goal: '≤ 1.5×',
      met: hooks / raw <= 1.5,
    },
  ];
}

/** Prints the P2 table. */
export function printP2(r: StartKillResult): void {
  const raw = r.fleets[0]!.killMs;
  console.log(`P2: ${r.n} running \`sleep 1000\` processes from the kill to all dead; median of ${r.rounds} rounds`);
  printTable(
    ['fleet', 'kill → dead ms', 'vs raw kill', 'CPU ms here'],
    r.fleets.map((f) => [f.name, fmt(f.killMs, 1), `${fmt(f.killMs / raw, 2)}×`, f.name === 'pm2' ? `${fmt(f.killCpuMs, 0)} (+ daemon)` : fmt(f.killCpuMs, 0)]),
  );
  if (r.pm2Skipped) console.log(`pm2 skipped: ${r.pm2Skipped}`);
  printGoalRows(p2Goals(r));
}

if (isMain(import.meta.url)) {
  const args = benchArgs({ n: 100, quickN: 5 });
  printP2(await measureStartKill({ ...args, withPm2: !process.argv.includes('--no-pm2') }));
}
