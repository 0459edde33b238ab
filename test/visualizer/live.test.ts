import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { allocRunnerControl } from '../../src/inspect/control.ts';
import { createInspectionStream } from '../../src/inspect/inspection-stream.ts';
import type { InspectorCommandEvent } from '../../src/inspect/protocol.ts';
import { serveInspector, type InspectorServer } from '../../src/inspect/server.ts';
import { createAllocRunner, type AllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { launchBrowser } from './chromium.ts';
import { OUTPUT_DIR, alloc, buildPage, holdingHook, mockTask } from './fixtures.ts';

let browser: Awaited<ReturnType<typeof launchBrowser>>;
let context: BrowserContext;
const runners = new Map<string, AllocRunner>();
const commands: { path: string[]; event: InspectorCommandEvent }[] = [];
let server: InspectorServer;
let pageDir: string;

beforeAll(async () => {
  pageDir = buildPage();
  browser = await launchBrowser();
  context = browser.context;
  const control = allocRunnerControl((id) => runners.get(id));
  server = await serveInspector({
    pageDir,
    stream: createInspectionStream(),
    control: (path, event) => {
      commands.push({ path, event });
      return control(path, event);
    },
  });
}, 30_000);

afterAll(async () => {
  for (const r of runners.values()) r.stop();
  await server?.close();
  await browser?.close();
  if (pageDir) await rm(pageDir, { recursive: true, force: true });
});

/** Steps simulated time until `done()` holds; the runtime's real I/O (alloc dirs) settles between steps. */
async function advanceUntil(clock: SimulatedClock, done: () => boolean, step = 50, limit = 2_000): Promise<void> {
  for (let i = 0; i < limit && !done(); i++) await clock.advance(step);
  if (!done()) throw new Error('the runner did not get there');
}

async function open(path: string): Promise<Page> {
  const page = await context.newPage();
  page.on('pageerror', (err) => console.error('page error:', err));
  await page.goto(`${server.url}&select=${encodeURIComponent(path)}`);
  return page;
}

const active = (stateId: string) => `#chart g[data-state="${stateId}"].active`;

describe('the live visualizer', () => {
  it("highlights the task's state as it moves from pending to running to terminal", async () => {
    const clock = new SimulatedClock(0);
    const hold = holdingHook();
    const runner = createAllocRunner(alloc('a-live', [mockTask('web', { run_for: '10s' })]), {
      clock, inspect: server.inspect, taskHooks: [hold.hook],
    }).start();
    runners.set('a-live', runner);
    const page = await open('a-live/web');

    await page.locator(active('task.pending')).waitFor();
    expect(await page.locator('#allocs [data-path="a-live/web"]').count()).toBe(1);
    await page.screenshot({ path: `${OUTPUT_DIR}/live-1-pending.png` });

    hold.release();
    await advanceUntil(clock, () => runner.getState().taskStates.web?.state === 'running');
    await page.locator(active('task.running')).waitFor();
    expect(await page.locator(active('task.pending')).count()).toBe(0);
    await page.screenshot({ path: `${OUTPUT_DIR}/live-2-running.png` });

    await advanceUntil(clock, () => runner.getState().taskStates.web?.state === 'dead', 1_000);
    await page.locator(active('task.terminal')).waitFor();
    await page.locator('#allocs [data-path="a-live/web"] [data-task-state="dead"]').waitFor();
    await page.locator('#allocs [data-path="a-live"] [data-client-status="complete"]').waitFor();
    await page.screenshot({ path: `${OUTPUT_DIR}/live-3-terminal.png` });
    await page.close();
  }, 30_000);

  it('signals a task and kills the allocation from the buttons, and shows it reach terminal', async () => {
    // Real clock: a long-running task the page must stop.
    const runner = createAllocRunner(alloc('a-kill', [mockTask('web', { run_for: '1h' }), mockTask('side', { run_for: '1h' })], { type: 'service' }), {
      inspect: server.inspect,
    }).start();
    runners.set('a-kill', runner);
    const page = await open('a-kill');
    await page.locator('#cmd-kill:not([disabled])').waitFor();
    // With few allocations (≤ 5) they start expanded: the tasks are there without opening anything.
    await page.locator('#allocs [data-path="a-kill/web"] [data-task-state="running"]').waitFor();
    await page.screenshot({ path: `${OUTPUT_DIR}/kill-1-running.png` });

    // A task picked in the tree gets its own commands: SIGHUP goes to web, routed by its id path.
    await page.click('#allocs [data-path="a-kill/web"]');
    await page.locator('#chart[data-session] g[data-state="task.running"].active').waitFor();
    await page.click('#cmd-signal');
    await page.locator('#command-status[data-ok="true"]').waitFor();
    expect(commands).toContainEqual({ path: ['a-kill', 'web'], event: { type: 'SIGNAL', signal: 'SIGHUP' } });

    await page.click('#allocs [data-path="a-kill"] .c-id');
    await page.locator('#chart g[data-state="alloc.running"].active').waitFor();
    await page.click('#cmd-kill');
    await page.locator(active('alloc.terminal')).waitFor({ timeout: 15_000 });
    await page.locator('#command-status[data-ok="true"]').waitFor();
    expect(commands).toContainEqual({ path: ['a-kill'], event: { type: 'KILL' } });
    const final = await runner.done;
    expect(final.taskStates.web?.state).toBe('dead');
    await page.locator('#allocs [data-path="a-kill/web"] [data-task-state="dead"]').waitFor();
    await page.screenshot({ path: `${OUTPUT_DIR}/kill-2-terminal.png` });
    await page.close();
  }, 30_000);
});
