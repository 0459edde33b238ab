/**
 * One P5 round's inspection events, recorded once and fed again to fresh streams (the shared part of
 * p5-stream-only.ts and p5-stream-ab.ts): the workload is identical from replay to replay.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InspectionEvent } from 'xstate';
import { createInspectionStream } from '../../src/inspect/inspection-stream.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

/** The P5 bench's allocation: a prestart, a main and a poststart sidecar, all on the mock driver. */
export const spec = (i: number): AllocSpec => ({
  id: `p5-${i}`, job: 'bench', group: 'g', type: 'batch',
  tasks: [
    { name: 'init', driver: 'mock', config: { run_for: '1s' }, lifecycle: { hook: 'prestart' } },
    { name: 'main', driver: 'mock', config: { run_for: '5s' } },
    { name: 'side', driver: 'mock', config: { run_for: '1h' }, lifecycle: { hook: 'poststart', sidecar: true } },
  ],
});

/** One recorded round: every inspection event with its time, and after which event each flush ran. */
export interface Recording {
  events: InspectionEvent[];
  times: number[];
  flushAfter: number[];
}

/** Runs one P5 round (n three-task allocations) with a read stream and records what it was fed and when it flushed. */
export async function record(n: number): Promise<Recording> {
  const dataDir = await mkdtemp(join(tmpdir(), 'allocrun-p5rec-'));
  try {
    const clock = new SimulatedClock(0, { fileCallWaitMs: 0 }); // the runtime's own work only: no real-time waits for the pool
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
    const runners = Array.from({ length: n }, (_, i) => createAllocRunner(spec(i), { clock, dataDir, inspect: stream.inspect }).start());
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

/** A stream factory: this tree's `createInspectionStream`, or another version's for an A/B. */
export type MakeStream = typeof createInspectionStream;

/**
 * Feeds the recording to a fresh stream from `make`, flushing where the round did; CPU in ms, JSON bytes, messages.
 * `read` false: nobody subscribes (the unread rung: only the late joiner's picture is kept).
 */
export function replay(rec: Recording, json: boolean, make: MakeStream = createInspectionStream, read = true): { cpu: number; bytes: number; messages: number } {
  let i = 0;
  let flushNow: (() => void) | undefined;
  const stream = make({ now: () => rec.times[i]!, schedule: (f) => void (flushNow = f) });
  let bytes = 0;
  let messages = 0;
  let seq = 0;
  if (read) {
    stream.subscribe((b) => {
      messages += b.length;
      if (json) bytes += JSON.stringify({ type: 'batch', seq: seq++, messages: b }).length;
    });
  }
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

/** The median of `xs`. */
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
