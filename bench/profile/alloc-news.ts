/**
 * The alloc's cost per task runner news (`TASK_CHANGED`) alone, apart from the rest of a lifecycle: ten
 * three-task allocations (no built-in hooks) whose main tasks run for an hour on a clock never advanced, then
 * N news of the main task sent to each alloc, each a new TaskState object with the same content (so the alloc
 * mirrors it, runs the reducer and the coordinator, and nothing else happens). Prints µs of CPU per news.
 * A P3 lifecycle has 11 of them without built-in hooks, 14 with them (bench/profile/p3-count.ts).
 *
 *   npx tsx -e "import('./bench/lib/compiled-entry.ts').then(m => m.compiledEntry('bench/profile/alloc-news.ts')).then(console.log)"
 *   node <that .mjs> [n=300000]
 */
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { threeTaskSpec } from '../lib/three-task-spec.ts';

const N = Number(process.argv[2] ?? 300_000);
const ALLOCS = 10;
const clock = new SimulatedClock(0);
const runners = Array.from({ length: ALLOCS }, (_, i) => createAllocRunner(threeTaskSpec(`news-${i}`, '1h'), { clock, builtinHooks: false }).start());
await clock.advance(1);
for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
for (const r of runners) {
  const main = r.actor.getSnapshot().context.taskStates['main']!;
  if (main.state !== 'running') throw new Error(`main is ${main.state}, not running: ${JSON.stringify(r.actor.getSnapshot().value)}`);
}

const round = () => {
  for (const r of runners) {
    const now = r.actor.getSnapshot().context.taskStates['main']!;
    r.actor.send({ type: 'TASK_CHANGED', task: 'main', taskState: { ...now }, rejections: 0, runComplete: false });
  }
};
for (let i = 0; i < 2000; i++) round();
const c0 = process.cpuUsage();
for (let i = 0; i < N / ALLOCS; i++) round();
const c = process.cpuUsage(c0);
console.log(`${((c.user + c.system) / N).toFixed(2)} µs CPU per TASK_CHANGED`);
for (const r of runners) r.stop();
