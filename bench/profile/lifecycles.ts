/**
 * A profiling workload, not a benchmark with a goal: N allocations of 3 mock tasks (prestart, main,
 * poststop) with the built-in hooks, on a simulated clock, run to completion in one process. Prints the
 * wall and CPU time, lifecycles per second and the heap held per live allocation (after GC, all N
 * running). Run it under the profilers to see where the time and memory go (HEAP_PROFILE samples what
 * is still allocated while all N are live: what an allocation holds, not what it churns):
 *
 *   node --expose-gc --import tsx --cpu-prof --cpu-prof-dir=/tmp/prof bench/profile/lifecycles.ts [allocs=200]
 *   HEAP_PROFILE=/tmp/prof/live.heapprofile node --expose-gc --import tsx bench/profile/lifecycles.ts [allocs=200]
 *   node bench/profile/summary.mjs /tmp/prof/<file>.cpuprofile      # self time by function
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

const ALLOCS = Number(process.argv[2] ?? 200);
const gc = (globalThis as { gc?: () => void }).gc;

function spec(i: number): AllocSpec {
  return {
    id: `prof-${i}`, job: 'prof', group: 'g', type: 'batch',
    tasks: [
      { name: 'init', driver: 'mock', config: { run_for: '1s' }, lifecycle: { hook: 'prestart' } },
      { name: 'main', driver: 'mock', config: { run_for: '1h' } },
      { name: 'cleanup', driver: 'mock', config: { run_for: '1s' }, lifecycle: { hook: 'poststop' } },
    ],
  };
}

const heapAfterGc = () => {
  gc?.();
  return process.memoryUsage().heapUsed;
};

const heapProfile = process.env['HEAP_PROFILE'];
const session = heapProfile ? new Session() : undefined;
if (session) {
  session.connect();
  await session.post('HeapProfiler.startSampling', { samplingInterval: 4096 });
}

const dataDir = await mkdtemp(join(tmpdir(), 'allocrun-prof-'));
try {
  const clock = new SimulatedClock(0, { fileCallWaitMs: 0 }); // the runtime's own work only: no real-time waits for the pool
  const heap0 = heapAfterGc();
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const runners = Array.from({ length: ALLOCS }, (_, i) => createAllocRunner(spec(i), { clock, dataDir }).start());
  let finished = false;
  void Promise.all(runners.map((r) => r.done)).then(() => (finished = true));
  // Let every main task reach running (the hooks do real file I/O), then weigh the live allocations.
  const mainsRunning = () => runners.filter((r) => r.getState().taskStates.main!.state === 'running').length;
  for (let i = 0; i < 2_000 && mainsRunning() < ALLOCS; i++) await clock.advance(100);
  const running = mainsRunning();
  const cpuPause = process.cpuUsage(c0);
  const heapLive = heapAfterGc();
  if (session) {
    const { profile } = await session.post('HeapProfiler.stopSampling');
    await writeFile(heapProfile!, JSON.stringify(profile));
  }
  const c1 = process.cpuUsage();
  for (let i = 0; i < 10_000 && !finished; i++) await clock.advance(60_000);
  if (!finished) throw new Error('the allocations did not finish');
  const c2 = process.cpuUsage(c1);
  const ms = performance.now() - t0;
  const cpuMs = (cpuPause.user + cpuPause.system + c2.user + c2.system) / 1000;
  const failed = runners.filter((r) => r.getState().clientStatus !== 'complete').length;
  for (const r of runners) r.stop();
  console.log(
    [
      `${ALLOCS} allocs x 3 mock tasks, built-in hooks on, simulated clock`,
      `  wall ${ms.toFixed(0)} ms, CPU ${cpuMs.toFixed(0)} ms (${(cpuMs / ALLOCS).toFixed(2)} ms CPU per alloc)`,
      `  ${((ALLOCS / ms) * 1000).toFixed(0)} lifecycles/s (wall, includes the heap pause)`,
      `  heap per live alloc: ${gc ? `${((heapLive - heap0) / running / 1024).toFixed(1)} KiB (${running} running)` : 'run with --expose-gc'}`,
      failed ? `  ${failed} allocs did not complete` : '  every alloc complete',
    ].join('\n'),
  );
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
