/**
 * Heap of the process that runs N churning allocations (test/visualizer/churn.ts: the main task fails
 * and restarts every 2-4 s), with or without the inspector's server, sampled after a full GC every
 * SAMPLE seconds: does the runtime (or the server's history) grow with each restart?
 * Run: node --expose-gc --import tsx bench/profile/churn-heap.ts [allocs=500] [seconds=120] [server|none]
 */
import { serveInspector } from '../../src/inspect/server.ts';
import { startChurn } from '../../test/visualizer/churn.ts';

const n = Number(process.argv[2] ?? 500);
const seconds = Number(process.argv[3] ?? 120);
const withServer = (process.argv[4] ?? 'server') === 'server';
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const server = withServer ? await serveInspector({}) : undefined;
const churn = startChurn(n, server?.inspect ?? (() => undefined));
const started = Date.now();
for (let t = 15; t <= seconds; t += 15) {
  await new Promise((r) => setTimeout(r, started + t * 1000 - Date.now()));
  gc();
  const m = process.memoryUsage();
  console.log(`${t}s heapUsed ${(m.heapUsed / 2 ** 20).toFixed(1)} MB rss ${(m.rss / 2 ** 20).toFixed(1)} MB`);
}
await churn.stop();
await server?.close();
