/**
 * Where P3's garbage comes from: a sampling heap profile of one P3 variant that keeps the objects the
 * collector has taken (`includeObjectsCollectedByMajorGC`/`MinorGC`), so it counts every allocation, not only
 * what is alive at the end. Prints KiB allocated per lifecycle by function (self), the top 30.
 *
 *   VARIANT=nohooks|hooks|bare|floor-hooks|floor-nohooks npx tsx bench/profile/p3-garbage.ts [n=2000]
 */
import { Session } from 'node:inspector/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { startBareAlloc } from '../lib/bare-alloc.ts';
import { runShapeFloorAlloc } from '../lib/shape-floor.ts';
import { threeTaskSpec } from '../lib/three-task-spec.ts';

const N = Number(process.argv[2] ?? 2000);
const variant = process.env['VARIANT'] ?? 'nohooks';
const dataDir = await mkdtemp(join(tmpdir(), 'allocrun-p3garbage-'));

const one = async (i: number, round: string) => {
  if (variant === 'bare') return startBareAlloc({ prestart: 0, main: 0, poststop: 0 }).done;
  if (variant === 'floor-hooks' || variant === 'floor-nohooks') return runShapeFloorAlloc(variant === 'floor-hooks' ? 'hooks' : 'nohooks');
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

interface Node { callFrame: { functionName: string; url: string; lineNumber: number }; selfSize: number; children: Node[] }
const session = new Session();
session.connect();
try {
  await pool(300, 'warm');
  await session.post('HeapProfiler.startSampling', { samplingInterval: 512, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  await pool(N, 'run');
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: Node } };
  const totals = new Map<string, number>();
  const walk = (n: Node) => {
    const f = n.callFrame;
    const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(node_modules|src|machines|bench)\//, '$1/')}:${f.lineNumber + 1}`;
    totals.set(key, (totals.get(key) ?? 0) + n.selfSize);
    n.children.forEach(walk);
  };
  walk(profile.head);
  const all = [...totals.values()].reduce((a, b) => a + b, 0);
  console.log(`${variant}: ${(all / 1024 / N).toFixed(1)} KiB allocated per lifecycle (sampled)`);
  for (const [k, v] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`${(v / 1024 / N).toFixed(2).padStart(8)} KiB  ${(v / all * 100).toFixed(1).padStart(5)}%  ${k}`);
} finally {
  session.disconnect();
  await rm(dataDir, { recursive: true, force: true });
}
