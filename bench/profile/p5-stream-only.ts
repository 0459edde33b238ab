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
import { median, record, replay } from './p5-stream-replay.ts';

const ROUNDS = Number(process.argv[2] ?? 20);
const N = Number(process.argv[3] ?? 200);

const rec = await record(N);
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
