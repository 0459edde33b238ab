/**
 * What inspection costs: N allocation runners (mock driver, simulated clock) run to completion without
 * inspection, with a no-op `inspect` (XState's own cost), with an inspection stream nobody reads (no page
 * open), with the stream read, and with the stream serialized the way the WebSocket server sends it.
 * Rounds alternate so drift hits every variant alike, and rotate so each variant runs after each other one.
 * P5's figure is the median of per-round ratios (a no-op run's CPU over the stream + JSON run beside it), from
 * those rounds and from pair rounds of just the two, printed with its spread: one run's ratio of medians over
 * five rounds read anywhere from 72% to 106% within a few hours on a shared box.
 * It measures plain JavaScript, as an installed package runs (lib/compiled-entry.ts): under tsx every
 * function is wrapped to keep its name, a cost that falls hardest on closures made per call. Profiling
 * flags (--cpu-prof, --cpu-prof-dir=DIR) reach the measuring process; ALLOCRUN_BENCH_TSX=1 measures the
 * TypeScript under tsx instead.
 *
 *   npx tsx bench/inspection-overhead.ts [--quick] [--n 200] [--rounds 3] [--pairs 30]
 */
import { fork } from 'node:child_process';
import { join } from 'node:path';
import type { InspectionEvent } from 'xstate';
import type { Clock } from '../src/drivers/clock.ts';
import { createInspectorFeed } from '../src/inspect/feed.ts';
import { createInputRecorder } from '../src/inspect/input-recorder.ts';
import { createInspectionStream } from '../src/inspect/inspection-stream.ts';
import { encodeReplayValue, stepCompactor, type ReplayLine } from '../src/inspect/replay-format.ts';
import { createAllocRunner } from '../src/runtime/create-alloc-runner.ts';
import type { AllocSpec } from '../src/jobspec/types.ts';
import { SimulatedClock } from '../src/testing/simulated-clock.ts';
import { benchArgs } from './lib/args.ts';
import { compiledEntry } from './lib/compiled-entry.ts';
import { P5_GOAL } from './lib/goals.ts';
import { formatRatioSpread, ratioSpread } from './lib/ratio-spread.ts';
import { median, printGoalRows } from './lib/stats.ts';
import { discard, scratchDir } from './lib/scratch.ts';

// The same flags as every benchmark (`npm run bench -- --quick` passes them on).
// Three rounds of every variant (five before P5 took its own pair rounds: the time went to those).
const { n: ALLOCS, rounds: ROUNDS, quick } = benchArgs({ n: 200, quickN: 20, rounds: 3 });
// P5's pair rounds (a no-op inspect and the stream + JSON, their order alternating), after the rounds of every
// variant. On a loaded box a round's ratio ranges over 40 points or more (a collection, a neighbour); the median
// of 33-35 rounds held within 4 points from run to run, where the ratio of five rounds' medians moved by 26.
const PAIRS = pairsArg(process.argv.slice(2)) ?? (quick ? 2 : 30);

function pairsArg(argv: string[]): number | undefined {
  const i = argv.indexOf('--pairs');
  if (i < 0) return undefined;
  const v = Number(argv[i + 1]);
  if (!Number.isInteger(v) || v < 0) throw new Error(`--pairs needs a whole number, got ${JSON.stringify(argv[i + 1])}`);
  return v;
}

type Probe = { inspect?: (ev: InspectionEvent) => void; machineClock?: (clock: Clock) => Clock; stats(): string };
type Variant = { name: string; make: (clock: SimulatedClock) => Probe };

