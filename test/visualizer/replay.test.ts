import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../../src/inspect/protocol.ts';
import { REPLAY_FORMAT_VERSION } from '../../src/inspect/replay-format.ts';
import { recordInspection } from '../../src/inspect/record.ts';
import { serveReplay } from '../../src/inspect/replay.ts';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { Model } from '../../visualizer/src/model.ts';
import { parseRecording } from '../../visualizer/src/replay-player.ts';
import { launchBrowser } from './chromium.ts';
import { OUTPUT_DIR, alloc, buildPage, mockTask } from './fixtures.ts';

let browser: Awaited<ReturnType<typeof launchBrowser>>;
let dir: string;
let recording: string;
let pageDir: string;

beforeAll(async () => {
  pageDir = buildPage();
  dir = await mkdtemp(join(tmpdir(), 'allocrun-replay-'));
  recording = join(dir, 'run.jsonl');
  // Record a whole run on simulated time: a prestart task, then the main task to completion.
  const clock = new SimulatedClock(0);
  const rec = recordInspection(recording, { now: () => clock.now() });
  const runner = createAllocRunner(alloc('a-rec', [mockTask('init', { run_for: '1s' }, { lifecycle: { hook: 'prestart' } }), mockTask('web', { run_for: '2s' })]), {
    clock, inspect: rec.inspect,
  }).start();
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

const active = (stateId: string) => `#chart g[data-state="${stateId}"].active`;

/** The replay positions (messages applied) at which the actor at `path` is in its top-level `pending` state. */
async function pendingPositions(file: string, path: string[]): Promise<number[]> {
  const { messages } = parseRecording(await readFile(file, 'utf8'));
  const model = new Model(false);
  const out: number[] = [];
  messages.forEach((m, i) => {
    model.apply([m]);
    const v = model.findByPath(path)?.value;
    if (v === 'pending' || (typeof v === 'object' && 'pending' in v)) out.push(i + 1);
  });
  return out;
}

describe('replay', () => {
  it('writes a header, protocol messages and replay lines (inputs and steps, for replay --check) as JSON lines', async () => {
    const lines = (await readFile(recording, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { kind: string });
    expect(lines[0]).toMatchObject({ kind: 'recording', version: PROTOCOL_VERSION, replay: REPLAY_FORMAT_VERSION });
    const kinds = new Set(lines.slice(1).map((l) => l.kind));
    expect([...kinds].sort()).toEqual(['actor', 'definition', 'event', 'replay-input', 'replay-root', 'replay-step', 'transition']);
  });

  it('starts playing a served recording, says so, and seeks back to an earlier moment with the bar', async () => {
    const server = await serveReplay(recording, { pageDir });
    const page = await browser.context.newPage();
    page.on('pageerror', (err) => console.error('page error:', err));
    try {
      await page.goto(`${server.url}&select=${encodeURIComponent('a-rec/web')}`);
      // It plays on its own (no "0 / N" with nothing happening) and says how to stop it.
      await page.locator('#replay-hint:has-text("playing")').waitFor();
      await page.locator('#position[data-done="true"]').waitFor({ timeout: 20_000 });
      await page.locator(active('task.terminal')).waitFor();
      await page.locator('#allocs [data-path="a-rec"] [data-client-status="complete"]').waitFor();
      await page.screenshot({ path: `${OUTPUT_DIR}/replay-1-end.png` });

      // Drag the bar back to a moment the web task was pending: the whole picture is rebuilt at that point.
      // Which moments those are follows from the recording (the page's own model, replayed here message by message).
      const total = Number(await page.locator('#seek').getAttribute('max'));
      const pending = await pendingPositions(recording, ['a-rec', 'web']);
      expect(pending.length).toBeGreaterThan(0);
      const pos = pending[Math.floor(pending.length / 2)]!;
      await page.locator('#seek').evaluate((el, v) => {
        (el as HTMLInputElement).value = String(v);
        el.dispatchEvent(new Event('input', { bubbles: true }));
      }, pos);
      await page.locator(`#position:text-is("${pos} / ${total}")`).waitFor();
      await page.locator(active('task.pending')).waitFor();
      expect(await page.locator(active('task.terminal')).count()).toBe(0);
      // Back then the allocation had not completed (pending or running, depending on where the bar landed).
      await page.locator('#allocs [data-path="a-rec"] [data-client-status]:not([data-client-status="complete"])').waitFor();
      await page.screenshot({ path: `${OUTPUT_DIR}/replay-2-seeked.png` });

      // Step from there: one transition at a time.
      await page.click('#step');
      await page.locator(`#position:not(:text-is("${pos} / ${total}"))`).waitFor();
    } finally {
      await page.close();
      await server.close();
    }
  }, 40_000);

  it('replays a recording picked with the file input on the page opened from disk', async () => {
    const page = await browser.context.newPage();
    page.on('pageerror', (err) => console.error('page error:', err));
    try {
      const html = pathToFileURL(join(pageDir, 'index.html'));
      await page.goto(`${html.href}?select=${encodeURIComponent('a-rec/init')}`);
      await page.setInputFiles('#file', recording);
      await page.locator('#position[data-done="true"]').waitFor({ timeout: 20_000 });
      await page.locator(active('task.terminal')).waitFor();
      expect(await page.locator('#mode').textContent()).toBe('replay: run.jsonl');
    } finally {
      await page.close();
    }
  }, 30_000);
});
