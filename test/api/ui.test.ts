/**
 * The agent's UI at /ui (src/api/routes/ui.ts, src/api/ui-auth.ts), in process on a real store and real
 * HTTP: behind the API's tokens (no token: a sign-in page; a read token watches; KILL needs lifecycle),
 * signed in once by `?token=` into a cookie, its socket refused to other origins, and a page that opens late
 * gets the history from before it opened.
 */
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { serveAgentApi, type ServedApi } from '../../src/api/serve-agent-api.ts';
import { openAgentUi } from '../../src/cli/agent-ui.ts';
import type { ServerFrame } from '../../src/inspect/protocol.ts';
import { createAgent, type Agent } from '../../src/runtime/create-agent.ts';
import { AgentStore } from '../../src/state/agent-store.ts';
import { buildPage } from '../visualizer/fixtures.ts';
import { call, waitForAllocs, type Alloc } from './agent-process.ts';
import { mockJob, running } from './in-process-agent.ts';

const TOKEN = 'management-token-0123456789abcdef';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Served {
  agent: Agent;
  api: ServedApi;
  socket: { socketPath: string };
  base: string;
  host: string;
}

/** An agent serving its API and UI on the socket and on TCP (guarded by TOKEN), with mock tasks. */
async function serve(): Promise<Served> {
  const dataDir = mkdtempSync(join(tmpdir(), 'allocrun-ui-'));
  const pageDir = buildPage();
  cleanups.push(() => rm(pageDir, { recursive: true, force: true }));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const store = AgentStore.open(dataDir);
  let agent: Agent | undefined;
  const ui = await openAgentUi((id) => agent?.get(id), pageDir);
  agent = createAgent({ dataDir, store: store.runners(), inspect: ui.feed.inspect });
  await agent.start();
  const api = await serveAgentApi({ agent, dataDir, store, version: 'test', http: '127.0.0.1:0', token: TOKEN, ui });
  cleanups.push(async () => {
    await api.close();
    ui.feed.close();
    for (const r of agent!.list()) r.send({ type: 'KILL' });
    await Promise.all(agent!.list().map((r) => r.done.catch(() => undefined)));
    await store.close();
  });
  const url = new URL(api.url!);
  return { agent, api, socket: { socketPath: api.socketPath }, base: api.url!, host: url.host };
}

async function createToken(s: Served, policies: string[]): Promise<string> {
  const res = await call(s.socket, 'POST', '/v1/acl/token', { Name: 'ui', Type: 'client', Policies: policies });
  expect(res.status, res.text).toBe(200);
  return res.json<{ SecretID: string }>().SecretID;
}

async function runJob(s: Served, id: string): Promise<Alloc> {
  const res = await call(s.socket, 'PUT', '/v1/jobs', mockJob(id));
  expect(res.status, res.text).toBe(200);
  return (await waitForAllocs(s.socket, `/v1/job/${id}/allocations`, running))[0]!;
}

/** Signs in with `?token=` as a browser does and returns the cookie the UI set. */
async function signIn(s: Served, token: string): Promise<string> {
  const res = await fetch(`${s.base}/ui/?token=${encodeURIComponent(token)}&select=x`, { redirect: 'manual', headers: { accept: 'text/html' } });
  expect(res.status).toBe(303);
  // The token leaves the address bar; the rest of the query stays.
  expect(res.headers.get('location')).toBe('/ui/?select=x');
  const cookie = res.headers.get('set-cookie')!;
  expect(cookie).toMatch(/; Path=\/ui; HttpOnly; SameSite=Strict$/);
  return cookie.split(';')[0]!;
}

/** A page socket that queues every frame. */
function openPage(s: Served, headers: Record<string, string>) {
  const ws = new WebSocket(`ws://${s.host}/ui/ws`, { headers: { origin: s.base, ...headers } });
  const frames: ServerFrame[] = [];
  const waiters: (() => void)[] = [];
  ws.on('message', (d) => {
    frames.push(JSON.parse(d.toString()) as ServerFrame);
    waiters.splice(0).forEach((w) => w());
  });
  const until = async <T extends ServerFrame>(pred: (f: ServerFrame) => f is T, what: string): Promise<T> => {
    const end = Date.now() + 20_000;
    for (;;) {
      const found = frames.find(pred);
      if (found) return found;
      if (Date.now() > end) throw new Error(`no ${what} in ${frames.length} frames`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 500);
      });
    }
  };
  const refused = new Promise<number>((resolve) => ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
  const opened = new Promise<void>((resolve, reject) => (ws.once('open', () => resolve()), ws.once('error', reject)));
  // A refused handshake rejects `opened`: the tests that expect it read `refused` instead.
  opened.catch(() => undefined);
  cleanups.push(async () => void (ws.readyState === WebSocket.OPEN && ws.terminate()));
  return { ws, frames, until, refused, opened };
}

const isResult = (id: string) => (f: ServerFrame): f is Extract<ServerFrame, { type: 'command-result' }> => f.type === 'command-result' && f.id === id;

