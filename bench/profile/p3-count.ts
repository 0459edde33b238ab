/**
 * Counts what one P3 lifecycle (bench/p3-lifecycle.ts's three-task allocation on the mock driver) costs in
 * XState's terms: actors created and events processed, by kind, from an `inspect` callback. VARIANT=hooks|nohooks.
 * Averages over N lifecycles (100 in flight, as P3 runs them).
 *
 *   VARIANT=nohooks npx tsx bench/profile/p3-count.ts [n=200]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InspectionEvent } from 'xstate';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { threeTaskSpec } from '../lib/three-task-spec.ts';

const N = Number(process.argv[2] ?? 200);
const variant = process.env['VARIANT'] ?? 'nohooks';
const dataDir = await mkdtemp(join(tmpdir(), 'allocrun-p3count-'));

const actors = new Map<string, number>();
const events = new Map<string, number>();
const microsteps = new Map<string, number>();
const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
// Task names and alloc ids vary; the kind is the id with them folded away.
const kindOf = (id: string) => id.replace(/^p3-\d+$/, '<alloc>').replace(/^(init|main|cleanup)$/, '<task>');
const eventKind = (type: string) => (type === 'xstate.init' ? type : type.replace(/\.(init|main|cleanup)$/, '.<task>')).replace(/\.p3-\d+$/, '.<alloc>');

const inspect = (e: InspectionEvent) => {
  const target = kindOf((e.actorRef as unknown as { id: string }).id);
  if (e.type === '@xstate.actor') bump(actors, target);
  else if (e.type === '@xstate.event') bump(events, `${target} <- ${eventKind(e.event.type)}`);
  else if (e.type === '@xstate.microstep') bump(microsteps, `${target} ${eventKind(e.event.type)}`);
};

const one = async (i: number) => {
  const r = createAllocRunner(threeTaskSpec(`p3-${i}`), { dataDir, builtinHooks: variant === 'hooks', inspect }).start();
  await r.done;
  r.stop();
};
let next = 0;
await Promise.all(Array.from({ length: Math.min(100, N) }, async () => {
  while (next < N) await one(next++);
}));
await rm(dataDir, { recursive: true, force: true });

const print = (title: string, m: Map<string, number>) => {
  const rows = [...m].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((s, [, v]) => s + v, 0);
  console.log(`\n${title}: ${(total / N).toFixed(1)} per lifecycle`);
  for (const [k, v] of rows) console.log(`  ${(v / N).toFixed(2).padStart(6)}  ${k}`);
};
print('actors', actors);
print('events', events);
print('microsteps', microsteps);
const xc = (globalThis as { __xc?: Record<string, number> }).__xc;
if (xc) print('xstate internals (a patched copy of xstate counts them)', new Map(Object.entries(xc)));
const xa = (globalThis as { __xa?: Record<string, number> }).__xa;
if (xa) print('built-in actions resolved, by action', new Map(Object.entries(xa)));
