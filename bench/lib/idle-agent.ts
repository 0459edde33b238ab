/**
 * The agent process of P6, run as a child of bench/p6-idle.ts so its CPU and memory are its own: starts
 * an agent with the built-in hooks, runs N raw_exec `sleep` allocations, tells the parent their pids (so
 * the parent can reap them whatever happens), then measures its own CPU while they sit idle, first with
 * nobody reading stats, then with a subscriber on every allocation's `stats$`. Reports over IPC, kills the
 * allocations and exits. With `restart`, the agent is shut down and a new one restores the allocations and
 * adopts their live workloads before the windows open: what an agent costs after a restart.
 *
 *   node --import tsx bench/lib/idle-agent.ts <allocs> <idle seconds> <watched seconds> [settle seconds = 2] [restart]
 */
import type { Subscription } from 'rxjs';
import { AllocrunFleet } from './fleets.ts';
import { descendantPidsOf } from './pids.ts';
import { cpuMark, cpuMsSince } from './stats.ts';
import { readProcMemory } from '../../src/drivers/raw-exec/proc-stat.ts';
import { spawnerPid, spawnerReady } from '../../src/drivers/raw-exec/spawner.ts';
import { discard, scratchDir } from './scratch.ts';

/** What the child reports to the parent. */
export type IdleAgentMessage =
  | { type: 'pids'; pids: number[] }
  | { type: 'result'; allocs: number; idleSec: number; idleCpuMs: number; watchedSec: number; watchedCpuMs: number; rssBefore: number; rssIdle: number; startMs: number };

const send = (m: IdleAgentMessage) => new Promise<void>((resolve) => process.send!(m, () => resolve()));
/** The agent's resident memory with its raw_exec spawner helper's: the helper holds the supervisors' pipes. */
function agentRss(): number {
  const helper = spawnerPid();
  return process.memoryUsage().rss + (helper === undefined ? 0 : (readProcMemory(helper)?.rss ?? 0));
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

const [allocs, idleSec, watchedSec, settleSec = 2] = process.argv.slice(2, 6).map(Number) as [number, number, number, number?];
const restart = process.argv[6] === 'restart';
const dataDir = await scratchDir('allocrun-p6-');
const fleet = new AllocrunFleet(dataDir);
try {
  // The spawner helper is part of the agent's memory from the start: weigh it once it is up.
  await spawnerReady();
  global.gc?.();
  const rssBefore = agentRss();
  const t0 = performance.now();
  try {
    await fleet.start(allocs);
    fleet.track();
  } finally {
    await send({ type: 'pids', pids: descendantPidsOf(process.pid) });
  }
  if (restart) await fleet.restart();
  const startMs = performance.now() - t0;
  // Let the start's aftermath (state writes, first timers) pass before the idle window opens.
  await wait(settleSec * 1000);
  let c0 = cpuMark();
  await wait(idleSec * 1000);
  const idleCpuMs = cpuMsSince(c0);
  global.gc?.();
  const rssIdle = agentRss();

  const subs: Subscription[] = fleet.runners().map((r) => r.stats$.subscribe(() => undefined));
  c0 = cpuMark();
  await wait(watchedSec * 1000);
  const watchedCpuMs = cpuMsSince(c0);
  for (const s of subs) s.unsubscribe();

  await send({ type: 'result', allocs, idleSec, idleCpuMs, watchedSec, watchedCpuMs, rssBefore, rssIdle, startMs });
  await fleet.kill();
  fleet.stop();
} finally {
  await discard(dataDir);
}
process.exit(0);