describe("the agent's UI at /ui", { timeout: 60_000 }, () => {
  it('refuses a browser without a token with a sign-in page, and an API client with Permission denied', async () => {
    const s = await serve();
    const page = await fetch(`${s.base}/ui/`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(401);
    const text = await page.text();
    expect(text).toContain('This agent requires an ACL token');
    expect(text).toContain('allocrun acl token create -policy read');
    const api = await fetch(`${s.base}/ui/app.js`);
    expect([api.status, await api.text()]).toEqual([403, 'Permission denied']);
    // A wrong token: 403, and the cookie is cleared.
    const wrong = await fetch(`${s.base}/ui/?token=${'f'.repeat(64)}`, { headers: { accept: 'text/html' } });
    expect(wrong.status).toBe(403);
    expect(await wrong.text()).toContain('not valid on this agent');
    expect(wrong.headers.get('set-cookie')).toMatch(/Max-Age=0/);
    const ws = openPage(s, {});
    expect(await ws.refused).toBe(403);
  });

  it('lets a read token load the page and watch, with the history from before it opened, and refuses its KILL', async () => {
    const s = await serve();
    const alloc = await runJob(s, 'watched');
    const cookie = await signIn(s, await createToken(s, ['read']));
    const page = await fetch(`${s.base}/ui/?select=x`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<meta name="allocrun-feed" content="live">');
    expect((await fetch(`${s.base}/ui/app.js`, { headers: { cookie } })).status).toBe(200);

    const ws = openPage(s, { cookie });
    const hello = await ws.until((f): f is Extract<ServerFrame, { type: 'hello' }> => f.type === 'hello', 'hello');
    expect(hello).toMatchObject({ controls: true, mayCommand: false, resumed: false });
    const checkpoint = await ws.until((f): f is Extract<ServerFrame, { type: 'checkpoint' }> => f.type === 'checkpoint', 'checkpoint');
    expect(checkpoint).toMatchObject({ seq: -1, cut: false });
    // The alloc runner's way to running, from before the page opened, is in the history.
    const actor = await ws.until(
      (f): f is Extract<ServerFrame, { type: 'batch' }> => f.type === 'batch' && f.messages.some((m) => m.kind === 'actor' && m.id === alloc.ID),
      'the allocation actor',
    );
    expect(actor.seq).toBeGreaterThan(checkpoint.seq);

    ws.ws.send(JSON.stringify({ type: 'command', id: 'k1', target: [alloc.ID], event: { type: 'KILL' } }));
    const result = await ws.until(isResult('k1'), 'the KILL result');
    expect(result.ok).toBe(false);
    expect(result.message).toMatch(/^Permission denied: KILL is an allocation lifecycle command and this token's policies \(read\) do not grant it/);
    expect(s.agent.get(alloc.ID)!.getState().clientStatus).toBe('running');
  });

  it('lets a lifecycle token KILL an allocation from the page', async () => {
    const s = await serve();
    const alloc = await runJob(s, 'killed');
    const cookie = await signIn(s, await createToken(s, ['lifecycle']));
    const ws = openPage(s, { cookie });
    const hello = await ws.until((f): f is Extract<ServerFrame, { type: 'hello' }> => f.type === 'hello', 'hello');
    expect(hello.mayCommand).toBe(true);
    ws.ws.send(JSON.stringify({ type: 'command', id: 'k2', target: [alloc.ID], event: { type: 'KILL' } }));
    expect(await ws.until(isResult('k2'), 'the KILL result')).toMatchObject({ ok: true });
    await waitForAllocs(s.socket, `/v1/job/killed/allocations`, (list) => list[0]?.ClientStatus === 'complete');
  });

  it('refuses a command from a token revoked after the page opened', async () => {
    const s = await serve();
    const alloc = await runJob(s, 'revoked');
    const created = (await call(s.socket, 'POST', '/v1/acl/token', { Name: 'ui', Type: 'client', Policies: ['lifecycle'] })).json<{ SecretID: string; AccessorID: string }>();
    const ws = openPage(s, { cookie: await signIn(s, created.SecretID) });
    await ws.opened;
    expect((await call(s.socket, 'DELETE', `/v1/acl/token/${created.AccessorID}`)).status).toBe(200);
    ws.ws.send(JSON.stringify({ type: 'command', id: 'k3', target: [alloc.ID], event: { type: 'KILL' } }));
    expect((await ws.until(isResult('k3'), 'the KILL result')).message).toMatch(/^Permission denied: the token is no longer valid/);
  });

  it("refuses the socket's handshake from another origin, even with a valid cookie", async () => {
    const s = await serve();
    const cookie = await signIn(s, TOKEN);
    const ws = openPage(s, { cookie, origin: 'http://evil.example' });
    expect(await ws.refused).toBe(403);
  });

  it('answers 503 at /ui when the agent serves no UI (agent --no-ui)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'allocrun-ui-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const store = AgentStore.open(dataDir);
    const agent = createAgent({ dataDir, store: store.runners() });
    await agent.start();
    const api = await serveAgentApi({ agent, dataDir, store, version: 'test' });
    cleanups.push(async () => (await api.close(), await store.close()));
    const res = await call({ socketPath: api.socketPath }, 'GET', '/ui/');
    expect([res.status, res.text]).toEqual([503, 'this agent serves no UI (it was started with --no-ui)\n']);
  });

  it('serves the UI on the socket without a token, as the API there', async () => {
    const s = await serve();
    const res = await call(s.socket, 'GET', '/ui/');
    expect(res.status).toBe(200);
    expect(res.text).toContain('allocrun-feed');
    const redirect = await call(s.socket, 'GET', '/ui?select=a');
    expect([redirect.status, redirect.headers.location]).toEqual([302, '/ui/?select=a']);
  });
});
