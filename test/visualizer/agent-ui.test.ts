/**
 * The agent-served page in a real Chromium against a real `allocrun agent` process with a token (issue 29):
 * opened late at /ui with the token, it shows the transitions from before it opened; the agent restarts
 * on the same address and data dir, and the open page reconnects by itself (no reload), shows the
 * allocation again from the new agent's history, and keeps its selection.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { call, freePort, startAgent, waitForAllocs, type AgentProcess } from '../api/agent-process.ts';
import { startCli } from '../cli/spawn-cli.ts';
import { launchBrowser } from './chromium.ts';
import { OUTPUT_DIR } from './fixtures.ts';

let browser: Awaited<ReturnType<typeof launchBrowser>>;
let agent: AgentProcess | undefined;

beforeAll(async () => {
  browser = await launchBrowser();
}, 30_000);

afterAll(async () => {
  await agent?.stop();
  await browser?.close();
}, 60_000);

const job = { Job: { ID: 'sleeper', Type: 'service', TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sleep', args: ['3600'] }, KillTimeout: 1e9 }] }] } };

describe('the visualizer served by the agent at /ui', () => {
  it('shows the history from before it opened, and reconnects to a restarted agent by itself, keeping the selection', async () => {
    const port = await freePort();
    const http = ['--http', `127.0.0.1:${port}`];
    agent = await startAgent({ args: http });
    const token = (await readFile(join(agent.dataDir, 'agent-token'), 'utf8')).trim();
    // The agent says where its UI is, and never prints the token.
    await agent.cli.waitFor(/UI at http:\/\/127\.0\.0\.1:\d+\/ui\//);
    expect(agent.cli.stdout()).not.toContain(token);

    expect((await call(agent.socket, 'PUT', '/v1/jobs', job)).status).toBe(200);
    const [alloc] = await waitForAllocs(agent.socket, '/v1/job/sleeper/allocations', (l) => l[0]?.TaskStates?.t?.State === 'running');
    const id = alloc!.ID;

    const page: Page = await browser.context.newPage();
    page.on('pageerror', (err) => console.error('page error:', err));
    await page.goto(`http://127.0.0.1:${port}/ui/?token=${encodeURIComponent(token)}`);
    // Signed in: the token is in a cookie, not in the address.
    expect(page.url()).toBe(`http://127.0.0.1:${port}/ui/`);
    await page.locator('#conn[data-state="open"]').waitFor({ timeout: 20_000 });

    // The task went from pending to running before the page opened: the timeline has that transition.
    await page.fill('#timeline-filter', `${id}/t`);
    await page.locator('#timeline .tl-state').filter({ hasText: /pending.*⟶.*running/ }).first().waitFor({ timeout: 20_000 });
    await page.fill('#timeline-filter', '');

    // Select the task, then restart the agent under the open page.
    await page.locator(`#allocs [data-path="${id}"]`).waitFor();
    if ((await page.locator(`#allocs [data-path="${id}/t"]`).count()) === 0) await page.click(`#allocs [data-path="${id}"] .twisty`);
    await page.click(`#allocs [data-path="${id}/t"]`);
    await page.locator('#selected-name').filter({ hasText: `${id} / t` }).waitFor();
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
    await page.screenshot({ path: `${OUTPUT_DIR}/agent-ui-1-before-restart.png` });

    agent.cli.child.kill('SIGTERM');
    await agent.cli.exited;
    await page.locator('#conn[data-state="closed"]').waitFor({ timeout: 20_000 });
    const next = startCli(['agent', '--data-dir', agent.dataDir, '--json', ...http], { timeoutMs: 20 * 60_000 });
    agent = { ...agent, cli: next };
    await next.waitFor(/API listening on http:/);

    // Back by itself: connected again, the same page (no reload), the allocation shown from the new agent's
    // history, and the task still selected.
    await page.locator('#conn[data-state="open"]').waitFor({ timeout: 30_000 });
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    await page.locator(`#allocs [data-path="${id}/t"]`).waitFor({ timeout: 20_000 });
    await page.locator('#selected-name').filter({ hasText: `${id} / t` }).waitFor({ timeout: 20_000 });
    await page.locator('#chart[data-session] g.active').first().waitFor({ timeout: 20_000 });
    await page.screenshot({ path: `${OUTPUT_DIR}/agent-ui-2-after-restart.png` });
    await page.close();

    // A read token watches but may not KILL: the page shows the refusal in Nomad's words, and the task runs on.
    const created = await call(agent.socket, 'POST', '/v1/acl/token', { Name: 'watcher', Type: 'client', Policies: ['read'] });
    expect(created.status, created.text).toBe(200);
    const reader = await browser.context.newPage();
    reader.on('pageerror', (err) => console.error('page error:', err));
    await reader.goto(`http://127.0.0.1:${port}/ui/?token=${encodeURIComponent(created.json<{ SecretID: string }>().SecretID)}`);
    await reader.locator('#conn[data-state="open"]').waitFor({ timeout: 20_000 });
    await reader.locator(`#allocs [data-path="${id}"]`).waitFor({ timeout: 20_000 });
    await reader.click(`#allocs [data-path="${id}"]`);
    await reader.locator('#cmd-kill:not([disabled])').waitFor({ timeout: 20_000 });
    await reader.click('#cmd-kill');
    await reader.locator('#command-status[data-ok="false"]').filter({ hasText: 'refused: Permission denied' }).waitFor({ timeout: 20_000 });
    await reader.screenshot({ path: `${OUTPUT_DIR}/agent-ui-3-read-token-kill-refused.png` });
    const [still] = await waitForAllocs(agent.socket, '/v1/job/sleeper/allocations', () => true);
    expect(still!.ClientStatus).toBe('running');
    await reader.close();
  }, 180_000);
});
