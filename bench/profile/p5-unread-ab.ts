/**
 * A/B of the stream nobody reads (the ladder's "unread" rung: no page, no recorder, only the late joiner's
 * picture kept) and of the stream + JSON, against another version of src/inspect (a git revision), inside the
 * whole P5 loop (p5-whole-loop.ts), in one process: a no-op inspect, then each version unread and read + JSON,
 * in rotating order round after round, so drift hits every variant alike.
 *
 *   TMPDIR=/dev/shm npx tsx bench/profile/p5-unread-ab.ts [rev=main] [rounds=10] [n=200]
 *
 * Prints, per lifecycle, each variant's median CPU and the median of its per-round difference to that round's
 * no-op (drift between rounds cancels), and each round's figures.
 *
 * With `replay` after the arguments it resolves the stream's own compute instead (as p5-stream-ab.ts does, on
 * one recorded round replayed to each version in turn), unread and read + JSON: no collector work of the
 * loop's, no drift between separate rounds, so a change of a few hundredths of a millisecond shows.
 *
 *   TMPDIR=/dev/shm npx tsx bench/profile/p5-unread-ab.ts main 30 200 replay
 */
import { runAgainst } from './p5-against.ts';

const [rev = 'main', rounds = '10', n = '200', mode = 'whole'] = process.argv.slice(2);
if (mode !== 'whole' && mode !== 'replay') throw new Error(`p5-unread-ab: the mode is whole or replay, not ${mode}`);

// Each replay starts on a collected heap (a full GC before it), so the collection of one version's garbage does
// not land in the other's window: what a replay is charged is its own work and the collections it triggers.
const REPLAY = `import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { median, record, replay as replayOnce, type MakeStream } from '../../../../bench/profile/p5-stream-replay.ts';
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const replay = (...args: Parameters<typeof replayOnce>) => (gc(), replayOnce(...args));
const ROUNDS = ${Number(rounds)};
const N = ${Number(n)};
const rec = await record(N);
const other = base as unknown as MakeStream;
const kinds = [['unread', false], ['read + JSON', true]] as const;
for (const [kind, read] of kinds) {
  for (let w = 0; w < 3; w++) { replay(rec, read, other, read); replay(rec, read, undefined, read); }
  const a: number[] = [];
  const b: number[] = [];
  for (let k = 0; k < ROUNDS; k++) {
    // Alternating which goes first, so each follows the other as often as it precedes it.
    if (k % 2) { b.push(replay(rec, read, undefined, read).cpu / N); a.push(replay(rec, read, other, read).cpu / N); }
    else { a.push(replay(rec, read, other, read).cpu / N); b.push(replay(rec, read, undefined, read).cpu / N); }
  }
  const d = median(b.map((x, i) => x - a[i]!));
  console.log(\`\${kind}, replayed \${ROUNDS}× (ms of the stream's CPU per lifecycle, medians): ${rev} \${median(a).toFixed(4)}, this tree \${median(b).toFixed(4)}, per pair \${d >= 0 ? '+' : ''}\${d.toFixed(4)}\`);
  console.log(\`  pairs (${rev} / tree): \${a.map((x, i) => \`\${x.toFixed(3)}/\${b[i]!.toFixed(3)}\`).join(' ')}\`);
}
`;

process.exitCode = await runAgainst(rev, 'p5-unread-ab', mode === 'replay' ? REPLAY : `import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InspectionEvent } from 'xstate';
import { createInspectionStream } from '../../../../src/inspect/inspection-stream.ts';
import { timeLifecycles } from '../../../../bench/profile/p5-whole-loop.ts';
type Make = typeof createInspectionStream;
const REV = ${JSON.stringify(rev)};
const ROUNDS = ${Number(rounds)};
const N = ${Number(n)};
const variant = (make: Make | undefined, read: boolean) => (clock: { now(): number }): ((ev: InspectionEvent) => void) => {
  if (!make) return () => {};
  const stream = make({ now: () => clock.now() });
  let seq = 0;
  if (read) stream.subscribe((b) => void JSON.stringify({ type: 'batch', seq: seq++, messages: b }));
  return stream.inspect;
};
const variants: [string, ReturnType<typeof variant>][] = [
  ['no-op', variant(undefined, false)],
  [REV + ' unread', variant(base as unknown as Make, false)],
  ['tree unread', variant(createInspectionStream, false)],
  [REV + ' JSON', variant(base as unknown as Make, true)],
  ['tree JSON', variant(createInspectionStream, true)],
];
const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2; };
const dataDir = await mkdtemp(join(tmpdir(), 'allocrun-p5unread-'));
try {
  const cpu = new Map<string, number[]>(variants.map(([k]) => [k, []]));
  for (const [, v] of variants) await timeLifecycles(N, dataDir, v);
  for (let r = 0; r < ROUNDS; r++) {
    for (let j = 0; j < variants.length; j++) {
      const [name, v] = variants[(r + j) % variants.length]!;
      cpu.get(name)!.push((await timeLifecycles(N, dataDir, v)).cpu / N);
    }
  }
  const noop = cpu.get('no-op')!;
  console.log(\`whole P5 loop, \${N} lifecycles × \${ROUNDS} rotating rounds; ms of CPU per lifecycle:\`);
  for (const [name] of variants) {
    const c = cpu.get(name)!;
    const over = name === 'no-op' ? '' : \`, over the no-op of its round \${median(c.map((x, i) => x - noop[i]!)).toFixed(3)}, \${(median(c.map((x, i) => noop[i]! / x)) * 100).toFixed(1)}% of it (medians)\`;
    console.log(\`  \${name.padEnd(16)} median \${median(c).toFixed(3)}\${over}; rounds \${c.map((x) => x.toFixed(2)).join(' ')}\`);
  }
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
`);
