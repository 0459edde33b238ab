/**
 * A checked replay opened in the visualizer (`allocrun replay --check FILE --open`): the recording is
 * served with its divergence appended, and the page marks it on the timeline once the replay reaches it,
 * and says it in the status line.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { checkRecording, writeCheckedCopy } from '../../src/cli/replay-check.ts';
import { recordInspection } from '../../src/inspect/record.ts';
import { serveReplay } from '../../src/inspect/replay.ts';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { parseRecording } from '../../visualizer/src/replay-player.ts';
import { launchBrowser } from './chromium.ts';
import { OUTPUT_DIR, alloc, buildPage, mockTask } from './fixtures.ts';

let browser: Awaited<ReturnType<typeof launchBrowser>>;
let dir: string;
let pageDir: string;
let tampered: string;

beforeAll(async () => {
  pageDir = buildPage();
  dir = await mkdtemp(join(tmpdir(), 'allocrun-divergence-'));
  const recording = join(dir, 'run.jsonl');
  const clock = new SimulatedClock(0);
  const rec = recordInspection(recording, { now: () => clock.now() });
  const runner = createAllocRunner(alloc('a-div', [mockTask('web', { run_for: '2s' })]), { clock, inspect: rec.inspect, machineClock: rec.machineClock }).start();
  for (let i = 0; i < 2_000 && runner.getState().clientStatus !== 'complete'; i++) await clock.advance(50);
  await runner.done;
  await rec.close();
  // The task's exit as the recording has it, changed: today's machines record a different TaskState for it.
  const lines = (await readFile(recording, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  tampered = join(dir, 'tampered.jsonl');
  await writeFile(
    tampered,
    lines.map((l) => JSON.stringify(l.kind === 'replay-input' && l.src === 'driverWait' ? { ...l, event: { ...(l.event as object), output: { exitCode: 7, signal: 0 } } } : l)).join('\n') + '\n',
  );
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  if (pageDir) await rm(pageDir, { recursive: true, force: true });
});

it('marks the divergence of a checked replay on the timeline and in the status line', async () => {
  const { result } = await checkRecording(tampered);
  expect(result.divergence?.actor).toBe('a-div/web');
  const served = await mkdtemp(join(dir, 'checked-'));
  const checked = await writeCheckedCopy(tampered, result.divergence, served);
  // The page's parser takes the divergence and counts none of the replay lines as unreadable.
  const parsed = parseRecording(await readFile(checked, 'utf8'));
  expect(parsed.bad).toBe(0);
  expect(parsed.divergence?.message).toBe(result.divergence!.message);

  const server = await serveReplay(checked, { pageDir });
  const page = await browser.context.newPage();
  page.on('pageerror', (err) => console.error('page error:', err));
  try {
    await page.goto(server.url);
    await page.locator('#position[data-done="true"]').waitFor({ timeout: 20_000 });
    await page.locator('#command-status:has-text("replay --check: a-div/web diverged at step")').waitFor();
    const row = page.locator('#timeline .tl-divergence');
    await row.waitFor();
    expect(await row.textContent()).toContain(`replay diverged: ${result.divergence!.message}`);
    expect(await row.textContent()).toContain('exitCode 7');
    await page.screenshot({ path: `${OUTPUT_DIR}/replay-divergence.png` });
  } finally {
    await page.close();
    await server.close();
  }
}, 60_000);
