/**
 * P5's pair rounds one by one (bench/inspection-overhead.ts's workload: a no-op inspect and the stream + JSON,
 * their order alternating), each run's user and system CPU, wall time and the main thread's GC time, to see
 * where the spread of one round's ratio comes from (run it with `--single-threaded-gc` and without, say).
 *
 *   npx tsx -e "import('./bench/lib/compiled-entry.ts').then(m => m.compiledEntry('bench/profile/p5-runs.ts')).then(console.log)"
 *   TMPDIR=/dev/shm node [flags] <that .mjs> [rounds=10] [n=200]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import type { InspectionEvent } from 'xstate';
import { createInspectionStream } from '../../src/inspect/inspection-stream.ts';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { spec } from './p5-stream-replay.ts';

const ROUNDS = Number(process.argv[2] ?? 10);
const N = Number(process.argv[3] ?? 200);
let gcMs = 0;
new PerformanceObserver((list) => { for (const e of list.getEntries()) gcMs += e.duration; }).observe({ entryTypes: ['gc'] });

async function run(json: boolean, dataDir: string) {
  const clock = new SimulatedClock(0, { fileCallWaitMs: 0 });
  let inspect: (ev: InspectionEvent) => void = () => {};
  if (json) {
    const s = createInspectionStream({ now: () => clock.now() });
    let seq = 0;
    s.subscribe((b) => void JSON.stringify({ type: 'batch', seq: seq++, messages: b }));
    inspect = s.inspect;
  }
  const g0 = gcMs; const t0 = performance.now(); const c0 = process.cpuUsage();
  const runners = Array.from({ length: N }, (_, i) => createAllocRunner(spec(i), { clock, dataDir, inspect }).start());
  let finished = false;
  void Promise.all(runners.map((r) => r.done)).then(() => (finished = true));
  while (!finished) await clock.advance(250);
  const c = process.cpuUsage(c0); const w = performance.now() - t0;
  for (const r of runners) r.stop();
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, 10));
  return { user: c.user / 1000, sys: c.system / 1000, wall: w, gc: gcMs - g0 };
}
const dataDir = await mkdtemp(join(tmpdir(), 'allocrun-p5runs-'));
await run(false, dataDir); await run(true, dataDir);
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 ? [true, false] : [false, true];
  const out: Record<string, Awaited<ReturnType<typeof run>>> = {};
  for (const j of order) out[j ? 'json' : 'noop'] = await run(j, dataDir);
  const f = (x: Awaited<ReturnType<typeof run>>) => `u ${x.user.toFixed(0)} s ${x.sys.toFixed(0)} w ${x.wall.toFixed(0)} gc ${x.gc.toFixed(0)}`;
  console.log(`${r} noop: ${f(out.noop!)} | json: ${f(out.json!)} | ratio cpu ${(((out.noop!.user + out.noop!.sys) / (out.json!.user + out.json!.sys)) * 100).toFixed(0)} user ${((out.noop!.user / out.json!.user) * 100).toFixed(0)} wall ${((out.noop!.wall / out.json!.wall) * 100).toFixed(0)}`);
}
await rm(dataDir, { recursive: true, force: true });
