/**
 * Regenerates docs/visualizer.png, the README's picture of the page: an allocation with a prestart task,
 * a main task, a sidecar and a poststop task, caught mid-run. Run by hand: `npx tsx test/visualizer/docs-screenshot.ts`.
 */
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { serveInspector } from '../../src/inspect/server.ts';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { launchBrowser } from './chromium.ts';
import { alloc, buildPage, mockTask } from './fixtures.ts';

const out = process.argv[2] ?? fileURLToPath(new URL('../../docs/visualizer.png', import.meta.url));
const pageDir = buildPage();
const clock = new SimulatedClock(Date.UTC(2025, 0, 1));
// A control that refuses everything: enough to show the command buttons enabled.
const server = await serveInspector({ pageDir, control: () => { throw new Error('read-only screenshot'); } });
const runner = createAllocRunner(
  alloc('web-7f3c', [
    mockTask('migrate', { run_for: '3s' }, { lifecycle: { hook: 'prestart' } }),
    mockTask('api', { run_for: '1h' }, { leader: true }),
    mockTask('log-shipper', { run_for: '1h' }, { lifecycle: { hook: 'poststart', sidecar: true } }),
    mockTask('cleanup', { run_for: '2s' }, { lifecycle: { hook: 'poststop' } }),
  ], { job: 'shop', group: 'web', type: 'service' }),
  { clock, inspect: server.inspect },
).start();
for (let i = 0; i < 400 && runner.getState().taskStates['log-shipper']?.state !== 'running'; i++) await clock.advance(100);
await clock.advance(2_000);

const browser = await launchBrowser();
try {
  const page = await browser.context.newPage();
  await page.setViewportSize({ width: 1600, height: 1000 });
  await page.goto(`${server.url}&select=${encodeURIComponent('web-7f3c/api')}`);
  await page.locator('#chart g[data-state="task.running"].active').waitFor();
  await page.locator('#tree [data-path="web-7f3c/log-shipper"][data-state^="running"]').waitFor();
  await page.screenshot({ path: out });
  console.log(`wrote ${out}`);
} finally {
  runner.stop();
  await browser.close();
  await server.close();
  await rm(pageDir, { recursive: true, force: true });
}