const variants: Variant[] = [
  { name: 'no inspect', make: () => ({ stats: () => '' }) },
  { name: 'no-op inspect', make: () => ({ inspect: () => {}, stats: () => '' }) },
  // An inspector with no page open (and no recorder): the stream keeps only the late joiner's picture.
  { name: 'stream, unread', make: (clock) => ({ inspect: createInspectionStream({ now: () => clock.now() }).inspect, stats: () => '' }) },
  {
    name: 'stream',
    make: (clock) => {
      const stream = createInspectionStream({ now: () => clock.now() });
      let messages = 0;
      stream.subscribe((b) => (messages += b.length));
      return { inspect: stream.inspect, stats: () => `${messages} msgs` };
    },
  },
  {
    name: 'stream + JSON',
    make: (clock) => {
      const stream = createInspectionStream({ now: () => clock.now() });
      let bytes = 0;
      let batches = 0;
      let messages = 0;
      stream.subscribe((b) => {
        messages += b.length;
        bytes += JSON.stringify({ type: 'batch', seq: batches++, messages: b }).length;
      });
      return {
        inspect: stream.inspect,
        stats: () =>
          `${batches} batches, ${(bytes / 1024 / 1024).toFixed(1)} MiB, ${(bytes / ALLOCS / 1024).toFixed(1)} KiB and ${(messages / ALLOCS).toFixed(0)} messages per lifecycle`,
      };
    },
  },
  {
    // The agent's UI (issue 29): always on, with no page open; every batch serialized once and kept in the
    // bounded history, checkpoints taken as its segments fill (feed.ts, history.ts).
    name: 'agent UI feed',
    make: (clock) => {
      const feed = createInspectorFeed({ stream: createInspectionStream({ now: () => clock.now() }) });
      return {
        inspect: feed.inspect,
        stats: () => {
          const h = feed.history!.stats();
          feed.close();
          return `history kept: ${h.messages} messages, ${(h.bytes / 1024 / 1024).toFixed(1)} MiB in ${h.segments} segments${h.dropped ? ' (oldest dropped)' : ''}`;
        },
      };
    },
  },
  {
    // What `run --record` writes since issue #30: the stream as above plus the replay lines (every input into
    // the machines and every step they took), serialised in batches the way record.ts writes them.
    name: 'stream + replay',
    make: (clock) => {
      const stream = createInspectionStream({ now: () => clock.now() });
      let bytes = 0;
      let replayBytes = 0;
      let replayLines = 0;
      stream.subscribe((b) => (bytes += b.map((m) => JSON.stringify(m)).join('\n').length + 1));
      let pending: ReplayLine[] = [];
      const compact = stepCompactor();
      const write = () => {
        const batch = pending;
        pending = [];
        replayLines += batch.length;
        replayBytes += batch.map((l) => JSON.stringify(compact(l), encodeReplayValue)).join('\n').length + 1;
      };
      const recorder = createInputRecorder((line) => {
        if (pending.push(line) === 1) setImmediate(write);
      });
      stream.subscribeRaw(recorder.inspect);
      return {
        inspect: stream.inspect,
        machineClock: (c) => recorder.machineClock(c),
        stats: () =>
          `${(bytes / ALLOCS / 1024).toFixed(1)} KiB stream + ${(replayBytes / ALLOCS / 1024).toFixed(1)} KiB and ${(replayLines / ALLOCS).toFixed(0)} replay lines per lifecycle`,
      };
    },
  },
];

function spec(i: number): AllocSpec {
  return {
    id: `bench-${i}`, job: 'bench', group: 'g', type: 'batch',
    tasks: [
      { name: 'init', driver: 'mock', config: { run_for: '1s' }, lifecycle: { hook: 'prestart' } },
      { name: 'main', driver: 'mock', config: { run_for: '5s' } },
      { name: 'side', driver: 'mock', config: { run_for: '1h' }, lifecycle: { hook: 'poststart', sidecar: true } },
    ],
  };
}

// How long a run may take in real time. Not a count of clock steps: the hooks' directory calls go through
// libuv's thread pool in real time while the simulated clock steps on, so under load (the rest of
// `npm run bench`, the neighbours) 10,000 steps of 250 ms once ran out before every task had even started.
const RUN_DEADLINE_MS = 300_000;

/** Steps the simulated clock until `finished` says so, or fails after RUN_DEADLINE_MS of real time. */
async function runToEnd(clock: SimulatedClock, finished: () => boolean, what: string): Promise<void> {
  const t0 = performance.now();
  let steps = 0;
  while (!finished()) {
    if (performance.now() - t0 > RUN_DEADLINE_MS) {
      throw new Error(`${what}: the allocations did not finish within ${RUN_DEADLINE_MS / 1000} s (${steps} clock steps, simulated ${clock.now()} ms)`);
    }
    await clock.advance(250);
    steps++;
  }
}

async function runOnce(v: Variant, dataDir: string): Promise<{ ms: number; cpu: number; stats: string }> {
  const clock = new SimulatedClock(0, { fileCallWaitMs: 0 }); // the runtime's own work only: no real-time waits for the pool
  const probe = v.make(clock);
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const runners = Array.from({ length: ALLOCS }, (_, i) => createAllocRunner(spec(i), { clock, dataDir, inspect: probe.inspect, machineClock: probe.machineClock }).start());
  const done = Promise.all(runners.map((r) => r.done));
  let finished = false;
  void done.then(() => (finished = true));
  await runToEnd(clock, () => finished, v.name);
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  for (const r of runners) r.stop();
  await new Promise((r) => setImmediate(r));
  return { ms, cpu: (c.user + c.system) / 1000, stats: probe.stats() };
}

