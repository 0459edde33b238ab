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
 * `--timeline` prints, per round, when (ms after the first KILL) the kill's milestones came: the KILLs all
 * sent, the first and last kill marker made, the first and last stop signal sent, the first and last exit
 * report from the spawner helper, the first and last runner done, and the agent's CPU up to the last signal
 * (this process's, its pool threads included; the helper's not); and the time the agent's thread spent inside
 * `kill()` (the stop signals, and the group probes at the exits) and how often the scheduler took its core;
 * then, untimed, when state saves were written from the first KILL on (each rename over `state.json` back from
 * the pool: the kill's two per runner, the Killing one and the last, and any of the start's still in flight),
 * which a runner's done does not wait for.
 */
import { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { Session } from 'node:inspector/promises';
import { performance as perfHooks, type EventLoopUtilization } from 'node:perf_hooks';
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
 * Waits (untimed) until no save is in flight and none has begun or ended for 300 ms, counted from the call at
 * the earliest (a phase's saves may all begin after it ends: a kill's, once its Killing save waits for the
 * exit, at the end of the turn that ran the last exit), and a runner's next save begins only once its last one
 * is written; returns the saves counted since `from`.
 */
const savesSince = async (from: number): Promise<number> => {
  const called = performance.now();
  while (inFlight > 0 || performance.now() - Math.max(lastSave, called) < 300) await new Promise((resolve) => setTimeout(resolve, 50));
  return saved - from;
};
/** Keeps nothing: the agent's saves resolve at once (nothing is restored from it). */
const nowhere: StateStore = {
  save: async () => undefined,
  load: async () => undefined,
  list: async () => [],
  remove: async () => undefined,
};

/**
 * The kill's timeline (`--timeline`): stamps of the calls that mark its steps, taken through the process's
 * own entry points (process.kill, the link of a `.stop` marker, the helper channel's messages), so the
 * agent's code runs as landed.
 */
const timeline = process.argv.includes('--timeline');
/** The agent thread's involuntary context switches so far (/proc: the scheduler took the CPU from it). */
const preempted = (): number => Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(fs.readFileSync(`/proc/self/task/${process.pid}/status`, 'utf8'))?.[1] ?? NaN);
interface Stamps {
  c0: ReturnType<typeof cpuMark>;
  /**
   * Time spent inside process.kill calls (ms): those that send a signal, and the probes (signal 0: the group
   * check at each exit). A signal wakes its process, which may take the agent's core before the call returns.
   */
  inKill: number;
  inProbe: number;
  /** The thread's involuntary switches at the first KILL. */
  preempted0: number;
  kills: number;
  cpuToLastSignal: number;
  /** The event loop's use (busy share) at the first KILL, the last signal and the first exit report. */
  elu: { start: EventLoopUtilization; lastSignal?: EventLoopUtilization; firstExit?: EventLoopUtilization };
  at: Record<'sent' | 'marker' | 'signal' | 'exit report' | 'done', number[]>;
}
let stamps: Stamps | undefined;
/** When the kill's state saves were written (ms since `performance`'s origin), from the first KILL on. */
let savesOfKill: { t0: number; at: number[] } | undefined;
const stamp = (what: keyof Stamps['at']) => stamps?.at[what].push(performance.now());
if (timeline) {
  const kill = process.kill.bind(process);
  process.kill = ((pid: number, sig?: string | number) => {
    const k0 = performance.now();
    let sent: boolean;
    try {
      sent = kill(pid, sig);
    } finally {
      if (stamps && sig === 0) stamps.inProbe += performance.now() - k0;
    }
    if (sig !== 0 && stamps) {
      stamps.inKill += performance.now() - k0;
      stamp('signal');
      if (stamps.at.signal.length === stamps.kills) {
        stamps.cpuToLastSignal = cpuMsSince(stamps.c0);
        stamps.elu.lastSignal = perfHooks.eventLoopUtilization();
      }
    }
    return sent;
  }) as typeof process.kill;
  // The marker is a link (supervisor.ts, markStopping); the state saves link too (replace-file.ts), not to `.stop`.
  const isMarker = (to: fs.PathLike) => String(to).endsWith('.stop');
  const link = fs.link;
  fs.link = ((from: fs.PathLike, to: fs.PathLike, cb: fs.NoParamCallback) =>
    link(from, to, (err) => {
      if (isMarker(to)) stamp('marker');
      cb(err);
    })) as typeof fs.link;
  // A save is durable at its rename over `state.json` (replace-file.ts): stamped as the callback comes back,
  // also after the last runner is done (a runner's done does not wait for its saves).
  const rename = fs.rename;
  fs.rename = ((from: fs.PathLike, to: fs.PathLike, cb: fs.NoParamCallback) =>
    rename(from, to, (err) => {
      if (String(to).endsWith('state.json')) savesOfKill?.at.push(performance.now());
      cb(err);
    })) as typeof fs.rename;
  const linkSync = fs.linkSync;
  fs.linkSync = (from: fs.PathLike, to: fs.PathLike) => {
    try {
      linkSync(from, to);
    } finally {
      if (isMarker(to)) stamp('marker');
    }
  };
  syncBuiltinESMExports();
  const emit = ChildProcess.prototype.emit;
  ChildProcess.prototype.emit = function (this: ChildProcess, event: string | symbol, ...args: unknown[]) {
    if (event === 'message' && (args[0] as { type?: string } | undefined)?.type === 'exit' && stamps) {
      stamp('exit report');
      stamps.elu.firstExit ??= perfHooks.eventLoopUtilization();
    }
    return emit.apply(this, [event, ...args] as Parameters<typeof emit>);
  } as typeof emit;
}
const timelines: string[] = [];
/** Kills as AllocrunFleet.kill does (KILL to every runner, then every runner done), stamping its steps. */
const timedKill = async (fleet: AllocrunFleet, round: number) => {
  const runners = fleet.runners();
  const t0 = performance.now();
  stamps = { c0: cpuMark(), inKill: 0, inProbe: 0, preempted0: preempted(), kills: runners.length, cpuToLastSignal: NaN, elu: { start: perfHooks.eventLoopUtilization() }, at: { sent: [], marker: [], signal: [], 'exit report': [], done: [] } };
  savesOfKill = { t0, at: [] };
  for (const r of runners) r.send({ type: 'KILL' });
  stamp('sent');
  await Promise.all(runners.map((r) => r.done.then(() => stamp('done'))));
  const { at, cpuToLastSignal, elu, inKill, inProbe, preempted0 } = stamps;
  const switches = preempted() - preempted0;
  const end = perfHooks.eventLoopUtilization();
  stamps = undefined;
  // How busy the agent's loop was between the last signal and the first exit report it read, and after.
  const busy = (from?: EventLoopUtilization, to?: EventLoopUtilization) =>
    from && to ? `${fmt(100 * perfHooks.eventLoopUtilization(to, from).utilization, 0)}%` : '-';
  const span = (what: keyof Stamps['at']) =>
    at[what].length === 0 ? `${what} none` : `${what} ${fmt(at[what][0]! - t0, 1)}-${fmt(at[what].at(-1)! - t0, 1)} (${at[what].length})`;
  timelines.push(
    `  ${round === 0 ? 'warm-up' : `round ${round}`}: KILLs sent ${fmt(at.sent[0]! - t0, 1)}; ${(['marker', 'signal', 'exit report', 'done'] as const).map(span).join('; ')}; ` +
      `CPU to the last signal ${fmt(cpuToLastSignal, 0)} ms; inside kill(): the signals ${fmt(inKill, 1)} ms, the exits' group probes ${fmt(inProbe, 1)} ms; the agent's thread preempted ${switches} times; the agent's loop busy ${busy(elu.start, end)} of the kill, ` +
      `${busy(elu.lastSignal, elu.firstExit)} from the last signal to the first exit report`,
  );
};

