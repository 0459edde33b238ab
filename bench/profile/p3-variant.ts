/**
 * A profiling workload for P3 (bench/p3-lifecycle.ts): one of its variants alone, N lifecycles with 100
 * in flight, so a `--cpu-prof` of it shows only that variant's work. VARIANT=hooks|nohooks|bare.
 *
 *   npx tsx -e "import('./bench/lib/compiled-entry.ts').then(m => m.compiledEntry('bench/profile/p3-variant.ts')).then(console.log)"
 *   VARIANT=nohooks node --cpu-prof --cpu-prof-dir=/tmp/prof <that .mjs> [n=2000]
 *   node bench/profile/summary.mjs /tmp/prof/<file>.cpuprofile
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { startBareAlloc } from '../lib/bare-alloc.ts';
import { threeTaskSpec } from '../lib/three-task-spec.ts';

const N = Number(process.argv[2] ?? 2000);
const variant = process.env['VARIANT'] ?? 'nohooks';
const dataDir = await mkdtemp(join(tmpdir(), 'allocrun-p3prof-'));

const one = async (i: number, round: string) => {
  if (variant === 'bare') return startBareAlloc({ prestart: 0, main: 0, poststop: 0 }).done;
  const r = createAllocRunner(threeTaskSpec(`p3-${round}-${i}`), { dataDir, builtinHooks: variant === 'hooks' }).start();
  await r.done;
  r.stop();
};
const pool = async (total: number, round: string) => {
  let next = 0;
  const worker = async () => {
    while (next < total) await one(next++, round);
  };
  await Promise.all(Array.from({ length: Math.min(100, total) }, worker));
};

try {
  await pool(200, 'warm');
  const c0 = process.cpuUsage();
  await pool(N, 'run');
  const c = process.cpuUsage(c0);
  console.log(`${variant}: ${N} lifecycles, ${((c.user + c.system) / 1000 / N).toFixed(3)} ms CPU each (user ${(c.user / 1000 / N).toFixed(3)}, system ${(c.system / 1000 / N).toFixed(3)})`);
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
