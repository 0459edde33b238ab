import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { createActor, createMachine } from 'xstate';
import { PROTOCOL_VERSION, type InspectorCommandEvent, type ServerFrame } from '../../src/inspect/protocol.ts';
import { serveInspector, type InspectorServer, type InspectorServerOptions } from '../../src/inspect/server.ts';
import { allocRunnerControl } from '../../src/inspect/control.ts';
import { createInspectionStream } from '../../src/inspect/inspection-stream.ts';

// A stand-in page: these tests are about the server, the browser tests run the real one.
let pageDir: string;
beforeAll(async () => {
  pageDir = await mkdtemp(join(tmpdir(), 'allocrun-fake-page-'));
  await writeFile(join(pageDir, 'index.html'), '<html><script src="app.js"></script></html>');
  await writeFile(join(pageDir, 'app.js'), 'console.log("page")');
});
afterAll(() => rm(pageDir, { recursive: true, force: true }));

let server: InspectorServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const light = createMachine({ id: 'light', initial: 'green', states: { green: { on: { NEXT: 'yellow' } }, yellow: { on: { NEXT: 'red' } }, red: {} } });

async function start(opts: InspectorServerOptions = {}): Promise<InspectorServer> {
  server = await serveInspector({ pageDir, ...opts });
  return server;
}

/** A socket that queues every frame, with a way to wait for the one you want. */
function connect(url: string) {
  const ws = new WebSocket(url);
  const frames: ServerFrame[] = [];
  const waiters: (() => void)[] = [];
  ws.on('message', (data) => {
    frames.push(JSON.parse(data.toString()) as ServerFrame);
    waiters.splice(0).forEach((w) => w());
  });
  const next = () => new Promise<void>((r) => waiters.push(r));
  const until = async <T extends ServerFrame>(pred: (f: ServerFrame) => f is T): Promise<T> => {
    for (;;) {
      const found = frames.find(pred);
      if (found) return found;
      await next();
    }
  };
  return { ws, frames, until, next, opened: new Promise<void>((res, rej) => (ws.once('open', () => res()), ws.once('error', rej))) };
}

const wsUrl = (s: InspectorServer) => s.url.replace(/^http/, 'ws').replace('/?', '/ws?');
const isBatchWith = (pred: (m: { kind: string }) => boolean) => (f: ServerFrame): f is Extract<ServerFrame, { type: 'batch' }> =>
  f.type === 'batch' && f.messages.some(pred);

