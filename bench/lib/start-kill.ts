/**
 * The experiment behind P1 and P2: in each round, every fleet starts N sleeping processes (timed until all
 * run), then kills them (timed until all are dead). Fleets alternate within a round so drift on a shared
 * machine hits each alike; figures are medians over rounds.
 */
import { join } from 'node:path';
import { AllocrunFleet, BareXStateFleet, RawFleet, SLEEP } from './fleets.ts';
import { P1_GOAL, P2_GOAL } from './goals.ts';
import { killTracked } from './pids.ts';
import { openPm2 } from './pm2-fleet.ts';
import { cpuMark, cpuMsSince, fmt, median, printGoalRows, printTable, type GoalRow } from './stats.ts';
import { discard, probeFileSystem, scratchDir, type FileSystemProbe } from './scratch.ts';

const BARE_XSTATE = 'bare XState alloc, no supervisor';

/** Median start and kill times (ms) of one fleet. */
export interface FleetTimes {
  name: string;
  startMs: number;
  killMs: number;
  /** CPU time of this process (user + system) for the start and for the kill. */
  startCpuMs: number;
  killCpuMs: number;
  /** CPU of the raw_exec supervisors over their whole life, start to exit (allocrun fleets only). */
  supervisorsCpuMs?: number;
}

/** Medians per fleet, plus why pm2 was left out when it was. */
export interface StartKillResult {
  n: number;
  rounds: number;
  fleets: FleetTimes[];
  pm2Skipped?: string;
  /** Where the fleets' files were made, and what a new dir and file cost there before the first fleet. */
  fileSystem: { at: string; probe: FileSystemProbe };
}

interface Fleet {
  /** Before the timed start: what the fleet needs to find its processes afterwards. */
  beforeStart?(): void;
  start(n: number): Promise<void>;
  /** After the timed start: tracks the processes started, so they are reaped however the bench ends. */
  track?(): void | Promise<void>;
  kill(): Promise<void>;
  stop?(): void;
  supervisorsCpuMark?(): number;
}

/** Runs the rounds for every fleet; always reaps what it started. */
export async function measureStartKill(opts: { n: number; rounds: number; withPm2: boolean }): Promise<StartKillResult> {
  const root = await scratchDir('allocrun-startkill-');
  // Before any fleet: what a new dir and file cost on this file system now (scratch.ts).
  const fileSystem = probeFileSystem(root);
  const pm2 = opts.withPm2 ? await openPm2() : { skipped: 'not asked for' };
  const pm2Fleet = 'skipped' in pm2 ? undefined : pm2;
  let dirs = 0;
  const makers: { name: string; make: () => Fleet }[] = [
    { name: 'raw spawn', make: () => new RawFleet() },
    { name: 'allocrun agent, built-in hooks', make: () => new AllocrunFleet(join(root, String(dirs++))) },
    { name: 'allocrun agent, no built-in hooks', make: () => new AllocrunFleet(join(root, String(dirs++)), false) },
    // The floor for any statechart runner: XState alone, spawning and killing from invoked promises.
    { name: BARE_XSTATE, make: () => new BareXStateFleet() },
  ];
  if (pm2Fleet) {
    makers.push({
      name: 'pm2',
      make: () => ({ start: (n) => pm2Fleet.start(n, SLEEP.command, SLEEP.args), track: () => pm2Fleet.track(), kill: () => pm2Fleet.stopAll() }),
    });
  }
  const starts = new Map<string, number[]>(makers.map((m) => [m.name, []]));
  const kills = new Map<string, number[]>(makers.map((m) => [m.name, []]));
  const startCpu = new Map<string, number[]>(makers.map((m) => [m.name, []]));
  const killCpu = new Map<string, number[]>(makers.map((m) => [m.name, []]));
  const supervisorsCpu = new Map<string, number[]>(makers.map((m) => [m.name, []]));
  try {
    // Round 0 warms up (JIT, first spawns, pm2's first start) and is not counted.
    for (let round = 0; round <= opts.rounds; round++) {
      for (const m of makers) {
        const fleet = m.make();
        const sup0 = fleet.supervisorsCpuMark?.();
        // The bench's tracking of what each fleet starts (/proc reads) stays outside the timed start.
        fleet.beforeStart?.();
        let t0 = performance.now();
        let c0 = cpuMark();
        await fleet.start(opts.n);
        const startMs = performance.now() - t0;
        const startCpuMs = cpuMsSince(c0);
        await fleet.track?.();
        t0 = performance.now();
        c0 = cpuMark();
        await fleet.kill();
        const killMs = performance.now() - t0;
        const killCpuMs = cpuMsSince(c0);
        // The supervisors have exited (the kill waited for them) and the helper has reaped them.
        const supCpuMs = sup0 === undefined ? undefined : fleet.supervisorsCpuMark!() - sup0;
        fleet.stop?.();
        if (round > 0) {
          starts.get(m.name)!.push(startMs);
          kills.get(m.name)!.push(killMs);
          startCpu.get(m.name)!.push(startCpuMs);
          killCpu.get(m.name)!.push(killCpuMs);
          if (supCpuMs !== undefined) supervisorsCpu.get(m.name)!.push(supCpuMs);
        }
      }
    }
  } finally {
    if (pm2Fleet) await pm2Fleet.close();
    killTracked();
    await discard(root);
  }
  return {
    n: opts.n,
    rounds: opts.rounds,
    fleets: makers.map((m) => ({
      name: m.name,
      startMs: median(starts.get(m.name)!),
      killMs: median(kills.get(m.name)!),
      startCpuMs: median(startCpu.get(m.name)!),
      killCpuMs: median(killCpu.get(m.name)!),
      ...(supervisorsCpu.get(m.name)!.length > 0 && { supervisorsCpuMs: median(supervisorsCpu.get(m.name)!) }),
    })),
    ...('skipped' in pm2 && opts.withPm2 ? { pm2Skipped: pm2.skipped } : {}),
    fileSystem: { at: root, probe: fileSystem },
  };
}