if (process.env.ALLOCRUN_BENCH_COMPILED || process.env.ALLOCRUN_BENCH_TSX) await measure();
else {
  // Profiling flags (in their --flag=value form) go to the process that measures; tsx's loader does not.
  const execArgv = process.execArgv.filter((a) => /^--(cpu-prof|heap-prof|expose-gc|max-old-space-size)/.test(a));
  const proc = fork(await compiledEntry('bench/inspection-overhead.ts'), process.argv.slice(2), { execArgv, env: { ...process.env, ALLOCRUN_BENCH_COMPILED: '1' } });
  const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve));
  process.exitCode = code ?? 1;
}

async function measure(): Promise<void> {
  const dataDir = await scratchDir('allocrun-bench-');
  try {
    // Warm-up: JIT and the file system's first-time costs out of the measured rounds.
    for (const v of variants) await runOnce(v, dataDir);
    const wall = new Map<string, number[]>(variants.map((v) => [v.name, []]));
    const cpu = new Map<string, number[]>(variants.map((v) => [v.name, []]));
    const stats = new Map<string, string>();
    for (let round = 0; round < ROUNDS; round++) {
      // Each round starts one variant later: a run inherits the heap the run before it left, so no variant
      // always follows the same one.
      for (let j = 0; j < variants.length; j++) {
        const v = variants[(round + j) % variants.length]!;
        const r = await runOnce(v, dataDir);
        wall.get(v.name)!.push(r.ms);
        cpu.get(v.name)!.push(r.cpu);
        stats.set(v.name, r.stats);
      }
    }
    // P5 per round: the no-op's CPU over the stream + JSON's of the same round (drift between rounds cancels).
    const p5Ratios = cpu.get('no-op inspect')!.map((c, i) => c / cpu.get('stream + JSON')![i]!);
    const p5Pair = [variants.find((v) => v.name === 'no-op inspect')!, variants.find((v) => v.name === 'stream + JSON')!];
    for (let round = 0; round < PAIRS; round++) {
      // Alternating order, so each of the two follows the other as often as it precedes it.
      const [a, b] = round % 2 === 0 ? p5Pair : [p5Pair[1]!, p5Pair[0]!];
      const ra = await runOnce(a!, dataDir);
      const rb = await runOnce(b!, dataDir);
      const [noopRun, jsonRun] = a === p5Pair[0] ? [ra, rb] : [rb, ra];
      p5Ratios.push(noopRun.cpu / jsonRun.cpu);
    }
    const p5 = ratioSpread(p5Ratios);
    // CPU time is the headline: on a shared machine wall time also measures the neighbours.
    const baseCpu = median(cpu.get('no inspect')!);
    const baseWall = median(wall.get('no inspect')!);
    console.log(`inspection overhead: ${ALLOCS} allocations × 3 mock tasks, run to completion on a simulated clock; median of ${ROUNDS} rounds`);
    console.log(`${'variant'.padEnd(16)}${'cpu ms'.padStart(9)}${'allocs/cpu-s'.padStart(14)}${'cpu ratio'.padStart(11)}${'wall ms'.padStart(10)}${'wall ratio'.padStart(12)}  stream output`);
    for (const v of variants) {
      const c = median(cpu.get(v.name)!);
      const w = median(wall.get(v.name)!);
      console.log(
        `${v.name.padEnd(16)}${c.toFixed(0).padStart(9)}${((ALLOCS / c) * 1000).toFixed(0).padStart(14)}${(c / baseCpu).toFixed(2).padStart(10)}×` +
          `${w.toFixed(0).padStart(10)}${(w / baseWall).toFixed(2).padStart(11)}×  ${stats.get(v.name)}`,
      );
    }
    // P5's figure: throughput (allocs per CPU second) with the stream as the server sends it, against a no-op
    // inspect: the median of the rounds' own ratios. The ratio of the medians is printed beside it, as the
    // figure was taken before, so the two can be compared run by run.
    const json = median(cpu.get('stream + JSON')!);
    const noop = median(cpu.get('no-op inspect')!);
    console.log(
      `\nP5: throughput with the stream + JSON is ${formatRatioSpread(p5)} of a no-op inspect (goal ≥ 90%); ` +
        `the ratio of the ${ROUNDS} rotating rounds' medians ${((noop / json) * 100).toFixed(0)}%; ` +
        `${((baseCpu / json) * 100).toFixed(0)}% of without inspection (XState's own cost: ${((baseCpu / noop) * 100).toFixed(0)}%)`,
    );
    // Issue 29: what the agent's always-on UI (history kept, no page open) costs against the stream + JSON.
    const feed = median(cpu.get('agent UI feed')!);
    console.log(`agent UI: the feed with its history costs ${(feed / json).toFixed(2)}× the CPU of the stream + JSON; throughput ${((baseCpu / feed) * 100).toFixed(0)}% of without inspection`);
    // Issue #30: what recording the machines' inputs and steps adds to the stream a recording was before.
    const replay = median(cpu.get('stream + replay')!);
    console.log(
      `replay lines: a recording with its inputs and steps costs ${(replay / json).toFixed(2)}× the CPU of the stream + JSON alone; ` +
        `throughput ${((baseCpu / replay) * 100).toFixed(0)}% of without inspection`,
    );
    printGoalRows([
      {
        item: 'P5 throughput with the live inspection stream (JSON, as sent)',
        figure: `${((ALLOCS / json) * 1000).toFixed(0)} lifecycles per CPU-s; ${stats.get('stream + JSON')}`,
        baseline: `${((ALLOCS / baseCpu) * 1000).toFixed(0)}/s without inspection; no-op inspect ${((baseCpu / noop) * 100).toFixed(0)}%`,
        floor: `XState's no-op inspect ${((baseCpu / noop) * 100).toFixed(0)}% of without`,
        ratio: `${(p5.median * 100).toFixed(0)}% of a no-op inspect (median of ${p5.n} rounds, 95% CI ${(p5.ciLow * 100).toFixed(0)}-${(p5.ciHigh * 100).toFixed(0)}%); ${((baseCpu / json) * 100).toFixed(0)}% of without`,
        goal: P5_GOAL.text,
        met: P5_GOAL.met(p5.median),
      },
    ]);
    await printBreakdown(dataDir);
  } finally {
    await discard(dataDir);
  }
}

