/**
 * A/B of the inspection stream against another version of src/inspect (a git revision), on one recording:
 * records one P5 round's inspection events once, then replays them to the other version's stream and to this
 * tree's, alternating, in one process. Two separate runs of p5-stream-only.ts each record their own round
 * (the flushes fall differently), which moves the figure by ±5%; this does not.
 *
 *   npx tsx bench/profile/p5-stream-ab.ts [rev=main] [rounds=30] [n=200]
 *
 * Prints, per lifecycle (medians), the stream + JSON and the stream alone for both, and the JSON bytes.
 */
import { runAgainst } from './p5-against.ts';

const [rev = 'main', rounds = '30', n = '200'] = process.argv.slice(2);
process.exitCode = await runAgainst(rev, 'p5-ab', `import { median, record, replay, type MakeStream } from '../../../../bench/profile/p5-stream-replay.ts';
const ROUNDS = ${Number(rounds)};
const N = ${Number(n)};
const rec = await record(N);
const other = base as unknown as MakeStream;
for (let w = 0; w < 3; w++) { replay(rec, true, other); replay(rec, true); }
const r = { a: [] as number[], b: [] as number[], aAlone: [] as number[], bAlone: [] as number[] };
let bytes = { a: 0, b: 0 };
for (let k = 0; k < ROUNDS; k++) {
  const a = replay(rec, true, other);
  const b = replay(rec, true);
  r.a.push(a.cpu); r.b.push(b.cpu); bytes = { a: a.bytes, b: b.bytes };
  r.aAlone.push(replay(rec, false, other).cpu);
  r.bAlone.push(replay(rec, false).cpu);
}
const f = (xs: number[]) => (median(xs) / N).toFixed(3);
const kib = (x: number) => (x / N / 1024).toFixed(1);
console.log(\`one recording (\${rec.events.length} events, \${N} lifecycles), \${ROUNDS} alternating rounds, ms per lifecycle: \` +
  \`stream + JSON ${rev} \${f(r.a)} -> this tree \${f(r.b)}; stream alone \${f(r.aAlone)} -> \${f(r.bAlone)}; \${kib(bytes.a)} -> \${kib(bytes.b)} KiB per lifecycle\`);
`);
