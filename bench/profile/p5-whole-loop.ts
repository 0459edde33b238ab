/**
 * The measuring loop of p5-whole-ab.ts (run in the compiled bundle it builds): the P5 workload with a no-op
 * inspect, another version's stream + JSON and this tree's, rotating, with CPU and GC time per run.
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

type MakeStream = typeof createInspectionStream;

let gcMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcMs += e.duration;
}).observe({ entryTypes: ['gc'] });

function inspectFor(make: MakeStream | undefined, clock: SimulatedClock): { inspect: (ev: InspectionEvent) => void; bytes: () => number } {
  if (!make) return { inspect: () => {}, bytes: () => 0 };
  const stream = make({ now: () => clock.now() });
  let seq = 0;
  let bytes = 0;
  stream.subscribe((b) => void (bytes += JSON.stringify({ type: 'batch', seq: seq++, messages: b }).length));
  return { inspect: stream.inspect, bytes: () => bytes };
}

/**
 * The P5 workload once: `n` allocations run to completion on a simulated clock with `inspectWith(clock)` as their
 * inspect callback; the process's CPU and GC milliseconds while they ran. Shared with p5-ladder.ts.
 */
export async function timeLifecycles(n: number, dataDir: string, inspectWith: (clock: SimulatedClock) => (ev: InspectionEvent) => void): Promise<{ cpu: number; gc: number }> {
  const clock = new SimulatedClock(0, { fileCallWaitMs: 0 }); // the runtime's own work only: no real-time waits for the pool
  const inspect = inspectWith(clock);
  const g0 = gcMs;
  const c0 = process.cpuUsage();
  const runners = Array.from({ length: n }, (_, i) => createAllocRunner(spec(i), { clock, dataDir, inspect }).start());
  let finished = false;
  void Promise.all(runners.map((r) => r.done)).then(() => (finished = true));
  while (!finished) await clock.advance(250);
  const c = process.cpuUsage(c0);
  for (const r of runners) r.stop();
  await new Promise((r) => setImmediate(r));
  // GC entries are delivered asynchronously; this run's are in by now.
  await new Promise((r) => setTimeout(r, 10));
  return { cpu: (c.user + c.system) / 1000, gc: gcMs - g0 };
}

async function runOnce(make: MakeStream | undefined, n: number, dataDir: string): Promise<{ cpu: number; gc: number; bytes: number }> {
  let probe: ReturnType<typeof inspectFor> | undefined;
  const t = await timeLifecycles(n, dataDir, (clock) => (probe = inspectFor(make, clock)).inspect);
  return { ...t, bytes: probe!.bytes() };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

/** Runs `rounds` rotations of: no-op inspect, `other`'s stream + JSON, this tree's; prints medians per lifecycle. */
export async function runRounds(rev: string, other: MakeStream, rounds: number, n: number): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'allocrun-p5ab-'));
  try {
    const variants: [string, MakeStream | undefined][] = [['no-op', undefined], [rev, other], ['this tree', createInspectionStream]];
    const cpu = new Map<string, number[]>(variants.map(([k]) => [k, []]));
    const gc = new Map<string, number[]>(variants.map(([k]) => [k, []]));
    const bytes = new Map<string, number>();
    for (const [, make] of variants) await runOnce(make, n, dataDir);
    for (let r = 0; r < rounds; r++) {
      for (let j = 0; j < variants.length; j++) {
        const [name, make] = variants[(r + j) % variants.length]!;
        const x = await runOnce(make, n, dataDir);
        cpu.get(name)!.push(x.cpu);
        gc.get(name)!.push(x.gc);
        bytes.set(name, x.bytes);
      }
    }
    const noop = median(cpu.get('no-op')!);
    console.log(`whole P5 loop, ${n} lifecycles × ${rounds} rotating rounds; per lifecycle (medians):`);
    for (const [name] of variants) {
      const c = median(cpu.get(name)!);
      const ratio = name === 'no-op' ? '' : `; ${((noop / c) * 100).toFixed(1)}% of a no-op inspect, ${(bytes.get(name)! / n / 1024).toFixed(1)} KiB`;
      console.log(`  ${name.padEnd(10)} CPU ${(c / n).toFixed(3)} ms, GC ${(median(gc.get(name)!) / n).toFixed(3)} ms${ratio}`);
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