/** How P1 (start) and P2 (kill) present one phase of the experiment. */
const PHASES = {
  start: {
    title: (n: number) => `P1: ${n} processes of \`sleep 1000\` from start to all running`,
    column: 'to running ms',
    versus: 'vs raw spawn',
    item: (n: number) => `P1 ${n} raw_exec allocs → running`,
    baseline: 'raw spawn',
  },
  kill: {
    title: (n: number) => `P2: ${n} running \`sleep 1000\` processes from the kill to all dead`,
    column: 'kill → dead ms',
    versus: 'vs raw kill',
    item: (n: number) => `P2 KILL → all ${n} dead`,
    baseline: 'raw kill → exit',
  },
} as const;

type Phase = keyof typeof PHASES;
const wallOf = (f: FleetTimes, phase: Phase) => (phase === 'start' ? f.startMs : f.killMs);
const cpuOf = (f: FleetTimes, phase: Phase) => (phase === 'start' ? f.startCpuMs : f.killCpuMs);

/**
 * The README row of one phase: allocrun with its built-in hooks against the raw processes, with the floors
 * of the same run (bare XState, pm2) beside and judged against the goal (goals.ts).
 */
export function phaseGoals(r: StartKillResult, phase: Phase): GoalRow[] {
  const p = PHASES[phase];
  const raw = wallOf(r.fleets[0]!, phase);
  const allocrun = r.fleets[1]!;
  const hooks = wallOf(allocrun, phase);
  const noHooks = r.fleets[2];
  const pm2 = r.fleets.find((f) => f.name === 'pm2');
  const bare = r.fleets.find((f) => f.name === BARE_XSTATE);
  const floors = [
    bare && `bare XState ${fmt(wallOf(bare, phase), 0)} ms = ${fmt(wallOf(bare, phase) / raw, 2)}×`,
    pm2 ? `pm2 ${fmt(wallOf(pm2, phase), 0)} ms = ${fmt(wallOf(pm2, phase) / raw, 2)}×` : `pm2 not run${r.pm2Skipped ? ` (${r.pm2Skipped})` : ''}`,
  ].filter(Boolean);
  const ratio = hooks / raw;
  const also = noHooks ? `; no built-in hooks ${fmt(wallOf(noHooks, phase) / raw, 2)}×` : '';
  if (phase === 'kill') {
    return [
      {
        item: p.item(r.n),
        figure: `${fmt(hooks, 0)} ms (${fmt(allocrun.killCpuMs / r.n, 2)} ms CPU per kill${also})`,
        baseline: `${p.baseline} ${fmt(raw, 0)} ms`,
        floor: floors.join('; '),
        ratio: `${fmt(ratio, 2)}×`,
        goal: P2_GOAL.text,
        met: P2_GOAL.met({ ratio }),
      },
    ];
  }
  const cpuMsPerStart = (allocrun.startCpuMs + (allocrun.supervisorsCpuMs ?? 0)) / r.n;
  return [
    {
      item: p.item(r.n),
      figure:
        `${fmt(hooks, 0)} ms (${fmt(cpuMsPerStart, 2)} ms CPU per start: agent and helper ${fmt(allocrun.startCpuMs / r.n, 2)}, ` +
        `supervisors ${fmt((allocrun.supervisorsCpuMs ?? 0) / r.n, 2)}${also})`,
      baseline: `${p.baseline} ${fmt(raw, 0)} ms`,
      floor: floors.join('; '),
      ratio: `${fmt(ratio, 2)}×${pm2 ? `; ${fmt(hooks / wallOf(pm2, phase), 2)}× pm2` : ''}`,
      goal: P1_GOAL.text,
      met: P1_GOAL.met({ ratio, pm2Ms: pm2 && wallOf(pm2, phase), ms: hooks, cpuMsPerStart }),
    },
  ];
}

/** Prints one phase's table and its README row. */
export function printPhase(r: StartKillResult, phase: Phase): void {
  const p = PHASES[phase];
  const raw = wallOf(r.fleets[0]!, phase);
  console.log(`${p.title(r.n)}; median of ${r.rounds} rounds`);
  const supervisors = (f: FleetTimes) => (phase === 'start' && f.supervisorsCpuMs !== undefined ? ` (+ ${fmt(f.supervisorsCpuMs, 0)} supervisors)` : '');
  printTable(
    ['fleet', p.column, p.versus, 'CPU ms here', 'CPU ms each'],
    r.fleets.map((f) => [
      f.name,
      fmt(wallOf(f, phase), 1),
      `${fmt(wallOf(f, phase) / raw, 2)}×`,
      `${fmt(cpuOf(f, phase), 0)}${f.name === 'pm2' ? ' (+ daemon)' : supervisors(f)}`,
      fmt((cpuOf(f, phase) + (phase === 'start' ? (f.supervisorsCpuMs ?? 0) : 0)) / r.n, 2),
    ]),
  );
  if (r.pm2Skipped) console.log(`pm2 skipped: ${r.pm2Skipped}`);
  printGoalRows(phaseGoals(r, phase));
}
