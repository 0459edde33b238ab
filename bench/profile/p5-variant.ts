/**
 * A profiling workload for P5 (bench/inspection-overhead.ts): its loop (200 three-task allocations on a
 * simulated clock, run to completion) with one inspection variant alone, so a `--cpu-prof` shows only that
 * variant's work. VARIANT=none|noop|unread|json (unread: a stream nobody reads, keeping only the late joiner's picture;
 * json: the stream serialised as the server sends it).
 *
 *   npx tsx -e "import('./bench/lib/compiled-entry.ts').then(m => m.compiledEntry('bench/profile/p5-variant.ts')).then(console.log)"
 *   VARIANT=json node --cpu-prof --cpu-prof-dir=/tmp/prof <that .mjs> [rounds=10] [n=200]
 *   node bench/profile/summary.mjs /tmp/prof/<file>.cpuprofile
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InspectionEvent } from 'xstate';
import { createInspectionStream } from '../../src/inspect/inspection-stream.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

const ROUNDS = Number(process.argv[2] ?? 10);
const N = Number(process.argv[3] ?? 200);
const variant = process.env['VARIANT'] ?? 'json';
const dataDir = await mkdtemp(join(tmpdir(), 'allocrun-p5prof-'));

// The P5 bench's allocation: a prestart, a main and a poststart sidecar, all on the mock driver.
const spec = (i: number, round: number): AllocSpec => ({
  id: `p5-${round}-${i}`, job: 'bench', group: 'g', type: 'batch',
  tasks: [
    { name: 'init', driver: 'mock', config: { run_for: '1s' }, lifecycle: { hook: 'prestart' } },
    { name: 'main', driver: 'mock', config: { run_for: '5s' } },
    { name: 'side', driver: 'mock', config: { run_for: '1h' }, lifecycle: { hook: 'poststart', sidecar: true } },
  ],
});

function inspectFor(clock: SimulatedClock): ((ev: InspectionEvent) => void) | undefined {
  if (variant === 'none') return undefined;
  if (variant === 'noop') return () => {};
  const stream = createInspectionStream({ now: () => clock.now() });
  if (variant === 'unread') return stream.inspect;
  let seq = 0;
  stream.subscribe((b) => void JSON.stringify({ type: 'batch', seq: seq++, messages: b }));
  return stream.inspect;
}

async function round(r: number): Promise<number> {
  const clock = new SimulatedClock(0, { fileCallWaitMs: 0 }); // the runtime's own work only: no real-time waits for the pool
  const inspect = inspectFor(clock);
  const c0 = process.cpuUsage();
  const runners = Array.from({ length: N }, (_, i) => createAllocRunner(spec(i, r), { clock, dataDir, inspect }).start());
  let finished = false;
  void Promise.all(runners.map((x) => x.done)).then(() => (finished = true));
  while (!finished) await clock.advance(250);
  const c = process.cpuUsage(c0);
  for (const x of runners) x.stop();
  await new Promise((res) => setImmediate(res));
  return (c.user + c.system) / 1000;
}

try {
  await round(-1);
  const cpu: number[] = [];
  for (let r = 0; r < ROUNDS; r++) cpu.push(await round(r));
  cpu.sort((a, b) => a - b);
  console.log(`${variant}: ${ROUNDS} rounds of ${N} lifecycles, median ${(cpu[ROUNDS >> 1]! / N).toFixed(3)} ms CPU each`);
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
