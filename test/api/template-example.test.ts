/**
 * examples/site.nomad end to end on a real agent process: the job is registered from its HCL (its assets
 * URL pointed at a local HTTP server serving examples/site), its artifacts are downloaded, its task waits
 * for the variable, `PUT /v1/var` releases it, the page rendered from the downloaded template is served on
 * the task's port with the downloaded stylesheet, and a changed variable re-renders the page and restarts
 * the task (its env template's change_mode).
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { call, startAgent, waitForAllocs, type AgentProcess } from './agent-process.ts';

let agent: AgentProcess | undefined;
let assets: Server | undefined;
afterEach(async () => {
  await agent?.stop();
  agent = undefined;
  await new Promise((r) => (assets ? assets.close(r) : r(undefined)));
  assets = undefined;
});

/** Serves examples/site/<file> over HTTP, as the example's comment does with python3 -m http.server. */
async function serveAssets(): Promise<string> {
  assets = createServer((req, res) => {
    const name = (req.url ?? '/').replace(/^\/+/, '');
    if (!/^[\w.-]+$/.test(name)) return void res.writeHead(404).end();
    readFile(new URL(`../../examples/site/${name}`, import.meta.url)).then(
      (body) => res.writeHead(200).end(body),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((r) => assets!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(assets.address() as AddressInfo).port}`;
}

/** GET the page until `want` is in it (the server starts, and re-renders land, a little after). */
async function pageWith(port: number, want: string): Promise<string> {
  const end = Date.now() + 30_000;
  let last = '';
  for (;;) {
    try {
      last = await (await fetch(`http://127.0.0.1:${port}/`)).text();
      if (last.includes(want)) return last;
    } catch (err) {
      last = String(err);
    }
    if (Date.now() > end) throw new Error(`the page never held ${JSON.stringify(want)}; last: ${last.slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('examples/site.nomad', { timeout: 120_000 }, () => {
  it('downloads its artifacts, waits for its variable, then serves the page rendered from the downloaded template, and re-renders it when the variable changes', async () => {
    const assetsUrl = await serveAssets();
    agent = await startAgent();
    const file = await readFile(new URL('../../examples/site.nomad', import.meta.url), 'utf8');
    const text = file.replace('assets = "http://127.0.0.1:8484"', `assets = ${JSON.stringify(assetsUrl)}`);
    expect(text).not.toBe(file);
    const parsed = await call(agent.socket, 'POST', '/v1/jobs/parse', { JobHCL: text, Canonicalize: true });
    expect(parsed.status, parsed.text).toBe(200);
    expect((await call(agent.socket, 'PUT', '/v1/jobs', { Job: parsed.json() })).status).toBe(200);

    const [blocked] = await waitForAllocs(agent.socket, '/v1/job/site/allocations', (l) => (l[0]?.TaskStates?.server?.Events ?? []).some((e) => e.Type === 'Template'));
    expect(blocked!.TaskStates.server!.Events.find((e) => e.Type === 'Template')!.DisplayMessage).toBe('Missing: nomad.var.block(nomad/jobs/site@default.global)');

    expect((await call(agent.socket, 'PUT', '/v1/var/nomad/jobs/site', { Items: { title: 'Hello', greeting: 'from <allocrun>' } })).status).toBe(200);
    const [running] = await waitForAllocs(agent.socket, '/v1/job/site/allocations', (l) => l[0]?.ClientStatus === 'running');
    const ports = (await call(agent.socket, 'GET', `/v1/allocation/${running!.ID}`)).json().AllocatedResources.Shared.Ports as { Label: string; Value: number }[];
    const port = ports.find((p) => p.Label === 'http')!.Value;
    const page = await pageWith(port, '<h1>Hello</h1>');
    expect(page).toContain('<p>from &lt;allocrun&gt;</p>');
    expect(page).toContain(`Allocation ${running!.ID}, port ${port}.`);
    expect(page).toContain('<link rel="stylesheet" href="style.css">');
    expect(await (await fetch(`http://127.0.0.1:${port}/style.css`)).text()).toContain('font-family');
    expect(running!.TaskStates.server!.Events.map((e) => e.Type)).toContain('Downloading Artifacts');

    expect((await call(agent.socket, 'PUT', '/v1/var/nomad/jobs/site', { Items: { title: 'Changed', greeting: 'again' } })).status).toBe(200);
    await pageWith(port, '<h1>Changed</h1>');
    const [restarted] = await waitForAllocs(agent.socket, '/v1/job/site/allocations', (l) => (l[0]?.TaskStates?.server?.Events ?? []).some((e) => e.Type === 'Restart Signaled') && l[0]!.TaskStates.server!.State === 'running');
    expect(restarted!.TaskStates.server!.Events.find((e) => e.Type === 'Restart Signaled')!.DisplayMessage).toBe('Template with change_mode restart re-rendered');
  });
});
