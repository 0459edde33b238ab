/**
 * A profiling workload, not a benchmark with a goal: one agent (built-in hooks on, unless `--no-hooks`)
 * starts N raw_exec `sleep` allocations and kills them, ROUNDS times, and prints the CPU this process and
 * its spawner helper used per start and per kill. Run it under the profiler to see where P1's and P2's
 * agent-side time goes (the helper's own work shows in its CPU line):
 *
 *   node --import tsx --cpu-prof --cpu-prof-dir=/tmp/prof bench/profile/start-kill.ts [allocs=100] [rounds=3]
 *   PROFILE=start|kill PROFILE_OUT=/tmp/prof/kill.cpuprofile node --import tsx bench/profile/start-kill.ts  # that phase only
 *   node bench/profile/summary.mjs /tmp/prof/<file>.cpuprofile      # self time by function
 *
 * `--no-saves` gives the agent a store that keeps nothing: the difference is what the state saves cost.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AllocrunFleet } from '../lib/fleets.ts';
import { killTracked } from '../lib/pids.ts';
import { cpuMark, cpuMsSince, fmt, median } from '../lib/stats.ts';
import { spawnerReady } from '../../src/drivers/raw-exec/spawner.ts';
import type { StateStore } from '../../src/state/store.ts';

const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const ALLOCS = Number(positional[0] ?? 100);
const ROUNDS = Number(positional[1] ?? 3);
const hooks = !process.argv.includes('--no-hooks');
const saves = !process.argv.includes('--no-saves');
/** Keeps nothing: the agent's saves resolve at once (nothing is restored from it). */
const nowhere: StateStore = {
  save: async () => undefined,
  load: async () => undefined,
  list: async () => [],
  remove: async () => undefined,
};

/** Profiles one phase only (rounds after the warm-up), so the start's work and the kill's read apart. */
const phase = process.env['PROFILE'];
const session = phase ? new Session() : undefined;
if (session) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 250 });
}
const profiling = async (which: string, round: number, run: () => Promise<void>) => {
  const on = session && phase === which && round > 0;
  if (on) await session.post('Profiler.start');
  await run();
  if (!on) return;
  const { profile } = await session.post('Profiler.stop');
  if (round === ROUNDS) await writeFile(process.env['PROFILE_OUT'] ?? `/tmp/${which}.cpuprofile`, JSON.stringify(profile));
};

const root = await mkdtemp(join(tmpdir(), 'allocrun-prof-sk-'));
const start: number[] = [];
const kill: number[] = [];
const startCpu: number[] = [];
const killCpu: number[] = [];
try {
  await spawnerReady();
  for (let round = 0; round <= ROUNDS; round++) {
    const fleet = new AllocrunFleet(join(root, String(round)), hooks, saves ? undefined : nowhere);
    fleet.beforeStart();
    let t0 = performance.now();
    let c0 = cpuMark();
    await profiling('start', round, () => fleet.start(ALLOCS));
    const s = performance.now() - t0;
    const sc = cpuMsSince(c0);
    fleet.track();
    t0 = performance.now();
    c0 = cpuMark();
    await profiling('kill', round, () => fleet.kill());
    const k = performance.now() - t0;
    const kc = cpuMsSince(c0);
    fleet.stop();
    // Round 0 warms up (JIT, the helper's first forks) and is not counted.
    if (round === 0) continue;
    start.push(s);
    kill.push(k);
    startCpu.push(sc);
    killCpu.push(kc);
  }
  console.log(
    [
      `${ALLOCS} raw_exec allocs, ${hooks ? 'built-in hooks' : 'no built-in hooks'}${saves ? '' : ', no state saves'}, median of ${ROUNDS} rounds`,
      `  start: ${fmt(median(start), 0)} ms wall, ${fmt(median(startCpu) / ALLOCS, 2)} ms CPU per start (agent + spawner helper)`,
      `  kill:  ${fmt(median(kill), 0)} ms wall, ${fmt(median(killCpu) / ALLOCS, 2)} ms CPU per kill`,
    ].join('\n'),
  );
} finally {
  killTracked();
  await rm(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}
process.exit(0);
