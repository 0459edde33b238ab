/**
 * The two embedded databases that install from the npm registry alone on Node 20, doing the agent's kind
 * of write in one run: a small transaction (a job, an evaluation, an allocation record of ~2 KB) that must
 * be durable before it is answered. For each: sequential commits (one client), 1,000 commits in flight at
 * once (many clients), and how long the event loop stalls meanwhile (every runner and request waits that
 * long). lmdb is the project's dependency; better-sqlite3 is not: run this from a directory where
 * `npm install better-sqlite3@12 lmdb@3` was done, or with `--no-sqlite`.
 *
 *   npx tsx bench/store-engines.ts [--n 1000] [--no-sqlite]
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { open } from 'lmdb';
import { discard, scratchDir } from './lib/scratch.ts';

const nAt = process.argv.indexOf('--n');
const N = nAt > 0 ? Number(process.argv[nAt + 1]) : 1000;
const record = (i: number) => JSON.stringify({ id: `alloc-${i}`, spec: { tasks: [{ name: 't', config: { pad: 'x'.repeat(2000) } }] } });

interface Row {
  engine: string;
  sequentialMs: number;
  concurrentMs: number;
  stallP99Ms: number;
  stallMaxMs: number;
}

async function measure(engine: string, commit: (i: number) => Promise<void> | void): Promise<Row> {
  let t = performance.now();
  for (let i = 0; i < N; i++) await commit(i);
  const sequentialMs = (performance.now() - t) / N;
  // A 1 ms ticker: the longest gap between its ticks is the longest the event loop was held.
  const gaps: number[] = [];
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    gaps.push(now - last);
    last = now;
  }, 1);
  t = performance.now();
  // 1,000 clients at once, each in its own turn of the event loop as requests arrive.
  await Promise.all(Array.from({ length: N }, (_, i) => new Promise<void>((r) => setImmediate(() => void Promise.resolve(commit(N + i)).then(r)))));
  const concurrentMs = performance.now() - t;
  clearInterval(ticker);
  gaps.push(performance.now() - last);
  gaps.sort((a, b) => a - b);
  return { engine, sequentialMs, concurrentMs, stallP99Ms: gaps[Math.floor(gaps.length * 0.99)] ?? 0, stallMaxMs: gaps.at(-1) ?? 0 };
}

const rows: Row[] = [];
const dir = await scratchDir('allocrun-engines-');
try {
  const db = open<Buffer, string>({ path: join(dir, 'state.mdb'), noSubdir: true, encoding: 'binary', overlappingSync: false });
  const jobs = db.openDB<Buffer, string>({ name: 'jobs', encoding: 'binary' });
  const allocs = db.openDB<Buffer, string>({ name: 'allocs', encoding: 'binary' });
  rows.push(await measure('lmdb 3 (async, synced commit)', (i) => db.transaction(() => {
    void jobs.put(`j${i}`, Buffer.from(record(i)));
    void allocs.put(`a${i}`, Buffer.from(record(i)));
  }) as Promise<unknown> as Promise<void>));
  await db.close();

  let sqlite: unknown;
  try {
    sqlite = process.argv.includes('--no-sqlite') ? undefined : createRequire(join(process.cwd(), 'x.js'))('better-sqlite3');
  } catch {
    console.log('better-sqlite3 is not installed here (it is not a dependency): measuring lmdb alone; see docs/store.md for the side-by-side run');
  }
  if (sqlite) {
    const Database = sqlite as new (path: string) => {
      pragma(s: string): unknown;
      exec(s: string): void;
      prepare(s: string): { run(...a: unknown[]): void };
      transaction(fn: (i: number) => void): (i: number) => void;
      close(): void;
    };
    const sq = new Database(join(dir, 'state.sqlite'));
    sq.pragma('journal_mode = WAL');
    sq.pragma('synchronous = FULL');
    sq.exec('CREATE TABLE jobs (k TEXT PRIMARY KEY, v TEXT); CREATE TABLE allocs (k TEXT PRIMARY KEY, v TEXT)');
    const pj = sq.prepare('INSERT OR REPLACE INTO jobs VALUES (?, ?)');
    const pa = sq.prepare('INSERT OR REPLACE INTO allocs VALUES (?, ?)');
    const tx = sq.transaction((i: number) => {
      pj.run(`j${i}`, record(i));
      pa.run(`a${i}`, record(i));
    });
    rows.push(await measure('better-sqlite3 12 (sync, WAL, synchronous=FULL)', (i) => tx(i)));
    sq.close();
  }
} finally {
  await discard(dir);
}

console.log(`Durable two-record commits, ${N} sequential then ${N} at once (Node ${process.version})`);
for (const r of rows) {
  console.log(`  ${r.engine.padEnd(48)} sequential ${r.sequentialMs.toFixed(3)} ms/commit   ${N} at once ${r.concurrentMs.toFixed(0)} ms   longest gaps between 1 ms ticks: p99 ${r.stallP99Ms.toFixed(1)} ms, max ${r.stallMaxMs.toFixed(1)} ms`);
}
if (rows.length === 2) console.log(`  lmdb / better-sqlite3: ${N} at once ${(rows[0]!.concurrentMs / rows[1]!.concurrentMs).toFixed(2)}x, max stall ${(rows[0]!.stallMaxMs / rows[1]!.stallMaxMs).toFixed(2)}x`);
