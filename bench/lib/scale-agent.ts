/**
 * The agent processes of P4, run as children of bench/p4-scale.ts with --expose-gc so heap figures are taken
 * after a full collection. All on the mock driver (real clock, main tasks run for 24 h), so ten thousand
 * allocations need no ten thousand processes. `run` mode:
 *  1. heap per live bare XState allocation of the same shape (the yardstick);
 *  2. N allocations under one agent with the built-in hooks, all running: heap per allocation;
 *  3. KILL → terminal for K of them, one at a time, while the rest live: latency percentiles;
 *  then agent shutdown (tasks left running, every record written) and exit.
 * `restore` mode, a new process as an agent restart is: a new agent on the same data dir, timed from its
 * creation until every allocation runs again.
 *
 *   node --expose-gc bench/lib/scale-agent.ts run <data dir> <allocs> <kills> [drain ms = 2000]
 *   node --expose-gc bench/lib/scale-agent.ts restore <data dir>
 */
import { filter, firstValueFrom } from 'rxjs';
import type { AllocState } from '../../src/jobspec/types.ts';
import type { AllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { createAgent } from '../../src/runtime/create-agent.ts';
import { AgentStore } from '../../src/state/agent-store.ts';
import { startBareAlloc } from './bare-alloc.ts';
import { quantile } from './stats.ts';
import { threeTaskSpec } from './three-task-spec.ts';

/** What the child reports to the parent. */
export interface ScaleReport {
  allocs: number;
  bareHeapPerAlloc: number;
  heapPerAlloc: number;
  startMs: number;
  kills: number;
  killP50: number;
  killP99: number;
  killMax: number;
}

/** What the restore child reports. */
export interface RestoreReport {
  restored: number;
  restoreMs: number;
}

const DAY = '24h';
const BATCH = 500;

function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) global.gc!();
  return process.memoryUsage().heapUsed;
}

/** The main task runs (the prestart task has finished, the poststop one waits). */
const mainRuns = (s: AllocState) => s.taskStates.main?.state === 'running';
const running = (r: AllocRunner) => firstValueFrom(r.state$.pipe(filter((s) => mainRuns(s) || s.taskStates.main?.state === 'dead')));

/** Which store the agent keeps its runners in: the agent's LMDB store (as `allocrun agent` does), or files. */
const STORE = process.env.ALLOCRUN_BENCH_STORE === 'files' ? 'files' : 'lmdb';
const openStore = (dataDir: string) => (STORE === 'lmdb' ? AgentStore.open(dataDir) : undefined);

const send = (report: ScaleReport | RestoreReport) => new Promise<void>((resolve) => process.send!(report, () => resolve()));

/** Phases 1-3; the agent shuts down at the end, leaving its allocations for the restore child. */
async function runFleet(dataDir: string, allocs: number, kills: number, drainMs: number): Promise<ScaleReport> {
  // 1. The bare yardstick.
  let heap0 = heapAfterGc();
  const bare = Array.from({ length: allocs }, () => startBareAlloc({ prestart: 0, main: 86_400_000, poststop: 0 }));
  while (!bare.every((b) => b.main())) await new Promise((r) => setTimeout(r, 50));
  const bareHeapPerAlloc = (heapAfterGc() - heap0) / allocs;
  for (const b of bare) b.actor.send({ type: 'KILL' });
  await Promise.all(bare.map((b) => b.done));
  bare.length = 0;

  // 2. N live allocations under one agent.
  heap0 = heapAfterGc();
  const store = openStore(dataDir);
  const agent = createAgent({ dataDir, store: store?.runners() });
  const t0 = performance.now();
  const runners: AllocRunner[] = [];
  for (let i = 0; i < allocs; i += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, allocs - i) }, (_, j) => agent.run(threeTaskSpec(`p4-${i + j}`, DAY)));
    await Promise.all(batch.map(running));
    runners.push(...batch);
  }
  const startMs = performance.now() - t0;
  const notRunning = runners.filter((r) => !mainRuns(r.getState())).length;
  if (notRunning > 0) throw new Error(`${notRunning} allocations did not reach running`);
  // Let the state writes of the start drain before weighing the heap.
  await new Promise((r) => setTimeout(r, drainMs));
  const heapPerAlloc = (heapAfterGc() - heap0) / allocs;

  // 3. KILL → terminal, one at a time, spread over the fleet, while the rest live.
  const latencies: number[] = [];
  const step = Math.max(1, Math.floor(allocs / kills));
  for (let i = 0; i < allocs && latencies.length < kills; i += step) {
    const r = runners[i]!;
    const k0 = performance.now();
    r.send({ type: 'KILL' });
    await r.done;
    latencies.push(performance.now() - k0);
  }

  // Agent exit: every record written, tasks left running for the next agent.
  await agent.shutdown();
  await store?.close();
  return {
    allocs, bareHeapPerAlloc, heapPerAlloc, startMs,
    kills: latencies.length, killP50: quantile(latencies, 0.5), killP99: quantile(latencies, 0.99), killMax: Math.max(...latencies),
  };
}

/** 4. The restarted agent: from its creation until every allocation it restored runs again. */
async function restoreFleet(dataDir: string): Promise<RestoreReport> {
  const r0 = performance.now();
  const store = openStore(dataDir);
  const agent = createAgent({ dataDir, store: store?.runners() });
  const restored = await agent.start();
  await Promise.all(restored.map(running));
  const restoreMs = performance.now() - r0;
  return { restored: restored.filter((r) => mainRuns(r.getState())).length, restoreMs };
}

if (!global.gc) throw new Error('run with --expose-gc');
const [mode, dataDir, ...rest] = process.argv.slice(2);
if (!dataDir) throw new Error('usage: scale-agent.ts run <data dir> <allocs> <kills> [drain ms] | restore <data dir>');
if (mode === 'run') {
  const [allocs, kills, drainMs = 2_000] = rest.map(Number) as [number, number, number?];
  await send(await runFleet(dataDir, allocs, kills, drainMs));
} else if (mode === 'restore') {
  await send(await restoreFleet(dataDir));
} else {
  throw new Error(`unknown mode ${JSON.stringify(mode)}: run or restore`);
}
process.exit(0);
