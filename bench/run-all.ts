/**
 * `npm run bench`: runs every benchmark in bench/ (each file at the top level, whoever wrote it), one at a
 * time in its own process so none disturbs another, passing the arguments on (`-- --quick` for smoke
 * sizes). At the end, the goal rows the benchmarks printed (Markdown table lines) are gathered into the
 * README's benchmark table.
 *
 *   npx tsx bench/run-all.ts [--quick] [--only p1,p3]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DISCARD_LIST_ENV, discardListed } from './lib/scratch.ts';
import { GOAL_TABLE_HEADER } from './lib/stats.ts';

const here = dirname(fileURLToPath(import.meta.url));
const self = basename(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const onlyAt = argv.indexOf('--only');
const only = onlyAt >= 0 ? argv[onlyAt + 1]!.split(',') : undefined;
const passOn = onlyAt >= 0 ? [...argv.slice(0, onlyAt), ...argv.slice(onlyAt + 2)] : argv;

// Each benchmark lists its scratch dirs instead of removing them; they go once every figure is taken, so no
// benchmark pays for the inodes the one before it deleted (bench/lib/scratch.ts says why that costs).
const discardDir = mkdtempSync(join(tmpdir(), 'allocrun-bench-run-'));
const discardList = join(discardDir, 'scratch-dirs');

const files = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== self)
  .filter((f) => !only || only.some((o) => f.startsWith(o)))
  .sort();

/** Runs one benchmark file; resolves with its exit code and the Markdown rows it printed. */
function runBench(file: string): Promise<{ code: number | null; rows: string[] }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, file), ...passOn], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, [DISCARD_LIST_ENV]: discardList },
    });
    const rows: string[] = [];
    let partial = '';
    child.stdout.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop()!;
      rows.push(...lines.filter((l) => l.startsWith('| ')));
    });
    child.on('exit', (code) => {
      if (partial.startsWith('| ')) rows.push(partial);
      resolve({ code, rows });
    });
  });
}

const failed: string[] = [];
const rows: string[] = [];
for (const file of files) {
  console.log(`\n=== ${file} ===`);
  const r = await runBench(file);
  if (r.code !== 0) failed.push(`${file} (exit ${r.code})`);
  rows.push(...r.rows);
}
if (rows.length > 0) {
  // Every row as its bench printed it: figure, floors of the same run, and met / not met against the goals
  // of bench/lib/goals.ts.
  console.log(`\n=== goal table ===\n${GOAL_TABLE_HEADER}`);
  for (const r of rows) console.log(r);
  const judged = rows.filter((r) => / (met|not met|n\/a) \|$/.test(r));
  const missed = judged.filter((r) => r.endsWith(' not met |')).length;
  console.log(`\n${judged.length - missed} of ${judged.length} goals met`);
}
await discardListed(discardList);
rmSync(discardDir, { recursive: true, force: true });
if (failed.length > 0) {
  console.error(`\nfailed: ${failed.join(', ')}`);
  process.exitCode = 1;
}
