/**
 * Where P3's garbage comes from: a sampling heap profile of one P3 variant that keeps the objects the
 * collector has taken (`includeObjectsCollectedByMajorGC`/`MinorGC`), so it counts every allocation, not only
 * what is alive at the end. Prints KiB allocated per lifecycle by function (self), the top 30.
 *
 *   VARIANT=nohooks|hooks|bare|floor-hooks|floor-nohooks [NATIVE_BY_CALLER=1] npx tsx bench/profile/p3-garbage.ts [n=2000]
 */
import { Session } from 'node:inspector/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLifecycles, type P3Variant } from '../lib/p3-variants.ts';

const N = Number(process.argv[2] ?? 2000);
const variant = (process.env['VARIANT'] ?? 'nohooks') as P3Variant;
const byCaller = process.env['NATIVE_BY_CALLER'] === '1';
const dataDir = await mkdtemp(join(tmpdir(), 'allocrun-p3garbage-'));

const pool = (total: number, round: string) => runLifecycles(variant, total, round, dataDir);

interface Node { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: Node[] }
const session = new Session();
session.connect();
try {
  await pool(300, 'warm');
  await session.post('HeapProfiler.startSampling', { samplingInterval: 512, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  await pool(N, 'run');
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: Node } };
  const totals = new Map<string, number>();
  const walk = (n: Node, parentKey: string) => {
    const f = n.callFrame;
    let key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(node_modules|src|machines|bench)\//, '$1/')}:${f.lineNumber + 1}`;
    // NATIVE_BY_CALLER=1: a builtin's bytes (Set, Map, sort, keys, ...) are told apart by the function that called it.
    if (byCaller && f.url === '') key = `${key} <- ${parentKey}`;
    totals.set(key, (totals.get(key) ?? 0) + n.selfSize);
    for (const c of n.children) walk(c, key);
  };
  walk(profile.head, '');
  const all = [...totals.values()].reduce((a, b) => a + b, 0);
  console.log(`${variant}: ${(all / 1024 / N).toFixed(1)} KiB allocated per lifecycle (sampled)`);
  for (const [k, v] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env["TOP"] ?? 30))) console.log(`${(v / 1024 / N).toFixed(2).padStart(8)} KiB  ${(v / all * 100).toFixed(1).padStart(5)}%  ${k}`);
} finally {
  session.disconnect();
  await rm(dataDir, { recursive: true, force: true });
}
