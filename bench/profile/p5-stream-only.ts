/**
 * The inspection stream's own CPU, without the machines: records the XState inspection events of one P5
 * round (200 three-task allocations on a simulated clock) and the points where the stream flushed, then
 * feeds the same events to fresh streams, flushing at the same points, and serialises each batch as the
 * server sends it. The workload is identical from run to run (no file system, no clock steps), so an A/B of
 * a change to src/inspect resolves what the whole P5 bench (2× noise between rounds on a loaded box) cannot.
 * Prints CPU per lifecycle for the stream + JSON, and for the stream alone.
 *
 *   npx tsx -e "import('./bench/lib/compiled-entry.ts').then(m => m.compiledEntry('bench/profile/p5-stream-only.ts')).then(console.log)"
 *   node [--cpu-prof --cpu-prof-dir=/tmp/prof] <that .mjs> [rounds=20] [n=200]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InspectionEvent } from 'xstate';
import { createInspectionStream } from '../../src/inspect/inspection-stream.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

const ROUNDS = Number(process.argv[2] ?? 20);
const N = Number(process.argv[3] ?? 200);

const spec = (i: number): AllocSpec => ({
  id: `p5-${i}`, job: 'bench', group: 'g', type: 'batch',
  tasks: [
    { name: 'init', driver: 'mock', config: { run_for: '1s' }, lifecycle: { hook: 'prestart' } },
    { name: 'main', driver: 'mock', config: { run_for: '5s' } },
    { name: 'side', driver: 'mock', config: { run_for: '1h' }, lifecycle: { hook: 'poststart', sidecar: true } },
  ],
});

/** One recorded round: every inspection event with its time, and after which event each flush ran. */
interface Recording {
  events: InspectionEvent[];
  times: number[];
  flushAfter: number[];
}

async function record(): Promise<Recording> {
  const dataDir = await mkdtemp(join(tmpdir(), 'allocrun-p5rec-'));
  try {
    const clock = new SimulatedClock(0);
    const rec: Recording = { events: [], times: [], flushAfter: [] };
    // A stream that is read, so its flushes fall where the bench's do; the recorder sees every raw event.
    const stream = createInspectionStream({
      now: () => clock.now(),
      schedule: (flush) =>
        void setImmediate(() => {
          rec.flushAfter.push(rec.events.length);
          flush();
        }),
    });
    stream.subscribe(() => {});
    stream.subscribeRaw((ev) => {
      rec.events.push(ev);
      rec.times.push(clock.now());
    });
    const runners = Array.from({ length: N }, (_, i) => createAllocRunner(spec(i), { clock, dataDir, inspect: stream.inspect }).start());
    let finished = false;
    void Promise.all(runners.map((r) => r.done)).then(() => (finished = true));
    while (!finished) await clock.advance(250);
    for (const r of runners) r.stop();
    await new Promise((r) => setImmediate(r));
    return rec;
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

function replay(rec: Recording, json: boolean): { cpu: number; bytes: number; messages: number } {
  let i = 0;
  let flushNow: (() => void) | undefined;
  const stream = createInspectionStream({ now: () => rec.times[i]!, schedule: (f) => void (flushNow = f) });
  let bytes = 0;
  let messages = 0;
  let seq = 0;
  stream.subscribe((b) => {
    messages += b.length;
    if (json) bytes += JSON.stringify({ type: 'batch', seq: seq++, messages: b }).length;
  });
  const c0 = process.cpuUsage();
  let f = 0;
  for (; i < rec.events.length; i++) {
    stream.inspect(rec.events[i]!);
    while (rec.flushAfter[f] === i + 1) {
      f++;
      const fn = flushNow;
      flushNow = undefined;
      fn?.();
    }
  }
  stream.flush();
  const c = process.cpuUsage(c0);
  return { cpu: (c.user + c.system) / 1000, bytes, messages };
}

const rec = await record();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
for (let w = 0; w < 3; w++) replay(rec, true);
const withJson: number[] = [];
const alone: number[] = [];
let last = { bytes: 0, messages: 0 };
for (let r = 0; r < ROUNDS; r++) {
  const a = replay(rec, true);
  withJson.push(a.cpu);
  last = a;
  alone.push(replay(rec, false).cpu);
}
console.log(
  `stream replay of ${rec.events.length} inspection events (${N} lifecycles, ${rec.flushAfter.length} flushes), median of ${ROUNDS}: ` +
    `stream + JSON ${(median(withJson) / N).toFixed(3)} ms per lifecycle, stream alone ${(median(alone) / N).toFixed(3)} ms; ` +
    `${(last.bytes / N / 1024).toFixed(1)} KiB and ${(last.messages / N).toFixed(0)} messages per lifecycle`,
);
