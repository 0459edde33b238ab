/**
 * Issue #29: in a replay, the time-travel banner numbered events differently from the replay's bar and
 * said the live feed keeps arriving. Now it counts as the bar does (event #n of the bar's total, the bar's
 * position) and says the replay is paused; a pick while playing pauses it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordInspection } from '../../src/inspect/record.ts';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { launchBrowser } from './chromium.ts';
import { alloc, buildPage, mockTask } from './fixtures.ts';

let browser: Awaited<ReturnType<typeof launchBrowser>>;
let dir: string;
let recording: string;
let pageDir: string;

beforeAll(async () => {
  pageDir = buildPage();
  dir = await mkdtemp(join(tmpdir(), 'allocrun-replay-banner-'));
  recording = join(dir, 'run.jsonl');
  const clock = new SimulatedClock(0);
  const rec = recordInspection(recording, { now: () => clock.now() });
  const runner = createAllocRunner(alloc('a-banner', [mockTask('web', { run_for: '2s' })]), { clock, inspect: rec.inspect }).start();
  for (let i = 0; i < 2_000 && runner.getState().clientStatus !== 'complete'; i++) await clock.advance(50);
  await runner.done;
  await rec.close();
  browser = await launchBrowser();
}, 30_000);

afterAll(async () => {
  await browser?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  if (pageDir) await rm(pageDir, { recursive: true, force: true });
});

describe('the time-travel banner in a replay', () => {
  it("numbers the picked event as the replay's bar counts, and says the replay is paused", async () => {
    const page = await browser.context.newPage();
    page.on('pageerror', (err) => console.error('page error:', err));
    try {
      await page.goto(pathToFileURL(join(pageDir, 'index.html')).href);
      await page.setInputFiles('#file', recording);
      // Done with a recording loaded: before the file is read the empty player is "done" at 0 / 0.
      await page.waitForFunction(() => {
        const el = document.getElementById('position')!;
        return el.dataset.done === 'true' && !/ \/ 0$/.test(el.textContent ?? '');
      }, undefined, { timeout: 20_000 });
      const [position, total] = (await page.locator('#position').textContent())!.split(' / ').map(Number);
      expect(position).toBe(total);

      const row = page.locator('#timeline .tl-state').first();
      const seq = Number(await row.getAttribute('data-seq'));
      await row.click();
      await page.locator('#travel:not([hidden])').waitFor();
      const text = (await page.locator('#travel-text').textContent())!;
      // The page's sequence numbers run on across loads; the banner counts from the replay's start, as the bar does.
      const resetSeq = await page.evaluate(() => (window as unknown as { __allocrun: { model: { resetSeq: number } } }).__allocrun.model.resetSeq);
      expect(text).toContain(`event #${seq - resetSeq + 1} of ${total}`);
      expect(text).toContain(`Replay paused at ${position} (the bar)`);
      expect(text).not.toMatch(/live/i);
    } finally {
      await page.close();
    }
  }, 40_000);
});
