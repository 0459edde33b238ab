/**
 * The page in Nomad's words and by keyboard, in a real Chromium (issue #29): rows named `job.group[index]`
 * with the short ID, sorting by job, status and age, arrow keys, Enter, Esc and `/`, the URL following the
 * selection and a link opening there scrolled into view, a task's Recent Events table, and command
 * results in Nomad's words cleared when the selection changes.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { allocRunnerControl } from '../../src/inspect/control.ts';
import { serveInspector, type InspectorServer } from '../../src/inspect/server.ts';
import { createAllocRunner, type AllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { TEST_NODE } from '../properties/world.ts';
import { launchBrowser } from './chromium.ts';
import { OUTPUT_DIR, advanceUntil, alloc, buildPage, holdingHook, mockTask } from './fixtures.ts';

let browser: Awaited<ReturnType<typeof launchBrowser>>;
let pageDir: string;
const runners = new Map<string, AllocRunner>();
const servers: InspectorServer[] = [];
const control = allocRunnerControl((id) => runners.get(id));

beforeAll(async () => {
  pageDir = buildPage();
  browser = await launchBrowser();
}, 30_000);

afterAll(async () => {
  for (const r of runners.values()) r.stop();
  for (const s of servers) await s.close();
  await browser?.close();
  if (pageDir) await rm(pageDir, { recursive: true, force: true });
});

async function serve(): Promise<InspectorServer> {
  const s = await serveInspector({ pageDir, control });
  servers.push(s);
  return s;
}

async function open(url: string): Promise<Page> {
  const page = await browser.context.newPage();
  page.on('pageerror', (err) => console.error('page error:', err));
  await page.goto(url);
  return page;
}

const run = (id: string, tasks: Parameters<typeof alloc>[1], extra: Parameters<typeof alloc>[2], opts: Record<string, unknown>, server: InspectorServer) => {
  const r = createAllocRunner(alloc(id, tasks, extra), { inspect: server.inspect, builtinHooks: false, node: TEST_NODE, hostEnv: {}, drivers: { mock: createMockDriver() }, ...opts }).start();
  runners.set(id, r);
  return r;
};

/** The allocation rows' paths, top to bottom as drawn. */
const allocOrder = (page: Page) =>
  page.locator('#allocs .row-alloc').evaluateAll((els) =>
    els.map((el) => ({ path: (el as HTMLElement).dataset.path!, top: el.getBoundingClientRect().top })).sort((a, b) => a.top - b.top).map((r) => r.path),
  );