/** Waits (untimed) for `n` saves since the first KILL, or 1 s without one more, and adds when they came to the round's line. */
const noteKillSaves = async (n: number) => {
  const saves = savesOfKill!;
  for (let seen = -1; saves.at.length < n && saves.at.length !== seen; ) {
    seen = saves.at.length;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  savesOfKill = undefined;
  const { t0, at } = saves;
  timelines[timelines.length - 1] += `; state saves written ${at.length === 0 ? 'none' : `${fmt(at[0]! - t0, 1)}-${fmt(at.at(-1)! - t0, 1)} (${at.length}; the ${n / 2}th at ${fmt((at[n / 2 - 1] ?? NaN) - t0, 1)})`}`;
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
    await profiling('kill', round, () => (timeline ? timedKill(fleet, round) : fleet.kill()));
    const k = performance.now() - t0;
    const kc = cpuMsSince(c0);
    if (timeline) await noteKillSaves(2 * ALLOCS);
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
      ...(timeline ? ['timeline of each round (ms after the first KILL; first-last (count)):', ...timelines] : []),
      ...(counting ? [`  saves: ${startSaves.map((n) => fmt(n, 2)).join(' / ')} per start, ${killSaves.map((n) => fmt(n, 2)).join(' / ')} per kill (each round)`] : []),
    ].join('\n'),
  );
} finally {
  killTracked();
  await rm(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}
process.exit(0);
