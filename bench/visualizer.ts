/**
 * The page under load: N live allocations (mock driver, real clock) whose main task keeps failing and
 * restarting, watched by a real headless Chromium. For each N it prints the page's main-thread busy share
 * (Chrome's own TaskDuration over wall time), click → updated-page latency for clicks on allocation rows
 * (and clicks lost: no update within 10 s), the stream's rate, and the recording's bytes per task run.
 *
 *   npx tsx bench/visualizer.ts [sizes=20,100,500] [seconds=10]
 *
 * Goals (issue #16): at 100 allocs busy ≤ 30% and click → update ≤ 100 ms; at 500 usable, no click lost.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { allocRunnerControl } from '../src/inspect/control.ts';
import { createInspectionStream } from '../src/inspect/inspection-stream.ts';
import { recordInspection } from '../src/inspect/record.ts';
import { serveInspector } from '../src/inspect/server.ts';
import type { AllocSpec } from '../src/jobspec/types.ts';
import { createAllocRunner, type AllocRunner } from '../src/runtime/create-alloc-runner.ts';
// @ts-expect-error: a plain .mjs build script without types
import { buildVisualizer } from '../visualizer/build.mjs';

// `npm run bench -- --quick` (bench/run-all.ts) asks for smoke sizes.
const quick = process.argv.includes('--quick');
const args = process.argv.slice(2).filter((a) => a !== '--quick');
const SIZES = (args[0] ?? (quick ? '20' : '20,100,500')).split(',').map(Number);
const SECONDS = Number(args[1] ?? (quick ? 4 : 10));
const CLICKS = 8;

function spec(i: number): AllocSpec {
  return {
    id: `web-${String(i).padStart(3, '0')}`, job: 'shop', group: 'web', type: 'service',
    restart: { attempts: 1_000_000, interval: 3_600_000, delay: 500, mode: 'delay' },
    tasks: [
      { name: 'migrate', driver: 'mock', config: { run_for: '200ms' }, lifecycle: { hook: 'prestart' } },
      // Fails every 2-4 s and is restarted: a steady stream of transitions for the page.
      { name: 'api', driver: 'mock', config: { run_for: `${2 + (i % 3)}s`, exit_code: 1 } },
      { name: 'shipper', driver: 'mock', config: { run_for: '1h' }, lifecycle: { hook: 'poststart', sidecar: true } },
    ],
  };
}

async function executablePath(): Promise<string> {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  return (await import('@sparticuz/chromium')).default.executablePath();
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length - 1) * p))] ?? NaN;

const work = await mkdtemp(join(tmpdir(), 'allocrun-bench-vis-'));
const pageDir = await buildVisualizer({ outdir: join(work, 'page') });
const browser = await chromium.launch({ executablePath: await executablePath(), headless: true, args: ['--no-sandbox', '--disable-gpu'] });
const rows: string[] = [];
try {
  for (const n of SIZES) {
    const runners = new Map<string, AllocRunner>();
    const stream = createInspectionStream();
    let messages = 0;
    stream.subscribe((b) => (messages += b.length));
    const server = await serveInspector({ pageDir, stream, control: allocRunnerControl((id) => runners.get(id)) });
    const recordingPath = join(work, `rec-${n}.jsonl`);
    const dataDir = join(work, `data-${n}`);
    let taskRuns = 0;
    for (let i = 0; i < n; i++) {
      const r = createAllocRunner(spec(i), { inspect: stream.inspect, dataDir });
      r.events$.subscribe(({ task, event }) => {
        if (task === 'api' && event.type === 'Started') taskRuns++;
      });
      runners.set(spec(i).id, r);
      r.start();
    }
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    await page.goto(server.url);
    await page.waitForFunction((want) => ((window as unknown as { __allocrun?: { roots: number } }).__allocrun?.roots ?? 0) >= want, n, { timeout: 120_000 });
    await page.waitForTimeout(2_000);

    const metric = async () => {
      const { metrics } = await cdp.send('Performance.getMetrics');
      return metrics.find((m) => m.name === 'TaskDuration')!.value;
    };
    const rec = recordInspection(recordingPath, { stream });
    const runsBefore = taskRuns;
    const msgsBefore = messages;
    const busy0 = await metric();
    const t0 = performance.now();
    const latencies: number[] = [];
    let lost = 0;
    const rowsShown = await page.locator('#allocs .row-alloc').count();
    for (let c = 0; c < CLICKS; c++) {
      // Spread the clicks over the window.
      await page.waitForTimeout((SECONDS * 1000) / (CLICKS + 1));
      const row = page.locator('#allocs .row-alloc').nth((c * 3 + 1) % Math.max(1, rowsShown));
      const path = await row.getAttribute('data-path');
      const box = await row.locator('.c-id').boundingBox();
      if (!path || !box) continue;
      const start = performance.now();
      await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
      try {
        await page.waitForFunction((p) => document.getElementById('selected-name')?.textContent === p, path.split('/').join(' / '), { polling: 'raf', timeout: 10_000 });
        latencies.push(performance.now() - start);
      } catch {
        lost++;
      }
    }
    const wall = (performance.now() - t0) / 1000;
    const busy = ((await metric()) - busy0) / wall;
    await rec.close();
    const runs = taskRuns - runsBefore;
    const bytes = (await stat(recordingPath)).size;
    rows.push(
      `${String(n).padStart(6)}${((messages - msgsBefore) / wall).toFixed(0).padStart(9)}${(busy * 100).toFixed(1).padStart(8)}%` +
        `${pct(latencies, 0.5).toFixed(0).padStart(10)}${pct(latencies, 1).toFixed(0).padStart(8)}${`${lost}/${CLICKS}`.padStart(7)}` +
        `${runs.toString().padStart(8)}${(runs ? bytes / runs / 1024 : 0).toFixed(1).padStart(12)}`,
    );
    console.log(rows[rows.length - 1]);
    await page.close();
    // Kill before stopping: a mock workload outlives a stopped runner (as a process outlives its agent), and
    // the sidecars' hour-long timers would keep this process alive for an hour after the last row.
    await Promise.all([...runners.values()].map((r) => (r.send({ type: 'KILL' }), r.done)));
    for (const r of runners.values()) r.stop();
    await server.close();
  }
} finally {
  await browser.close();
  await rm(work, { recursive: true, force: true });
}
console.log(`\nvisualizer under load: allocs whose main task fails and restarts every 2-4 s; ${SECONDS} s window, ${CLICKS} clicks on allocation rows`);
console.log(`${'allocs'.padStart(6)}${'msgs/s'.padStart(9)}${'busy'.padStart(9)}${'click p50'.padStart(10)}${'max ms'.padStart(8)}${'lost'.padStart(7)}${'runs'.padStart(8)}${'KiB/run'.padStart(12)}`);
for (const r of rows) console.log(r);
console.log('busy: page main-thread task time / wall time (goal ≤ 30% at 100); click: click → the page shows the selection (goal ≤ 100 ms at 100);');
console.log('KiB/run: recording bytes per task run (start → fail → restart, with its hooks), written while the window lasted.');
