/**
 * Where P5's cost lands inside the whole loop, rung by rung, in one process: the P5 workload (200 three-task
 * allocations run to completion on a simulated clock) with a no-op inspect, this tree's stream unread (the
 * queue and the late joiner's picture, no messages), read (every message built, none serialised) and read with
 * JSON (as the server sends it), rotating round after round so drift hits every rung alike. Each rung's CPU over
 * the one before is what that part of the stream costs; the JSON rung's ratio to the no-op is P5. Separate
 * processes per variant (p5-variant.ts) read ±5% apart on this box, which is wider than most rungs.
 *
 *   npx tsx -e "import('./bench/lib/compiled-entry.ts').then(m => m.compiledEntry('bench/profile/p5-ladder.ts')).then(console.log)"
 *   TMPDIR=/dev/shm [GARBAGE=bytes] node <that .mjs> [rounds=10] [n=200]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InspectionEvent } from 'xstate';
import { createInspectionStream } from '../../src/inspect/inspection-stream.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { timeLifecycles } from './p5-whole-loop.ts';

const ROUNDS = Number(process.argv[2] ?? 10);
const N = Number(process.argv[3] ?? 200);

type Rung = 'no-op' | 'no-op + garbage' | 'unread' | 'read' | 'read + JSON';
// GARBAGE=<bytes per inspection event> adds a rung: the no-op inspect plus that much short-lived garbage per
// event, no other work. Its cost over the no-op is what allocating as much as the stream does costs the loop's
// collector (each scavenge copies the runtime's own young survivors), whatever the stream keeps or not.
const GARBAGE = Number(process.env['GARBAGE'] ?? 0);
const RUNGS: Rung[] = GARBAGE > 0 ? ['no-op', 'no-op + garbage', 'unread', 'read', 'read + JSON'] : ['no-op', 'unread', 'read', 'read + JSON'];
let sink: unknown;

/** The rung's inspect callback, and how many messages and JSON bytes it was sent (read rungs). */
function inspectFor(rung: Rung, clock: SimulatedClock): { inspect: (ev: InspectionEvent) => void; sent: () => [number, number] } {
  if (rung === 'no-op') return { inspect: () => {}, sent: () => [0, 0] };
  // An array of GARBAGE bytes (8 per slot, header aside), dropped at the next event.
  if (rung === 'no-op + garbage') return { inspect: () => void (sink = new Array(GARBAGE >> 3)), sent: () => [0, 0] };
  const stream = createInspectionStream({ now: () => clock.now() });
  let messages = 0;
  let bytes = 0;
  let seq = 0;
  if (rung === 'read') stream.subscribe((b) => void (messages += b.length));
  if (rung === 'read + JSON') {
    stream.subscribe((b) => {
      messages += b.length;
      bytes += JSON.stringify({ type: 'batch', seq: seq++, messages: b }).length;
    });
  }
  return { inspect: stream.inspect, sent: () => [messages, bytes] };
}

async function runOnce(rung: Rung, dataDir: string): Promise<{ cpu: number; gc: number; messages: number; bytes: number }> {
  let probe: ReturnType<typeof inspectFor> | undefined;
  const t = await timeLifecycles(N, dataDir, (clock) => (probe = inspectFor(rung, clock)).inspect);
  const [messages, bytes] = probe!.sent();
  return { ...t, messages, bytes };
}

void sink;
const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(3)}`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

const dataDir = await mkdtemp(join(tmpdir(), 'allocrun-p5ladder-'));
try {
  const cpu = new Map<Rung, number[]>(RUNGS.map((k) => [k, []]));
  const gc = new Map<Rung, number[]>(RUNGS.map((k) => [k, []]));
  const sent = new Map<Rung, [number, number]>();
  for (const rung of RUNGS) await runOnce(rung, dataDir);
  for (let r = 0; r < ROUNDS; r++) {
    for (let j = 0; j < RUNGS.length; j++) {
      const rung = RUNGS[(r + j) % RUNGS.length]!;
      const x = await runOnce(rung, dataDir);
      cpu.get(rung)!.push(x.cpu);
      gc.get(rung)!.push(x.gc);
      sent.set(rung, [x.messages, x.bytes]);
    }
  }
  const noop = median(cpu.get('no-op')!);
  console.log(`whole P5 loop, ${N} lifecycles × ${ROUNDS} rotating rounds; per lifecycle (medians):`);
  let before = noop;
  for (const rung of RUNGS) {
    const c = median(cpu.get(rung)!);
    const [messages, bytes] = sent.get(rung)!;
    // The garbage rung is beside the ladder, not on it: the stream's first rung is measured from the no-op.
    const over = rung === 'no-op + garbage' ? 'the no-op' : 'the rung before';
    const what = rung === 'no-op' ? '' : `; ${signed((c - before) / N)} ms over ${over}, ${((noop / c) * 100).toFixed(1)}% of a no-op inspect`;
    const said = messages ? `; ${(messages / N).toFixed(0)} messages${bytes ? `, ${(bytes / N / 1024).toFixed(1)} KiB` : ''}` : '';
    console.log(`  ${rung.padEnd(16)} CPU ${(c / N).toFixed(3)} ms, GC ${(median(gc.get(rung)!) / N).toFixed(3)} ms${what}${said}`);
    if (rung !== 'no-op + garbage') before = c;
  }
  // Each rung's ratio per round (rungs of one round ran back to back), to show the spread the medians hide.
  const perRound = RUNGS.slice(1).map((rung) => `${rung}: ${cpu.get(rung)!.map((c, i) => ((cpu.get('no-op')![i]! / c) * 100).toFixed(0)).join(' ')}`);
  console.log(`  % of the no-op per round: ${perRound.join('; ')}`);
  // The median of each rung's per-round difference to the no-op run of its round: drift between rounds cancels.
  const deltas = RUNGS.slice(1).map((rung) => `${rung} ${signed(median(cpu.get(rung)!.map((c, i) => c - cpu.get('no-op')![i]!)) / N)}`);
  console.log(`  ms per lifecycle over the no-op of the same round (median): ${deltas.join(', ')}`);
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
