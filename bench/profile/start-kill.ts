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
 * `--count-saves` counts the agent's state saves per start and per kill (each phase's trailing saves
 * included: after each timed phase it waits, untimed, until no save is in flight or has come for 300 ms).
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
import { FileStateStore, ensureDataDir } from '../../src/state/file-store.ts';

const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const ALLOCS = Number(positional[0] ?? 100);
const ROUNDS = Number(positional[1] ?? 3);
const hooks = !process.argv.includes('--no-hooks');
const saves = !process.argv.includes('--no-saves');
const counting = saves && process.argv.includes('--count-saves');
let saved = 0;
let lastSave = 0;
let inFlight = 0;
/** The agent's file store, counting its saves. */
const countingStore = (dataDir: string): StateStore => {
  ensureDataDir(dataDir);
  const store = new FileStateStore(dataDir);
  const save = store.save.bind(store);
  store.save = async (id, record) => {
    saved++;
    inFlight++;
    lastSave = performance.now();
    try {
      await save(id, record);
    } finally {
      inFlight--;
      lastSave = performance.now();
    }
  };
  return store;
};
/**
 * Waits (untimed) until no save is in flight and none has begun or ended for 300 ms (a runner's next save
 * begins only once its last one is written); returns the saves counted since `from`.
 */
const savesSince = async (from: number): Promise<number> => {
  while (inFlight > 0 || performance.now() - lastSave < 300) await new Promise((resolve) => setTimeout(resolve, 50));
  return saved - from;
};
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
const startSaves: number[] = [];
const killSaves: number[] = [];
try {
  await spawnerReady();
  for (let round = 0; round <= ROUNDS; round++) {
    const dir = join(root, String(round));
    const fleet = new AllocrunFleet(dir, hooks, saves ? (counting ? countingStore(dir) : undefined) : nowhere);
    let mark = saved;
    fleet.beforeStart();
    let t0 = performance.now();
    let c0 = cpuMark();
    await profiling('start', round, () => fleet.start(ALLOCS));
    const s = performance.now() - t0;
    const sc = cpuMsSince(c0);
    fleet.track();
    const ss = counting ? await savesSince(mark) : 0;
    mark = saved;
    t0 = performance.now();
    c0 = cpuMark();
    await profiling('kill', round, () => fleet.kill());
    const k = performance.now() - t0;
    const kc = cpuMsSince(c0);
    const ks = counting ? await savesSince(mark) : 0;
    fleet.stop();
    // Round 0 warms up (JIT, the helper's first forks) and is not counted.
    if (round === 0) continue;
    start.push(s);
    kill.push(k);
    startCpu.push(sc);
    killCpu.push(kc);
    startSaves.push(ss / ALLOCS);
    killSaves.push(ks / ALLOCS);
  }
  console.log(
    [
      `${ALLOCS} raw_exec allocs, ${hooks ? 'built-in hooks' : 'no built-in hooks'}${saves ? '' : ', no state saves'}, median of ${ROUNDS} rounds`,
      `  start: ${fmt(median(start), 0)} ms wall, ${fmt(median(startCpu) / ALLOCS, 2)} ms CPU per start (agent + spawner helper)`,
      `  kill:  ${fmt(median(kill), 0)} ms wall, ${fmt(median(killCpu) / ALLOCS, 2)} ms CPU per kill`,
      ...(counting ? [`  saves: ${startSaves.map((n) => fmt(n, 2)).join(' / ')} per start, ${killSaves.map((n) => fmt(n, 2)).join(' / ')} per kill (each round)`] : []),
    ].join('\n'),
  );
} finally {
  killTracked();
  await rm(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}
process.exit(0);
