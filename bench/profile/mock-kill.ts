/**
 * The kill's CPU in one process with the mock driver (docs/benchmarks.md, "A finer instrument"): N allocations
 * of P3's three-task shape whose main task runs for an hour, started and left running, then all sent KILL; CPU
 * from the first KILL to the last runner done, per kill. No processes, files or saves: XState, the machines'
 * actions, the hooks and the runtime's bookkeeping only. `--no-hooks` leaves the built-in hooks out;
 * `--count` prints the task runners' and the alloc's microsteps and events per kill instead.
 *
 *   npx tsx -e "import('./bench/lib/compiled-entry.ts').then(m => m.compiledEntry('bench/profile/mock-kill.ts')).then(console.log)"
 *   node <that .mjs> [allocs=200] [rounds=10]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InspectionEvent } from 'xstate';
import { createAllocRunner, type AllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { threeTaskSpec } from '../lib/three-task-spec.ts';
import { median } from '../lib/stats.ts';

const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const ALLOCS = Number(positional[0] ?? 200);
const ROUNDS = Number(positional[1] ?? 10);
const builtinHooks = !process.argv.includes('--no-hooks');
const counting = process.argv.includes('--count');
const dataDir = await mkdtemp(join(tmpdir(), 'allocrun-mockkill-'));

let killing = false;
const counts = new Map<string, number>();
const bump = (k: string) => counts.set(k, (counts.get(k) ?? 0) + 1);
const machineOf = (e: InspectionEvent) => ((e.actorRef as unknown as { logic?: { id?: string } }).logic?.id ?? 'actor');
const inspect = counting
  ? (e: InspectionEvent) => {
      if (!killing) return;
      if (e.type === '@xstate.microstep') bump(`microsteps ${machineOf(e)} ${e.event.type.replace(/\.k-?\d+-\d+$/, '')}`);
      else if (e.type === '@xstate.event') bump(`events ${machineOf(e)}`);
      else if (e.type === '@xstate.actor') bump('actors');
    }
  : undefined;

const running = (r: AllocRunner) =>
  new Promise<void>((resolve) => {
    const sub = r.state$.subscribe((s) => {
      if (s.taskStates['main']?.state === 'running') {
        queueMicrotask(() => sub.unsubscribe());
        resolve();
      }
    });
  });

async function round(n: number): Promise<number> {
  const runners = Array.from({ length: ALLOCS }, (_, i) => createAllocRunner(threeTaskSpec(`k${n}-${i}`, '1h'), { dataDir, builtinHooks, inspect }).start());
  await Promise.all(runners.map(running));
  killing = true;
  const c0 = process.cpuUsage();
  for (const r of runners) r.send({ type: 'KILL' });
  await Promise.all(runners.map((r) => r.done));
  const c = process.cpuUsage(c0);
  killing = false;
  for (const r of runners) r.stop();
  return (c.user + c.system) / ALLOCS;
}

try {
  await round(-2);
  await round(-1);
  counts.clear();
  const per: number[] = [];
  for (let i = 0; i < ROUNDS; i++) per.push(await round(i));
  if (counting) for (const [k, v] of [...counts].sort()) console.log(`${(v / ALLOCS / ROUNDS).toFixed(2).padStart(7)}  ${k}`);
  else console.log(`kill, ${builtinHooks ? 'built-in hooks' : 'no hooks'}: ${ALLOCS} allocs × ${ROUNDS} rounds, µs CPU per kill: median ${median(per).toFixed(0)} [${per.map((v) => v.toFixed(0)).join(' ')}]`);
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
