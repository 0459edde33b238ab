import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { allocRunnerControl } from '../../src/inspect/control.ts';
import { serveInspector, type InspectorServer } from '../../src/inspect/server.ts';
import { createAllocRunner, type AllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { launchBrowser } from './chromium.ts';
import { OUTPUT_DIR, advanceUntil, alloc, buildPage, holdingHook, mockTask } from './fixtures.ts';

let browser: Awaited<ReturnType<typeof launchBrowser>>;
let context: BrowserContext;
let pageDir: string;
const runners = new Map<string, AllocRunner>();
const servers: InspectorServer[] = [];
const control = allocRunnerControl((id) => runners.get(id));

beforeAll(async () => {
  pageDir = buildPage();
  browser = await launchBrowser();
  context = browser.context;
}, 30_000);

afterAll(async () => {
  for (const r of runners.values()) r.stop();
  for (const s of servers) await s.close();
  await browser?.close();
  if (pageDir) await rm(pageDir, { recursive: true, force: true });
});

async function serve(opts: { token?: string; port?: number } = {}): Promise<InspectorServer> {
  const s = await serveInspector({ pageDir, control, ...opts });
  servers.push(s);
  return s;
}

async function open(server: InspectorServer, select?: string): Promise<Page> {
  const page = await context.newPage();
  page.on('pageerror', (err) => console.error('page error:', err));
  await page.goto(select ? `${server.url}&select=${encodeURIComponent(select)}` : server.url);
  return page;
}

const active = (stateId: string) => `#chart g[data-state="${stateId}"].active`;

describe('the page, Nomad view first', () => {
  it("shows each allocation's client status and each task's state, failures and restarts", async () => {
    const server = await serve();
    const clock = new SimulatedClock(0);
    const restart = { attempts: 2, interval: 600_000, delay: 1_000, mode: 'fail' as const };
    const runner = createAllocRunner(
      alloc('a-nomad', [mockTask('init', { run_for: '1s' }, { lifecycle: { hook: 'prestart' } }), mockTask('web', { run_for: '2s', exit_code: 1 })], { restart }),
      { clock, inspect: server.inspect },
    ).start();
    runners.set('a-nomad', runner);
    const page = await open(server, 'a-nomad/web');
    const row = (task: string) => `#allocs [data-path="a-nomad/${task}"]`;

    await advanceUntil(clock, () => (runner.getState().taskStates.web?.restarts ?? 0) >= 1);
    await page.locator('#allocs [data-path="a-nomad"] [data-client-status="running"], #allocs [data-path="a-nomad"] [data-client-status="pending"]').first().waitFor();
    await page.locator(`${row('init')} [data-task-state="dead"]`).waitFor();
    await page.locator(`${row('web')} [data-restarts="1"]`).waitFor();
    await page.screenshot({ path: `${OUTPUT_DIR}/nomad-1-restarting.png` });

    await advanceUntil(clock, () => runner.getState().clientStatus === 'failed');
    await page.locator('#allocs [data-path="a-nomad"] [data-client-status="failed"]').waitFor();
    await page.locator(`${row('web')} [data-task-state="dead"]`).waitFor();
    await page.locator(`${row('web')} [data-failed="true"]`).waitFor();
    await page.locator(`${row('web')} [data-restarts="2"]`).waitFor();
    // The last event is Nomad's, with its message, not an XState event.
    expect(await page.locator(`${row('web')} .c-event`).textContent()).toMatch(/Not Restarting/);
    expect(await page.locator(`${row('init')} [data-failed="false"]`).count()).toBe(1);
    // XState's own events and hook actors are behind the toggle.
    expect(await page.locator('#timeline [data-type="xstate.init"], #timeline .tl-internal').count()).toBe(0);
    expect(await page.locator('#allocs .row-call').count()).toBe(0);
    await page.check('#show-internal');
    await page.locator('#allocs .row-call').first().waitFor();
    await page.locator('#timeline .tl-internal').first().waitFor();
    await page.uncheck('#show-internal');
    // Search by task name keeps only what matches.
    await page.fill('#alloc-filter', 'init');
    await page.locator(`${row('web')}`).waitFor({ state: 'detached' });
    expect(await page.locator(`${row('init')}`).count()).toBe(1);
    await page.screenshot({ path: `${OUTPUT_DIR}/nomad-2-failed.png` });
    await page.close();
  }, 60_000);

  it('folds hook loops by default and unfolds and folds them again from their toggle', async () => {
    const server = await serve();
    const clock = new SimulatedClock(0);
    const runner = createAllocRunner(alloc('a-fold', [mockTask('web', { run_for: '1h' })]), { clock, inspect: server.inspect }).start();
    runners.set('a-fold', runner);
    const page = await open(server, 'a-fold/web');
    await advanceUntil(clock, () => runner.getState().taskStates.web?.state === 'running');
    await page.locator(active('task.running')).waitFor();
    const prestart = '#chart g[data-state="task.pending.prestart"]';
    const inner = '#chart g[data-state="task.pending.prestart.calling"]';
    await page.locator(`${prestart}.folded`).waitFor();
    expect(await page.locator(inner).count()).toBe(0);
    // Readable at the default zoom.
    expect(Number(await page.locator('#chart').getAttribute('data-scale'))).toBeGreaterThanOrEqual(0.8);

    await page.click(`#chart [data-fold="task.pending.prestart"]`);
    await page.locator(inner).waitFor();
    await page.locator(`${prestart}:not(.folded)`).waitFor();
    await page.screenshot({ path: `${OUTPUT_DIR}/fold-1-unfolded.png` });
    await page.click(`#chart [data-fold="task.pending.prestart"]`);
    await page.locator(inner).waitFor({ state: 'detached' });
    // Any compound state folds: the running state, with the active path inside it.
    await page.click(`#chart [data-fold="task.running"]`);
    await page.locator('#chart g[data-state="task.running"].folded.active').waitFor();
    expect(await page.locator('#chart g[data-state="task.running.active"]').count()).toBe(0);

    // The wheel zooms.
    const before = Number(await page.locator('#chart').getAttribute('data-scale'));
    await page.locator('#chart').hover();
    await page.mouse.wheel(0, 400);
    await page.waitForFunction((b) => Number(document.getElementById('chart')!.dataset.scale) < b, before);
    await page.close();
  }, 60_000);

  it('travels back to an earlier event from the timeline, with its full payload, and back to live', async () => {
    const server = await serve();
    const clock = new SimulatedClock(0);
    const hold = holdingHook();
    const runner = createAllocRunner(alloc('a-travel', [mockTask('web', { run_for: '1h' })], { type: 'service' }), {
      clock, inspect: server.inspect, taskHooks: [hold.hook],
    }).start();
    runners.set('a-travel', runner);
    const page = await open(server, 'a-travel/web');
    // Seen live while pending, so the timeline holds the moves out of it.
    await page.locator(active('task.pending')).waitFor();
    hold.release();
    await advanceUntil(clock, () => runner.getState().taskStates.web?.state === 'running');
    await page.locator(active('task.running')).waitFor();
    runner.send({ type: 'SIGNAL', task: 'web', signal: 'SIGHUP' });
    await page.locator('#timeline [data-type="SIGNAL"]').first().waitFor();

    // The task's first state change seen live: it was still pending then.
    await page.fill('#timeline-filter', 'a-travel/web');
    await page.locator('#timeline .tl-state:has-text("pending.starting")').first().click();
    await page.locator('#travel:not([hidden])').waitFor();
    await page.locator(active('task.pending')).waitFor();
    expect(await page.locator(active('task.running')).count()).toBe(0);
    expect(await page.locator('#cmd-kill').isDisabled()).toBe(true);
    await page.screenshot({ path: `${OUTPUT_DIR}/travel-1-past.png` });

    // An event's full payload.
    await page.locator('#timeline [data-type="SIGNAL"]').first().click();
    await page.locator('#details-body .payload pre:has-text("SIGHUP")').waitFor();

    await page.click('#back-to-live');
    await page.locator('#travel[hidden]').waitFor({ state: 'attached' });
    await page.locator(active('task.running')).waitFor();
    await page.close();
  }, 60_000);

  it("answers a KILL on a dead task with the runtime's refusal", async () => {
    const server = await serve();
    const clock = new SimulatedClock(0);
    // A batch task that completed stays dead (a service task would be restarted) while its sibling runs on.
    const runner = createAllocRunner(alloc('a-dead', [mockTask('web', { run_for: '1s' }), mockTask('side', { run_for: '1h' })], { type: 'batch' }), {
      clock, inspect: server.inspect,
    }).start();
    runners.set('a-dead', runner);
    const page = await open(server, 'a-dead/web');
    await advanceUntil(clock, () => runner.getState().taskStates.web?.state === 'dead');
    await page.locator('#allocs [data-path="a-dead/web"] [data-task-state="dead"]').waitFor();
    await page.locator('#cmd-kill:not([disabled])').waitFor();
    await page.click('#cmd-kill');
    await page.locator('#command-status[data-ok="false"]').waitFor();
    expect(await page.locator('#command-status').textContent()).toBe('refused: cannot kill task "web": it is already dead');
    await page.screenshot({ path: `${OUTPUT_DIR}/refused-kill.png` });
    await page.close();
  }, 60_000);

  it('goes stale with commands off when the server goes away, and reconnects to the restarted one', async () => {
    const token = 'a-stable-token-kept-across-restarts';
    const first = await serve({ token });
    const port = Number(new URL(first.url).port);
    const clock = new SimulatedClock(0);
    const before = createAllocRunner(alloc('a-before', [mockTask('web', { run_for: '1h' })], { type: 'service' }), { clock, inspect: first.inspect }).start();
    runners.set('a-before', before);
    const page = await open(first, 'a-before');
    await page.locator('#conn:text-is("connected")').waitFor();
    await page.locator('#cmd-kill:not([disabled])').waitFor();

    await first.close();
    await page.locator('#stale:not([hidden])').waitFor();
    expect(await page.locator('#stale').textContent()).toMatch(/stale/);
    expect(await page.locator('#cmd-kill').isDisabled()).toBe(true);
    await page.screenshot({ path: `${OUTPUT_DIR}/reconnect-1-stale.png` });

    // The same port and token, as a restarted agent with its token file has: the open page comes back by itself.
    const second = await serve({ token, port });
    const after = createAllocRunner(alloc('a-after', [mockTask('web', { run_for: '1h' })], { type: 'service' }), { clock, inspect: second.inspect }).start();
    runners.set('a-after', after);
    await page.locator('#stale[hidden]').waitFor({ state: 'attached', timeout: 20_000 });
    await page.locator('#allocs [data-path="a-after"]').waitFor();
    // The picture is the new server's: the old allocation is gone from it.
    expect(await page.locator('#allocs [data-path="a-before"]').count()).toBe(0);
    await page.click('#allocs [data-path="a-after"] .c-id');
    await page.locator('#cmd-kill:not([disabled])').waitFor();
    await page.close();
  }, 60_000);
});