describe('the page in Nomad words, by keyboard and by link', () => {
  it('names rows job.group[index] with the short ID, sorts them by job, status and age, and opens few allocations', async () => {
    const server = await serve();
    const clock = new SimulatedClock(0);
    const hold = holdingHook();
    // Created in this order: the age order. Job names sort the other way; statuses differ.
    run('zeta-web-0', [mockTask('web', { run_for: '1h' })], { job: 'zeta', group: 'web', type: 'service' }, { clock }, server);
    run('beta-api-2', [mockTask('api', { run_for: '1s' })], { job: 'beta', group: 'api' }, { clock }, server);
    run('0123456789abcdef', [mockTask('db', { run_for: '1h' })], { job: 'alpha', group: 'db' }, { clock, taskHooks: [hold.hook] }, server);
    const done = runners.get('beta-api-2')!;
    const page = await open(server.url);
    await advanceUntil(clock, () => done.getState().clientStatus === 'complete' && runners.get('zeta-web-0')!.getState().clientStatus === 'running');
    await page.locator('#allocs [data-path="beta-api-2"] [data-client-status="complete"]').waitFor();
    await page.locator('#allocs [data-path="zeta-web-0"] [data-client-status="running"]').waitFor();

    // Nomad's name, the 8-character short ID with the full ID in its tooltip.
    expect(await page.locator('#allocs [data-path="zeta-web-0"] .c-id').textContent()).toBe('zeta.web[0]');
    expect(await page.locator('#allocs [data-path="beta-api-2"] .c-id').textContent()).toBe('beta.api[2]');
    expect(await page.locator('#allocs [data-path="0123456789abcdef"] .c-id').textContent()).toBe('alpha.db');
    expect(await page.locator('#allocs [data-path="0123456789abcdef"] .c-short').textContent()).toBe('01234567');
    expect(await page.locator('#allocs [data-path="0123456789abcdef"] .c-short').getAttribute('title')).toBe('0123456789abcdef');
    // Three allocations: each starts expanded, its tasks shown.
    await page.locator('#allocs [data-path="zeta-web-0/web"]').waitFor();
    await page.locator('#allocs [data-path="0123456789abcdef/db"]').waitFor();

    expect(await allocOrder(page)).toEqual(['zeta-web-0', 'beta-api-2', '0123456789abcdef']);
    await page.click('#alloc-sort [data-sort="job"]');
    await page.waitForFunction(() => document.querySelector('#alloc-sort [data-sort="job"]')!.getAttribute('aria-sort') === 'ascending');
    await expect.poll(() => allocOrder(page)).toEqual(['0123456789abcdef', 'beta-api-2', 'zeta-web-0']);
    // Again: descending.
    await page.click('#alloc-sort [data-sort="job"]');
    await expect.poll(() => allocOrder(page)).toEqual(['zeta-web-0', 'beta-api-2', '0123456789abcdef']);
    // By status from the keyboard: pending, running, complete.
    await page.focus('#alloc-sort [data-sort="status"]');
    await page.keyboard.press('Enter');
    await expect.poll(() => allocOrder(page)).toEqual(['0123456789abcdef', 'zeta-web-0', 'beta-api-2']);
    await page.click('#alloc-sort [data-sort="age"]');
    await page.click('#alloc-sort [data-sort="age"]');
    expect(await page.locator('#alloc-sort [data-sort="age"]').getAttribute('aria-sort')).toBe('descending');
    await expect.poll(() => allocOrder(page)).toEqual(['0123456789abcdef', 'beta-api-2', 'zeta-web-0']);
    await page.screenshot({ path: `${OUTPUT_DIR}/nav-1-sorted.png` });
    hold.release();
    await page.close();
  }, 60_000);

  it('moves with the arrow keys, expands and collapses, selects with Enter, filters with / and goes back to live with Esc', async () => {
    const server = await serve();
    const clock = new SimulatedClock(0);
    const a = run('kb-a', [mockTask('web', { run_for: '1h' }), mockTask('side', { run_for: '1h' })], { type: 'service' }, { clock }, server);
    run('kb-b', [mockTask('db', { run_for: '1h' })], { type: 'service' }, { clock }, server);
    const page = await open(`${server.url}#/alloc/kb-a`);
    await advanceUntil(clock, () => a.getState().taskStates.web?.state === 'running');
    await page.locator('#allocs .row.selected[data-path="kb-a"]').waitFor();
    const name = () => page.locator('#selected-name').textContent();

    // The link put the cursor on its row: one step down is the first task.
    await page.focus('#allocs');
    await page.keyboard.press('ArrowDown');
    await page.locator('#allocs .row.cursor[data-path="kb-a/web"]').waitFor();
    // The cursor moves; the selection waits for Enter.
    expect(await name()).toBe('kb-a');
    await page.keyboard.press('Enter');
    await page.locator('#allocs .row.selected[data-path="kb-a/web"]').waitFor();
    expect(await name()).toBe('kb-a / web');
    expect(await page.evaluate(() => location.hash)).toBe('#/alloc/kb-a/task/web');

    // ← on a task steps out to its allocation, ← again collapses it, → opens it again.
    await page.keyboard.press('ArrowLeft');
    await page.locator('#allocs .row.cursor[data-path="kb-a"]').waitFor();
    await page.keyboard.press('ArrowLeft');
    await page.locator('#allocs [data-path="kb-a/web"]').waitFor({ state: 'detached' });
    expect(await page.locator('#allocs [data-path="kb-a"]').getAttribute('aria-expanded')).toBe('false');
    await page.keyboard.press('ArrowRight');
    await page.locator('#allocs [data-path="kb-a/side"]').waitFor();
    // ↑ from the first row stays there; End goes to the last row, Enter selects it.
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    await page.locator('#allocs .row.selected[data-path="kb-b/db"]').waitFor();

    // `/` focuses the filter.
    await page.locator('#allocs').focus();
    await page.keyboard.press('/');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('alloc-filter');
    await page.keyboard.type('side');
    await page.locator('#allocs [data-path="kb-b"]').waitFor({ state: 'detached' });
    await page.fill('#alloc-filter', '');

    // Esc leaves time travel.
    await page.locator('#timeline .tl-row').first().click();
    await page.locator('#travel:not([hidden])').waitFor();
    await page.locator('#allocs').focus();
    await page.keyboard.press('Escape');
    await page.locator('#travel[hidden]').waitFor({ state: 'attached' });
    await page.close();
  }, 60_000);

  it('puts the selection in the URL, and a link opens there with the row scrolled into view', async () => {
    const server = await serve();
    const clock = new SimulatedClock(0);
    for (let i = 0; i < 60; i++) run(`link-${String(i).padStart(2, '0')}`, [mockTask('web', { run_for: '1h' })], { type: 'service' }, { clock }, server);
    await advanceUntil(clock, () => runners.get('link-59')!.getState().taskStates.web?.state === 'running');
    const page = await open(`${server.url}#/alloc/link-57/task/web`);
    const row = page.locator('#allocs .row.selected[data-path="link-57/web"]');
    await row.waitFor();
    // Far below the first screen of 60 collapsed allocations, yet in view: opened and scrolled to.
    await expect
      .poll(async () => {
        const [r, list] = await Promise.all([row.boundingBox(), page.locator('#allocs').boundingBox()]);
        return !!r && !!list && r.y >= list.y && r.y + r.height <= list.y + list.height;
      })
      .toBe(true);
    await page.locator('#chart g[data-state="task.running"].active').waitFor();
    expect(await page.locator('#allocs [data-path="link-03/web"]').count()).toBe(0);

    // Selecting another allocation rewrites the URL; so does `?select=`, which also scrolls.
    await page.locator('#allocs [data-path="link-57"] .c-id').click();
    expect(await page.evaluate(() => location.hash)).toBe('#/alloc/link-57');
    const second = await open(`${server.url}&select=link-55/web`);
    await second.locator('#allocs .row.selected[data-path="link-55/web"]').waitFor();
    await expect.poll(() => second.evaluate(() => location.hash)).toBe('#/alloc/link-55/task/web');
    const box = await second.locator('#allocs .row.selected').boundingBox();
    const list = await second.locator('#allocs').boundingBox();
    expect(box!.y).toBeGreaterThanOrEqual(list!.y);
    expect(box!.y + box!.height).toBeLessThanOrEqual(list!.y + list!.height);
    // Changing the hash by hand selects too.
    await second.evaluate(() => (location.hash = '#/alloc/link-01'));
    await second.locator('#allocs .row.selected[data-path="link-01"]').waitFor();
    await page.close();
    await second.close();
  }, 60_000);

  it("shows a task's Recent Events newest first, and command results in Nomad's words cleared on selection change", async () => {
    const server = await serve();
    const clock = new SimulatedClock(0);
    const restart = { attempts: 1, interval: 600_000, delay: 1_000, mode: 'fail' as const };
    const batch = run('ev-a', [mockTask('web', { run_for: '2s', exit_code: 1 })], { restart }, { clock }, server);
    const live = run('ev-b', [mockTask('web', { run_for: '1h' })], { type: 'service' }, { clock }, server);
    const page = await open(`${server.url}#/alloc/ev-a/task/web`);
    await advanceUntil(clock, () => batch.getState().clientStatus === 'failed' && live.getState().taskStates.web?.state === 'running');
    const table = page.locator('#details-body table.events[data-task="web"]').first();
    await table.locator('tr[data-event-type="Not Restarting"]').waitFor();
    expect(await table.locator('th').allTextContents()).toEqual(['Time', 'Type', 'Description']);
    const types = await table.locator('tr[data-event-type] .ev-type').allTextContents();
    const events = batch.getState().taskStates.web!.events;
    expect(types).toEqual(events.map((e) => e.type).reverse());
    expect(await table.locator('tr[data-event-type="Terminated"] .ev-message').first().textContent()).toBe('Exit Code: 1');
    expect(await table.locator('tr[data-event-type] .ev-time').first().textContent()).toMatch(/^\+\d+\.\d{3}s$/);

    // A KILL on the failed allocation: refused in Nomad's words.
    await page.locator('#allocs [data-path="ev-a"] .c-id').click();
    await page.locator('#cmd-kill:not([disabled])').waitFor();
    await page.click('#cmd-kill');
    await page.locator('#command-status[data-ok="false"]').waitFor();
    expect(await page.locator('#command-status').textContent()).toBe('refused: allocation is failed');
    // Another selection: the old answer is gone.
    await page.locator('#allocs [data-path="ev-b/web"] .c-id').click();
    await page.locator('#allocs .row.selected[data-path="ev-b/web"]').waitFor();
    expect(await page.locator('#command-status').textContent()).toBe('');
    await page.click('#cmd-signal');
    await page.locator('#command-status[data-ok="true"]').waitFor();
    expect(await page.locator('#command-status').textContent()).toBe('task web signalled with SIGHUP');
    await page.screenshot({ path: `${OUTPUT_DIR}/nav-2-events.png` });
    await page.close();
  }, 60_000);

  it('refuses a KILL on a complete allocation with "allocation is complete"', async () => {
    const server = await serve();
    const clock = new SimulatedClock(0);
    const r = run('done-a', [mockTask('web', { run_for: '1s' })], {}, { clock }, server);
    const page = await open(`${server.url}#/alloc/done-a`);
    await advanceUntil(clock, () => r.getState().clientStatus === 'complete');
    await page.locator('#allocs [data-path="done-a"] [data-client-status="complete"]').waitFor();
    await page.locator('#cmd-kill:not([disabled])').waitFor();
    await page.click('#cmd-kill');
    await page.locator('#command-status[data-ok="false"]').waitFor();
    expect(await page.locator('#command-status').textContent()).toBe('refused: allocation is complete');
    await page.close();
  }, 60_000);
});
