/**
 * The page and a bounded history, in a real Chromium: a server that kept less than its stream said tells
 * the page so, and the page says *history cut*; one that kept everything does not.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActor, createMachine } from 'xstate';
import { serveInspector, type InspectorServer } from '../../src/inspect/server.ts';
import { launchBrowser } from './chromium.ts';
import { buildPage } from './fixtures.ts';

let browser: Awaited<ReturnType<typeof launchBrowser>>;
let pageDir: string;
const servers: InspectorServer[] = [];

beforeAll(async () => {
  pageDir = buildPage();
  browser = await launchBrowser();
}, 30_000);

afterAll(async () => {
  for (const s of servers) await s.close();
  await browser?.close();
  if (pageDir) await rm(pageDir, { recursive: true, force: true });
});

const ticker = createMachine({ id: 'ticker', context: { n: 0 }, initial: 'a', states: { a: { on: { TICK: 'b' } }, b: { on: { TICK: 'a' } } } });

/** A server with `maxMessages` of history, after 100 ticks of one actor, each in a batch of its own. */
async function serveAfterTicks(maxMessages: number): Promise<InspectorServer> {
  const s = await serveInspector({ pageDir, history: { maxMessages, segments: 2 } });
  servers.push(s);
  const actor = createActor(ticker, { id: 't1', inspect: s.inspect }).start();
  for (let i = 0; i < 100; i++) {
    actor.send({ type: 'TICK' });
    s.stream.flush();
  }
  return s;
}

describe('the page with a bounded history', () => {
  it('says the history was cut when the server dropped its oldest part', async () => {
    const s = await serveAfterTicks(40);
    const page = await browser.context.newPage();
    await page.goto(s.url);
    await page.locator('#history-cut:not([hidden])').waitFor({ timeout: 20_000 });
    expect(await page.locator('#history-cut').textContent()).toContain('history cut');
    await page.close();
  }, 60_000);

  it('says nothing of the kind when the server kept it all', async () => {
    const s = await serveAfterTicks(10_000);
    const page = await browser.context.newPage();
    await page.goto(s.url);
    await page.locator('#conn[data-state="open"]').waitFor({ timeout: 20_000 });
    await page.locator('#allocs [data-path="t1"]').waitFor({ timeout: 20_000 });
    expect(await page.locator('#history-cut').isHidden()).toBe(true);
    await page.close();
  }, 60_000);
});
