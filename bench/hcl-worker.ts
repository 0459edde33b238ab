/**
 * What running the HCL parser in a worker thread costs: the worker's start-up (once per process, or after
 * a timeout), and the per-parse price of a worker round trip against calling hcl2json in the main thread.
 * Rounds alternate so drift hits both alike. Under tsx the worker also registers tsx (the dist/ build
 * does not), so start-up is higher here than for an installed package.
 *
 *   npx tsx bench/hcl-worker.ts [parses=50] [rounds=3]   (--quick: 5 parses, 1 round)
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parseHclInWorker, stopHclWorker, warmHclWorker } from '../src/jobspec/hcl-parser.ts';

const quick = process.argv.includes('--quick');
const [parsesArg, roundsArg] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const PARSES = Number(parsesArg ?? (quick ? 5 : 50));
const ROUNDS = Number(roundsArg ?? (quick ? 1 : 3));
const text = readFileSync(new URL('../examples/batch.nomad', import.meta.url), 'utf8');
const require = createRequire(import.meta.url);
const { parse } = require('@cdktf/hcl2json/lib/bridge.js') as { parse: (f: string, t: string) => Promise<unknown> };

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

const inProcessStart = await time(() => parse('x.hcl', ''));
const starts: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  await stopHclWorker();
  starts.push(await time(warmHclWorker));
}
const perParse = { main: [] as number[], worker: [] as number[] };
for (let round = 0; round < ROUNDS; round++) {
  perParse.main.push((await time(async () => { for (let i = 0; i < PARSES; i++) await parse('x.hcl', text); })) / PARSES);
  perParse.worker.push((await time(async () => { for (let i = 0; i < PARSES; i++) await parseHclInWorker('x.hcl', text, 10_000); })) / PARSES);
}
await stopHclWorker();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const main = median(perParse.main);
const worker = median(perParse.worker);
console.log(`hcl2json load in the main thread (first parse): ${inProcessStart.toFixed(0)} ms`);
console.log(`worker start-up to ready (median of ${ROUNDS}): ${median(starts).toFixed(0)} ms`);
console.log(`per parse of examples/batch.nomad (median of ${ROUNDS} rounds of ${PARSES}): main thread ${main.toFixed(2)} ms, worker ${worker.toFixed(2)} ms`);
console.log(`ratios: worker/main per parse ${(worker / main).toFixed(2)}x; worker start-up = ${(median(starts) / worker).toFixed(0)} worker parses`);
