/**
 * examples/site.nomad end to end on a real agent process: the job is registered from its HCL, its task
 * fetches its stylesheet artifact and waits for the variable, `PUT /v1/var` releases it, the rendered page is served on the task's port, and a
 * changed variable re-renders the page and restarts the task (its env template's change_mode).
 */
import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { call, startAgent, waitForAllocs, type AgentProcess } from './agent-process.ts';

let agent: AgentProcess | undefined;
afterEach(async () => {
  await agent?.stop();
  agent = undefined;
});

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
  it('waits for its variable, then serves the rendered page, and re-renders it when the variable changes', async () => {
    agent = await startAgent();
    const text = await readFile(new URL('../../examples/site.nomad', import.meta.url), 'utf8');
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
    // The stylesheet came as an artifact (packed by the prestart task, unpacked into local/site/).
    expect(page).toContain('<link rel="stylesheet" href="assets/site.css">');
    expect(await (await fetch(`http://127.0.0.1:${port}/assets/site.css`)).text()).toBe('body { font-family: sans-serif; }\n');
    expect(running!.TaskStates.server!.Events.map((e) => e.Type)).toContain('Downloading Artifacts');

    expect((await call(agent.socket, 'PUT', '/v1/var/nomad/jobs/site', { Items: { title: 'Changed', greeting: 'again' } })).status).toBe(200);
    await pageWith(port, '<h1>Changed</h1>');
    const [restarted] = await waitForAllocs(agent.socket, '/v1/job/site/allocations', (l) => (l[0]?.TaskStates?.server?.Events ?? []).some((e) => e.Type === 'Restart Signaled') && l[0]!.TaskStates.server!.State === 'running');
    expect(restarted!.TaskStates.server!.Events.find((e) => e.Type === 'Restart Signaled')!.DisplayMessage).toBe('Template with change_mode restart re-rendered');
  });
});
