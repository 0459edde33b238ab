/**
 * P3: full allocation lifecycles per second on the mock driver, in one process. Each allocation has three
 * tasks (a prestart task, the main task, a poststop task), each running 0 s on the real clock, with the
 * built-in hooks on (validate, alloc_dir, task_dir, stats: they touch the disk). Beside it, in the same
 * run and alternating rounds, the same shape as a bare XState machine (bench/lib/bare-alloc.ts), and
 * allocrun without the built-in hooks. `concurrency` allocations are in flight at any time.
 *
 *   npx tsx bench/p3-lifecycle.ts [--quick] [--n 2000] [--rounds 3]
 */
import { createAllocRunner } from '../src/runtime/create-alloc-runner.ts';
import { benchArgs, isMain } from './lib/args.ts';
import { startBareAlloc } from './lib/bare-alloc.ts';
import { runShapeFloorAlloc } from './lib/shape-floor.ts';
import { threeTaskSpec } from './lib/three-task-spec.ts';
import { P3_GOAL } from './lib/goals.ts';
import { cpuMark, cpuMsSince, fmt, median, printGoalRows, printTable, type GoalRow } from './lib/stats.ts';
import { discard, scratchDir } from './lib/scratch.ts';

const CONCURRENCY = 100;

/** Runs `total` jobs with at most `concurrency` in flight. */
async function pool(total: number, concurrency: number, one: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < total) await one(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
}

type Variant = { name: string; run: (i: number, round: string, dataDir: string) => Promise<unknown> };

const variants: Variant[] = [
  {
    name: 'allocrun, built-in hooks',
    run: async (i, round, dataDir) => {
      const r = createAllocRunner(threeTaskSpec(`p3-${round}-h${i}`), { dataDir }).start();
      await r.done;
      r.stop();
    },
  },
  {
    name: 'allocrun, no built-in hooks',
    run: async (i, round, dataDir) => {
      const r = createAllocRunner(threeTaskSpec(`p3-${round}-n${i}`), { dataDir, builtinHooks: false }).start();
      await r.done;
      r.stop();
    },
  },
  { name: 'bare XState alloc', run: (_i) => startBareAlloc({ prestart: 0, main: 0, poststop: 0 }).done },
  // The floor of the shape the goals keep (bench/lib/shape-floor.ts): XState alone, allocrun's actors and events.
  { name: "the shape's floor, built-in hooks", run: () => runShapeFloorAlloc('hooks') },
  { name: "the shape's floor, no built-in hooks", run: () => runShapeFloorAlloc('nohooks') },
];

/** Lifecycles per second of each variant: by wall time and per CPU-second, medians over rounds. */
export interface P3Result {
  n: number;
  rounds: number;
  rows: { name: string; wallPerSec: number; cpuPerSec: number; cpuMsPerAlloc: number }[];
}

/** Runs P3 and returns its medians. */
export async function runP3(opts: { n: number; rounds: number }): Promise<P3Result> {
  const dataDir = await scratchDir('allocrun-p3-');
  try {
    const wall = new Map<string, number[]>(variants.map((v) => [v.name, []]));
    const cpu = new Map<string, number[]>(variants.map((v) => [v.name, []]));
    // Warm-up: JIT and first-time file system costs stay out of the measured rounds.
    for (const v of variants) await pool(Math.min(200, opts.n), CONCURRENCY, (i) => v.run(i, 'warm', dataDir));
    for (let round = 0; round < opts.rounds; round++) {
      for (const v of variants) {
        const t0 = performance.now();
        const c0 = cpuMark();
        await pool(opts.n, CONCURRENCY, (i) => v.run(i, String(round), dataDir));
        cpu.get(v.name)!.push(cpuMsSince(c0));
        wall.get(v.name)!.push(performance.now() - t0);
      }
    }
    return {
      n: opts.n,
      rounds: opts.rounds,
      rows: variants.map((v) => {
        const w = median(wall.get(v.name)!);
        const c = median(cpu.get(v.name)!);
        return { name: v.name, wallPerSec: (opts.n / w) * 1000, cpuPerSec: (opts.n / c) * 1000, cpuMsPerAlloc: c / opts.n };
      }),
    };
  } finally {
    await discard(dataDir);
  }
}

/**
 * The README rows for P3. The rate is lifecycles per CPU-second of this process (what one core would
 * do): on a shared machine the wall-clock rate mostly measures the neighbours; both are printed.
 */
export function p3Goals(r: P3Result): GoalRow[] {
  const hooks = r.rows[0]!;
  const noHooks = r.rows[1]!;
  const bare = r.rows[2]!;
  const [floorHooks, floorNoHooks] = [r.rows[3]!, r.rows[4]!];
  const share = hooks.cpuPerSec / bare.cpuPerSec;
  const noHooksShare = noHooks.cpuPerSec / bare.cpuPerSec;
  const pct = (x: { cpuPerSec: number }) => `${fmt((x.cpuPerSec / bare.cpuPerSec) * 100, 0)}%`;
  const times = (x: { cpuMsPerAlloc: number }, floor: { cpuMsPerAlloc: number }) => `${fmt(x.cpuMsPerAlloc / floor.cpuMsPerAlloc, 1)}×`;
  return [
    {
      item: 'P3 lifecycles per CPU-second, mock, 3 tasks, built-in hooks',
      figure: `${fmt(hooks.cpuPerSec, 0)}/s (${fmt(hooks.cpuMsPerAlloc, 2)} ms CPU each; wall ${fmt(hooks.wallPerSec, 0)}/s)`,
      baseline: `bare XState ${fmt(bare.cpuPerSec, 0)}/s`,
      floor: `bare XState ${fmt(bare.cpuPerSec, 0)}/s`,
      ratio:
        `${fmt(share * 100, 1)}% of bare; no built-in hooks ${fmt(noHooksShare * 100, 1)}% ` +
        `(the shape's floor ${pct(floorHooks)} / ${pct(floorNoHooks)}; allocrun ${times(hooks, floorHooks)} / ${times(noHooks, floorNoHooks)} its floor's CPU)`,
      goal: P3_GOAL.text,
      met: P3_GOAL.met({ hooksShare: share, noHooksShare }),
    },
  ];
}

if (isMain(import.meta.url)) {
  const args = benchArgs({ n: 2000, quickN: 50 });
  const r = await runP3(args);
  console.log(`P3: ${r.n} full lifecycles per variant (3 mock tasks, 0 s each, real clock, ${CONCURRENCY} in flight); median of ${r.rounds} rounds`);
  const bare = r.rows[2]!;
  printTable(
    ['variant', 'per CPU-s', 'CPU ms each', 'vs bare (CPU)', 'wall /s', 'vs bare (wall)'],
    r.rows.map((x) => [
      x.name, fmt(x.cpuPerSec, 0), fmt(x.cpuMsPerAlloc, 2), `${fmt((x.cpuPerSec / bare.cpuPerSec) * 100, 1)}%`,
      fmt(x.wallPerSec, 0), `${fmt((x.wallPerSec / bare.wallPerSec) * 100, 1)}%`,
    ]),
  );
  printGoalRows(p3Goals(r));
}
