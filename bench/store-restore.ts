/**
 * The agent's store beside the file store it replaced, in one run: N live three-task allocations (mock
 * driver) started under an agent whose runner records go to the LMDB store, then restored by a new agent
 * process; the same with one state file per allocation. Prints start and restore times and their ratio.
 *
 *   npx tsx bench/store-restore.ts [--quick] [--n 10000]
 */
import { benchArgs } from './lib/args.ts';
import { fmt, printTable } from './lib/stats.ts';
import { runP4 } from './p4-scale.ts';

const args = benchArgs({ n: 10_000, quickN: 200, rounds: 1 });
const kills = 5;
const lmdb = await runP4({ n: args.n, kills, store: 'lmdb' });
const files = await runP4({ n: args.n, kills, store: 'files' });
console.log(`The agent's store (LMDB) beside one state file per allocation: ${args.n} live 3-task allocations, mock driver, restarted in a new process`);
printTable(
  ['store', 'all started and running', 'restart: restored and running', 'KILL → dead p50'],
  [
    ['LMDB (state.mdb)', `${fmt(lmdb.startMs / 1000, 2)} s`, `${lmdb.restored} in ${fmt(lmdb.restoreMs / 1000, 2)} s`, `${fmt(lmdb.killP50, 1)} ms`],
    ['files (allocs/*/state.json)', `${fmt(files.startMs / 1000, 2)} s`, `${files.restored} in ${fmt(files.restoreMs / 1000, 2)} s`, `${fmt(files.killP50, 1)} ms`],
  ],
);
console.log(`restore, LMDB / files: ${fmt(lmdb.restoreMs / files.restoreMs, 2)}×;  start, LMDB / files: ${fmt(lmdb.startMs / files.startMs, 2)}×`);
