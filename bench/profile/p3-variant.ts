/**
 * A profiling workload for P3 (bench/p3-lifecycle.ts): one of its variants alone, N lifecycles with 100
 * in flight, so a `--cpu-prof` of it shows only that variant's work. VARIANT=hooks|nohooks|bare|floor-hooks|floor-nohooks.
 *
 *   npx tsx -e "import('./bench/lib/compiled-entry.ts').then(m => m.compiledEntry('bench/profile/p3-variant.ts')).then(console.log)"
 *   VARIANT=nohooks node --cpu-prof --cpu-prof-dir=/tmp/prof <that .mjs> [n=2000]
 *   node bench/profile/summary.mjs /tmp/prof/<file>.cpuprofile
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLifecycles, type P3Variant } from '../lib/p3-variants.ts';

const N = Number(process.argv[2] ?? 2000);
const variant = (process.env['VARIANT'] ?? 'nohooks') as P3Variant;
const dataDir = await mkdtemp(join(tmpdir(), 'allocrun-p3prof-'));

const pool = (total: number, round: string) => runLifecycles(variant, total, round, dataDir);

try {
  await pool(200, 'warm');
  const c0 = process.cpuUsage();
  await pool(N, 'run');
  const c = process.cpuUsage(c0);
  console.log(`${variant}: ${N} lifecycles, ${((c.user + c.system) / 1000 / N).toFixed(3)} ms CPU each (user ${(c.user / 1000 / N).toFixed(3)}, system ${(c.system / 1000 / N).toFixed(3)})`);
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
