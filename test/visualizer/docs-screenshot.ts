/**
 * Regenerates docs/visualizer.png, the README's picture of the page: Nomad's view of six allocations (one
 * open, its api task restarting after failures), the selected task's chart with hook loops folded, the
 * timeline and the details. Run by hand: `npx tsx test/visualizer/docs-screenshot.ts [out.png]`.
 */
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { createInspectionStream } from '../../src/inspect/inspection-stream.ts';
import { serveInspector } from '../../src/inspect/server.ts';
import { createAllocRunner, type AllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { launchBrowser } from './chromium.ts';
import { alloc, buildPage, mockTask } from './fixtures.ts';

const out = process.argv[2] ?? fileURLToPath(new URL('../../docs/visualizer.png', import.meta.url));
const pageDir = buildPage();
const clock = new SimulatedClock(Date.UTC(2025, 0, 1, 9, 30));
// A control that refuses everything: enough to show the command buttons enabled.
const server = await serveInspector({
  pageDir,
  stream: createInspectionStream({ now: () => clock.now() }),
  control: () => {
    throw new Error('read-only screenshot');
  },
});
const runners: AllocRunner[] = [];
const restart = { attempts: 10, interval: 3_600_000, delay: 5_000, mode: 'delay' as const };
for (let i = 1; i <= 6; i++) {
  const flaky = i === 2;
  runners.push(
    createAllocRunner(
      alloc(`shop-web-${i}`, [
        mockTask('migrate', { run_for: '3s' }, { lifecycle: { hook: 'prestart' } }),
        mockTask('api', flaky ? { run_for: '8s', exit_code: 1 } : { run_for: '1h' }, { leader: true }),
        mockTask('log-shipper', { run_for: '1h' }, { lifecycle: { hook: 'poststart', sidecar: true } }),
      ], { job: 'shop', group: 'web', type: 'service', restart }),
      { clock, inspect: server.inspect },
    ).start(),
  );
}
const browser = await launchBrowser();
try {
  const page = await browser.context.newPage();
  await page.setViewportSize({ width: 1600, height: 940 });
  await page.goto(`${server.url}&select=${encodeURIComponent('shop-web-2/api')}`);
  await page.locator('#conn:text-is("connected")').waitFor();
  for (let i = 0; i < 800 && (runners[1]!.getState().taskStates.api?.restarts ?? 0) < 2; i++) await clock.advance(250);
  for (let i = 0; i < 400 && runners[1]!.getState().taskStates.api?.state !== 'running'; i++) await clock.advance(250);
  await clock.advance(1_000);
  await page.locator('#allocs [data-path="shop-web-2/api"] [data-restarts="2"]').waitFor();
  await page.locator('#chart g[data-state="task.running"].active').waitFor();
  await page.waitForTimeout(500);
  await page.screenshot({ path: out });
  console.log(`wrote ${out}`);
} finally {
  for (const r of runners) r.stop();
  await browser.close();
  await server.close();
  await rm(pageDir, { recursive: true, force: true });
}