describe('serveInspector', () => {
  it('serves the page only with the token, and puts the token on its script', async () => {
    const s = await start();
    const ok = await fetch(s.url);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain(`src="app.js?token=${new URL(s.url).searchParams.get('token')}"`);
    const origin = new URL(s.url).origin;
    expect((await fetch(`${origin}/`)).status).toBe(403);
    expect((await fetch(`${origin}/app.js?token=wrong`)).status).toBe(403);
    expect(new URL(s.url).hostname).toBe('127.0.0.1');
  });

  it('refuses a socket without the token with 403', async () => {
    const s = await start();
    const ws = new WebSocket(`ws://${new URL(s.url).host}/ws?token=nope`);
    const status = await new Promise<number>((resolve) => ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
    expect(status).toBe(403);
  });

  it('gives a page that opens late the history from the start, then live batches', async () => {
    const s = await start();
    const actor = createActor(light, { id: 'l1', inspect: s.inspect }).start();
    actor.send({ type: 'NEXT' });
    s.stream.flush();

    const page = connect(wsUrl(s));
    const hello = await page.until((f): f is Extract<ServerFrame, { type: 'hello' }> => f.type === 'hello');
    expect(hello).toMatchObject({ mode: 'live', controls: false, version: PROTOCOL_VERSION, logs: false, resumed: false });
    const checkpoint = await page.until((f): f is Extract<ServerFrame, { type: 'checkpoint' }> => f.type === 'checkpoint');
    // The server started before the actor: its first checkpoint is the empty start, nothing was cut.
    expect(checkpoint).toMatchObject({ seq: -1, cut: false, messages: [] });
    // The transition to yellow, from before the page opened, is in the history that follows.
    const before = await page.until(isBatchWith((m) => m.kind === 'transition' && (m as { value?: unknown }).value === 'yellow'));
    expect(before.seq).toBeGreaterThan(checkpoint.seq);

    actor.send({ type: 'NEXT' });
    const live = await page.until(isBatchWith((m) => m.kind === 'transition' && (m as { value?: unknown }).value === 'red'));
    expect(live.seq).toBeGreaterThan(before.seq);
    page.ws.close();
  });

  it('resumes a page that reconnects to the same stream after its last batch, and starts over one from another stream', async () => {
    const s = await start();
    const actor = createActor(light, { id: 'l1', inspect: s.inspect }).start();
    s.stream.flush();
    const first = connect(wsUrl(s));
    const hello = await first.until((f): f is Extract<ServerFrame, { type: 'hello' }> => f.type === 'hello');
    const seen = await first.until(isBatchWith((m) => m.kind === 'actor'));
    first.ws.close();

    actor.send({ type: 'NEXT' });
    s.stream.flush();
    const again = connect(`${wsUrl(s)}&stream=${hello.stream}&after=${seen.seq}`);
    const resumed = await again.until((f): f is Extract<ServerFrame, { type: 'hello' }> => f.type === 'hello');
    expect(resumed).toMatchObject({ stream: hello.stream, resumed: true });
    await again.until(isBatchWith((m) => m.kind === 'transition' && (m as { value?: unknown }).value === 'yellow'));
    // No checkpoint, and nothing the page had already.
    expect(again.frames.filter((f) => f.type === 'checkpoint')).toEqual([]);
    expect(again.frames.filter((f) => f.type === 'batch').every((f) => (f as { seq: number }).seq > seen.seq)).toBe(true);
    again.ws.close();

    const other = connect(`${wsUrl(s)}&stream=another-server&after=${seen.seq}`);
    expect(await other.until((f): f is Extract<ServerFrame, { type: 'hello' }> => f.type === 'hello')).toMatchObject({ resumed: false });
    await other.until((f): f is Extract<ServerFrame, { type: 'checkpoint' }> => f.type === 'checkpoint');
    other.ws.close();
  });

  it('without history, gives a late joiner the current picture as a cut checkpoint', async () => {
    const s = await start({ history: false });
    const actor = createActor(light, { id: 'l1', inspect: s.inspect }).start();
    actor.send({ type: 'NEXT' });
    s.stream.flush();
    const page = connect(wsUrl(s));
    const picture = await page.until((f): f is Extract<ServerFrame, { type: 'checkpoint' }> => f.type === 'checkpoint');
    expect(picture.cut).toBe(true);
    expect(picture.messages.find((m) => m.kind === 'transition')).toMatchObject({ value: 'yellow' });
    page.ws.close();
  });

  it('without history, reads the stream only while a page is connected: with none, no messages are built', async () => {
    const stream = createInspectionStream();
    const read = stream.subscribe.bind(stream);
    let reading = 0;
    vi.spyOn(stream, 'subscribe').mockImplementation((fn) => {
      reading++;
      const off = read(fn);
      return () => (reading--, off());
    });
    const s = await start({ stream, history: false });
    const actor = createActor(light, { id: 'l1', inspect: s.inspect }).start();
    actor.send({ type: 'NEXT' });
    stream.flush();
    expect(reading).toBe(0);

    const page = connect(wsUrl(s));
    await page.until((f): f is Extract<ServerFrame, { type: 'checkpoint' }> => f.type === 'checkpoint' && f.messages.some((m) => m.kind === 'definition'));
    expect(reading).toBe(1);
    actor.send({ type: 'NEXT' });
    await page.until(isBatchWith((m) => m.kind === 'transition' && (m as { value?: unknown }).value === 'red'));
    page.ws.close();
    await vi.waitFor(() => expect(reading).toBe(0));
  });

  it('forwards commands to `control` with the id path of the target actor', async () => {
    const got: { path: string[]; event: InspectorCommandEvent }[] = [];
    const s = await start({ control: (path, event) => void got.push({ path, event }) });
    const actor = createActor(light, { id: 'a1', inspect: s.inspect }).start();
    s.stream.flush();
    const page = connect(wsUrl(s));
    await page.opened;
    page.ws.send(JSON.stringify({ type: 'command', id: 'c1', target: actor.sessionId, event: { type: 'SIGNAL', signal: 'SIGHUP' } }));
    const result = await page.until((f): f is Extract<ServerFrame, { type: 'command-result' }> => f.type === 'command-result');
    expect(result).toEqual({ type: 'command-result', id: 'c1', ok: true });
    expect(got).toEqual([{ path: ['a1'], event: { type: 'SIGNAL', signal: 'SIGHUP' } }]);
    page.ws.close();
  });

  it('refuses commands it cannot check or route, saying why', async () => {
    const s = await start({ control: () => { throw new Error('not now'); } });
    const page = connect(wsUrl(s));
    await page.opened;
    const send = (frame: unknown) => page.ws.send(JSON.stringify(frame));
    send({ type: 'command', id: 'bad', target: ['a1'], event: { type: 'DESTROY' } });
    send({ type: 'command', id: 'ghost', target: 'x:99999', event: { type: 'KILL' } });
    send({ type: 'command', id: 'no', target: ['a1'], event: { type: 'KILL' } });
    const results = () => page.frames.filter((f) => f.type === 'command-result') as Extract<ServerFrame, { type: 'command-result' }>[];
    while (results().length < 3) await page.next();
    const byId = Object.fromEntries(results().map((r) => [r.id, r]));
    expect(byId.bad).toMatchObject({ ok: false, message: expect.stringContaining('KILL, RESTART or SIGNAL') });
    expect(byId.ghost).toMatchObject({ ok: false, message: expect.stringContaining('no actor') });
    expect(byId.no).toMatchObject({ ok: false, message: 'not now' });
    page.ws.close();
  });

  it('is read-only without `control`', async () => {
    const s = await start();
    const page = connect(wsUrl(s));
    await page.opened;
    page.ws.send(JSON.stringify({ type: 'command', id: 'k', target: ['a1'], event: { type: 'KILL' } }));
    const r = await page.until((f): f is Extract<ServerFrame, { type: 'command-result' }> => f.type === 'command-result');
    expect(r).toMatchObject({ ok: false, message: expect.stringContaining('read-only') });
    page.ws.close();
  });

  it("serves @statelyai/inspect's events at /stately when asked", async () => {
    const s = await start({ stately: true });
    const actor = createActor(light, { inspect: s.inspect }).start();
    s.stream.flush();
    const ws = new WebSocket(s.statelyUrl!);
    const types = new Set<string>();
    await new Promise<void>((resolve) =>
      ws.on('message', (d) => {
        types.add((JSON.parse(d.toString()) as { type: string }).type);
        if (types.size === 3) resolve();
      }),
    );
    expect([...types].sort()).toEqual(['@xstate.actor', '@xstate.event', '@xstate.snapshot']);
    ws.close();
    actor.stop();
  });
});

describe('serveInspector options', () => {
  it('keeps a given token, so a restarted server accepts the page it served before', async () => {
    const token = 'kept-in-the-data-dir-0123456789';
    const s = await start({ token });
    expect(new URL(s.url).searchParams.get('token')).toBe(token);
    expect((await fetch(s.url)).status).toBe(200);
    await expect(serveInspector({ pageDir, token: 'short' })).rejects.toThrow(/at least 16 characters/);
  });

  it('streams a task\'s log lines at /logs, and says why when it cannot', async () => {
    const asked: unknown[] = [];
    const s = await start({
      logs: (alloc, task, opts) => {
        asked.push({ alloc, task, opts });
        if (task !== 'web') throw new Error(`allocation ${alloc} has no task "${task}"`);
        return {
          subscribe(o) {
            o.next({ stream: 'stdout', line: 'hello', time: 1 });
            o.next({ stream: 'stderr', line: 'oops', time: 2 });
            o.complete();
            return { unsubscribe() {} };
          },
        };
      },
    });
    const base = new URL(s.url);
    const logs = (q: string) => fetch(`${base.origin}/logs?token=${base.searchParams.get('token')}&${q}`);
    const ok = await logs('alloc=a1&task=web&follow=1&tail=5');
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('hello\n[stderr] oops\n');
    expect(asked[0]).toEqual({ alloc: 'a1', task: 'web', opts: { follow: true, tail: 5 } });
    const missing = await logs('alloc=a1&task=db');
    expect(missing.status).toBe(404);
    expect(await missing.text()).toMatch(/no task "db"/);
    expect((await logs('alloc=a1')).status).toBe(400);
    expect((await fetch(`${base.origin}/logs?alloc=a1&task=web`)).status).toBe(403);
  });

  it('says so when the app gave no log access', async () => {
    const s = await start();
    const base = new URL(s.url);
    const res = await fetch(`${base.origin}/logs?token=${base.searchParams.get('token')}&alloc=a1&task=web`);
    expect(res.status).toBe(404);
    expect(await res.text()).toMatch(/serves no logs/);
  });
});

describe('allocRunnerControl', () => {
  const sent: unknown[] = [];
  const task = { logic: { root: {} }, send: (ev: unknown) => sent.push({ to: 'web', ev }) };
  const hook = { logic: {}, send: (ev: unknown) => sent.push({ to: 'hook', ev }) };
  const runner = { send: (ev: unknown) => sent.push({ to: 'alloc', ev }), actor: { getSnapshot: () => ({ children: { web: task, 'prerun:alloc_dir': hook } }) } };
  const control = allocRunnerControl((id) => (id === 'a1' ? runner : undefined));

  it('sends alloc commands to the alloc, task restarts and signals through the alloc, task kills to the task', () => {
    sent.length = 0;
    control(['a1'], { type: 'KILL' });
    control(['a1', 'web'], { type: 'RESTART', failure: false });
    control(['a1', 'web'], { type: 'SIGNAL', signal: 'SIGHUP' });
    control(['a1', 'web'], { type: 'KILL' });
    expect(sent).toEqual([
      { to: 'alloc', ev: { type: 'KILL' } },
      { to: 'alloc', ev: { type: 'RESTART', failure: false, task: 'web' } },
      { to: 'alloc', ev: { type: 'SIGNAL', signal: 'SIGHUP', task: 'web' } },
      { to: 'web', ev: { type: 'KILL' } },
    ]);
  });

  it("answers with the runtime's refusal, and refuses a KILL to a dead task or a finished allocation", () => {
    const listeners = new Set<(r: { command: string; message: string }) => void>();
    let dead = false;
    let status = 'active';
    const refusing = {
      send: () => listeners.forEach((fn) => fn({ command: 'RESTART', message: 'cannot restart task "web": it is being killed' })),
      actor: { getSnapshot: () => ({ status, children: { web: task }, context: { taskStates: { web: { state: dead ? 'dead' : 'running' } } } }) },
      rejections$: { subscribe: (fn: (r: { command: string; message: string }) => void) => (listeners.add(fn), { unsubscribe: () => void listeners.delete(fn) }) },
    };
    const c = allocRunnerControl(() => refusing);
    expect(() => c(['a1', 'web'], { type: 'RESTART', failure: false })).toThrow('cannot restart task "web": it is being killed');
    expect(listeners.size).toBe(0);
    dead = true;
    expect(() => c(['a1', 'web'], { type: 'KILL' })).toThrow('cannot kill task "web": it is already dead');
    status = 'done';
    expect(() => c(['a1'], { type: 'KILL' })).toThrow(/allocation a1: its runner has finished \(done\)/);
  });

  it('refuses unknown allocations, hook actors and deeper paths', () => {
    expect(() => control(['nope'], { type: 'KILL' })).toThrow(/no allocation "nope"/);
    expect(() => control(['a1', 'prerun:alloc_dir'], { type: 'KILL' })).toThrow(/has no task/);
    expect(() => control(['a1', 'web', 'driver:wait'], { type: 'KILL' })).toThrow(/allocation or a task/);
  });
});