/** Where the bytes of one round go: per message kind and per transition field, per 3-task lifecycle. */
async function printBreakdown(dir: string): Promise<void> {
  const clock = new SimulatedClock(0, { fileCallWaitMs: 0 }); // the runtime's own work only: no real-time waits for the pool
  const stream = createInspectionStream({ now: () => clock.now() });
  const by = new Map<string, number>();
  const count = new Map<string, number>();
  const add = (k: string, v: unknown) => v !== undefined && by.set(k, (by.get(k) ?? 0) + JSON.stringify(v).length);
  const tally = (k: string) => count.set(k, (count.get(k) ?? 0) + 1);
  let total = 0;
  stream.subscribe((batch) => {
    total += JSON.stringify({ type: 'batch', seq: 0, messages: batch }).length;
    for (const m of batch) {
      add(`${m.kind} messages`, m);
      tally(`${m.kind} messages`);
      tally('all');
      if (m.kind === 'transition') {
        add('  transition.context (whole, first)', m.context);
        add('  transition.patch (what changed)', m.patch);
        add('  transition.value (when changed)', m.value);
        add('  transition.edges', m.edges);
        add('  transition.output', m.output);
      }
      if (m.kind === 'event') add('  event.payload', m.payload);
    }
  });
  const runners = Array.from({ length: ALLOCS }, (_, i) => createAllocRunner(spec(i), { clock, dataDir: dir, inspect: stream.inspect }).start());
  let finished = false;
  void Promise.all(runners.map((r) => r.done)).then(() => (finished = true));
  await runToEnd(clock, () => finished, 'breakdown');
  stream.flush();
  for (const r of runners) r.stop();
  console.log(`\nbytes per 3-task lifecycle, as sent: ${(total / ALLOCS / 1024).toFixed(1)} KiB in ${(count.get('all')! / ALLOCS).toFixed(0)} messages`);
  for (const [k, v] of [...by].sort((a, b) => b[1] - a[1])) {
    const n = count.get(k);
    console.log(`${k.padEnd(38)}${(v / ALLOCS / 1024).toFixed(1).padStart(8)} KiB${n === undefined ? '' : `${(n / ALLOCS).toFixed(0).padStart(6)} messages`}`);
  }
}
