/**
 * Nomad's variables API on a served agent (src/api/routes/variables.ts), in process over its socket with a
 * real store: Nomad's shapes and status codes, check-and-set with its 409 answers, path rules, list paging
 * and prefixes, blocking queries woken by writes, a failed commit that changes nothing, the event stream's
 * Variables topic, and client tokens (a read token reads but cannot write). The secrets written here must
 * come back only where a variable is read, never in an error or a log line.
 */
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { serveAgentApi } from '../../src/api/serve-agent-api.ts';
import { createAgent } from '../../src/runtime/create-agent.ts';
import { AgentStore } from '../../src/state/agent-store.ts';
import { VariableStore } from '../../src/variables/variable-store.ts';
import { call, stream, type Endpoint } from './agent-process.ts';
import { cleanUp, freshDir, serve, type Served } from './in-process-agent.ts';

afterEach(cleanUp);

const SECRET = 'hunter2-very-secret';

/** An agent whose store's commits fail as a full disk's would while `full.on` is set. */
async function serveFull(): Promise<Served & { full: { on: boolean } }> {
  const full = { on: false };
  const faults = { beforeCommit: () => { if (full.on) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }); } };
  return { ...(await serve(freshDir(), undefined, { faults })), full };
}

const put = (s: Served, path: string, items: Record<string, string>, query = '') => call(s.socket, 'PUT', `/v1/var/${path}${query}`, { Items: items });

describe('the variables API', { timeout: 60_000 }, () => {
  it('writes, reads and lists a variable in Nomad\'s shape, with X-Nomad-Index', async () => {
    const s = await serve();
    const created = await put(s, 'app/db', { user: 'app', password: SECRET });
    expect(created.status, created.text).toBe(200);
    const v = created.json();
    expect(v).toEqual({
      Namespace: 'default', Path: 'app/db', CreateIndex: v.ModifyIndex, ModifyIndex: v.ModifyIndex,
      CreateTime: expect.any(Number), ModifyTime: v.CreateTime, Items: { user: 'app', password: SECRET },
    });
    expect(Number(created.headers['x-nomad-index'])).toBe(v.ModifyIndex);
    // Nomad's api.Variable types (the OpenAPI description, of Nomad 1.1.4, predates variables): uint64
    // indexes, int64 Unix-nanosecond times, a map of strings.
    for (const f of ['CreateIndex', 'ModifyIndex']) expect(Number.isSafeInteger(v[f]) && v[f] > 0, f).toBe(true);
    for (const f of ['CreateTime', 'ModifyTime']) expect(Number.isInteger(v[f]), f).toBe(true);
    expect(Math.abs(v.CreateTime / 1e6 - Date.now())).toBeLessThan(60_000);

    const read = await call(s.socket, 'GET', '/v1/var/app/db');
    expect([read.status, read.json()]).toEqual([200, v]);
    expect(Number(read.headers['x-nomad-index'])).toBe(v.ModifyIndex);

    const list = await call(s.socket, 'GET', '/v1/vars');
    expect(list.json()).toEqual([{ Namespace: 'default', Path: 'app/db', CreateIndex: v.CreateIndex, ModifyIndex: v.ModifyIndex, CreateTime: v.CreateTime, ModifyTime: v.ModifyTime }]);
    expect(list.text).not.toContain(SECRET);
  });

  it('answers 404 "variable not found" for an absent path, and 400 for none', async () => {
    const s = await serve();
    const res = await call(s.socket, 'GET', '/v1/var/not/there');
    expect([res.status, res.text]).toEqual([404, 'variable not found']);
    expect((await call(s.socket, 'GET', '/v1/var/')).status).toBe(400);
  });

  it('keeps namespaces apart: the query names one, the body\'s Namespace wins, * lists them all', async () => {
    const s = await serve();
    expect((await put(s, 'cfg', { k: 'd' })).status).toBe(200);
    expect((await put(s, 'cfg', { k: 'p' }, '?namespace=prod')).json()).toMatchObject({ Namespace: 'prod' });
    expect((await call(s.socket, 'PUT', '/v1/var/other?namespace=prod', { Namespace: 'dev', Items: { k: 'v' } })).json()).toMatchObject({ Namespace: 'dev' });
    expect((await call(s.socket, 'GET', '/v1/var/cfg?namespace=prod')).json().Items).toEqual({ k: 'p' });
    expect((await call(s.socket, 'GET', '/v1/var/cfg')).json().Items).toEqual({ k: 'd' });
    expect((await call(s.socket, 'GET', '/v1/vars')).json().map((m: { Path: string }) => m.Path)).toEqual(['cfg']);
    const all = (await call(s.socket, 'GET', '/v1/vars?namespace=*')).json().map((m: { Namespace: string; Path: string }) => `${m.Namespace}:${m.Path}`);
    expect(all).toEqual(['default:cfg', 'dev:other', 'prod:cfg']);
    const wildcard = await put(s, 'x', { k: 'v' }, '?namespace=*');
    expect([wildcard.status, wildcard.text]).toEqual([400, 'can not target wildcard ("*") namespace']);
  });

  it('creates with cas=0 only when absent, and answers 409 with the current variable when present', async () => {
    const s = await serve();
    const first = await put(s, 'lock', { owner: 'a' }, '?cas=0');
    expect(first.status).toBe(200);
    const second = await put(s, 'lock', { owner: 'b' }, '?cas=0');
    expect(second.status).toBe(409);
    expect(second.json()).toEqual(first.json());
    expect(Number(second.headers['x-nomad-index'])).toBe(first.json().ModifyIndex);
    expect((await call(s.socket, 'GET', '/v1/var/lock')).json().Items).toEqual({ owner: 'a' });
  });

  it('updates only at the current ModifyIndex: a stale index answers 409 with the current value', async () => {
    const s = await serve();
    const v1 = (await put(s, 'cfg', { n: '1' })).json();
    const v2 = await put(s, 'cfg', { n: '2' }, `?cas=${v1.ModifyIndex}`);
    expect(v2.status).toBe(200);
    expect(v2.json()).toMatchObject({ CreateIndex: v1.CreateIndex, ModifyIndex: expect.any(Number), Items: { n: '2' } });
    expect(v2.json().ModifyIndex).toBeGreaterThan(v1.ModifyIndex);
    const stale = await put(s, 'cfg', { n: '3' }, `?cas=${v1.ModifyIndex}`);
    expect([stale.status, stale.json()]).toEqual([409, v2.json()]);
    // Expecting a variable that does not exist: a zero one comes back.
    const absent = await put(s, 'nothing', { n: '1' }, '?cas=5');
    expect([absent.status, absent.json()]).toEqual([409, { Namespace: 'default', Path: 'nothing', CreateIndex: 0, ModifyIndex: 0, CreateTime: 0, ModifyTime: 0, Items: {} }]);
    const bad = await put(s, 'cfg', { n: '4' }, '?cas=abc');
    expect([bad.status, bad.text]).toEqual([400, 'cas: can not parse "abc": not an unsigned integer']);
  });

  it('deletes with 204, and with a check-and-set index only at the current one', async () => {
    const s = await serve();
    const v = (await put(s, 'gone/soon', { k: SECRET })).json();
    const stale = await call(s.socket, 'DELETE', `/v1/var/gone/soon?cas=${v.ModifyIndex - 1}`);
    expect([stale.status, stale.json()]).toEqual([409, v]);
    const done = await call(s.socket, 'DELETE', `/v1/var/gone/soon?cas=${v.ModifyIndex}`);
    expect([done.status, done.text]).toEqual([204, '']);
    expect(Number(done.headers['x-nomad-index'])).toBeGreaterThan(v.ModifyIndex);
    expect((await call(s.socket, 'GET', '/v1/var/gone/soon')).status).toBe(404);
    // Deleting what is not there is not an error; expecting it to be there is a conflict.
    expect((await call(s.socket, 'DELETE', '/v1/var/gone/soon')).status).toBe(204);
    expect((await call(s.socket, 'DELETE', `/v1/var/gone/soon?cas=${v.ModifyIndex}`)).status).toBe(409);
  });

  it.each([
    ['nomad/secret', 400, 'only paths at "nomad/jobs" or "nomad/job-templates" and below are valid paths under the top-level "nomad" directory'],
    ['nomad', 400, '"nomad" is a reserved top-level directory path, but you may write variables to "nomad/jobs", "nomad/job-templates", or below'],
    ['app.config', 400, 'invalid path "app.config": a path may hold only letters, digits, "-", "_", "~" and "/"'],
    [`${'a'.repeat(129)}`, 400, `invalid path "${'a'.repeat(129)}": it is 129 characters long, the most is 128`],
  ])('refuses to write at %s with a 400 naming the rule', async (path, status, message) => {
    const s = await serve();
    const res = await put(s, path, { k: SECRET });
    expect([res.status, res.text]).toEqual([status, message]);
    expect((await call(s.socket, 'GET', '/v1/vars?namespace=*')).json()).toEqual([]);
  });

  it('refuses bodies Nomad refuses, without quoting what they hold', async () => {
    const s = await serve();
    const noItems = await call(s.socket, 'PUT', '/v1/var/a', { Path: 'a' });
    expect([noItems.status, noItems.text]).toEqual([400, 'variable missing required Items object']);
    expect((await call(s.socket, 'PUT', '/v1/var/a', { Items: {} })).text).toBe('variable missing required Items object');
    const notString = await call(s.socket, 'PUT', '/v1/var/a', { Items: { n: 12345678 } });
    expect(notString.status).toBe(400);
    expect(notString.text).toMatch(/^Items\.n: /);
    expect(notString.text).not.toContain('12345678');
    const broken = await call(s.socket, 'PUT', '/v1/var/a', `{"Items": {"password": "${SECRET}"`);
    expect([broken.status, broken.text]).toEqual([400, 'the request body is not valid JSON: it does not parse']);
    const big = await put(s, 'a', { k: SECRET.repeat(4000) });
    expect(big.status).toBe(400);
    expect(big.text).toMatch(/^variables are limited to 64KiB in total size/);
    expect(big.text).not.toContain(SECRET);
    const lock = await call(s.socket, 'PUT', '/v1/var/a', { Items: { k: 'v' }, Lock: { TTL: '15s' } });
    expect([lock.status, lock.text]).toEqual([400, 'variable locks are not supported by this agent: leave Lock out']);
  });

  it('lists by prefix and in pages, with Nomad\'s next token', async () => {
    const s = await serve();
    for (const p of ['app/a', 'app/b', 'app/c', 'db/a', 'nomad/jobs/web']) expect((await put(s, p, { k: 'v' })).status).toBe(200);
    const paths = (res: { json: () => { Path: string }[] }) => res.json().map((m) => m.Path);
    expect(paths(await call(s.socket, 'GET', '/v1/vars?prefix=app/'))).toEqual(['app/a', 'app/b', 'app/c']);
    const page1 = await call(s.socket, 'GET', '/v1/vars?prefix=app/&per_page=2');
    expect(paths(page1)).toEqual(['app/a', 'app/b']);
    expect(page1.headers['x-nomad-nexttoken']).toBe('default.app/c');
    const page2 = await call(s.socket, 'GET', `/v1/vars?prefix=app/&per_page=2&next_token=${encodeURIComponent('default.app/c')}`);
    expect(paths(page2)).toEqual(['app/c']);
    expect(page2.headers['x-nomad-nexttoken']).toBeUndefined();
    expect(paths(await call(s.socket, 'GET', '/v1/vars?filter=' + encodeURIComponent('Path matches "^db/"')))).toEqual(['db/a']);
  });

  it('wakes a blocking list and a blocking read when a variable is written', async () => {
    const s = await serve();
    const v = (await put(s, 'watched', { n: '1' })).json();
    const listIndex = Number((await call(s.socket, 'GET', '/v1/vars')).headers['x-nomad-index']);
    const list = call(s.socket, 'GET', `/v1/vars?index=${listIndex}&wait=60s`);
    const read = call(s.socket, 'GET', `/v1/var/watched?index=${v.ModifyIndex}&wait=60s`);
    const other = call(s.socket, 'GET', `/v1/var/watched?index=${v.ModifyIndex}&wait=1s`);
    // An unrelated write wakes nothing about this variable (the read waits its full second).
    expect((await put(s, 'elsewhere', { n: '1' })).status).toBe(200);
    expect((await other).json().Items).toEqual({ n: '1' });
    const v2 = (await put(s, 'watched', { n: '2' })).json();
    const [l, r] = await Promise.all([list, read]);
    expect(Number(l.headers['x-nomad-index'])).toBeGreaterThan(listIndex);
    expect([r.json().Items, Number(r.headers['x-nomad-index'])]).toEqual([{ n: '2' }, v2.ModifyIndex]);
  });

  it('answers 500 naming the cause when the commit fails, changes nothing, and logs no secret', async () => {
    const s = await serveFull();
    const before = (await put(s, 'app/db', { password: 'old' })).json();
    const logged: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (logged.push(String(chunk)), true));
    try {
      s.full.on = true;
      const update = await put(s, 'app/db', { password: SECRET });
      expect(update.status).toBe(500);
      expect(update.text).toMatch(/cannot commit to .*state\.mdb: ENOSPC: no space left on device/);
      expect(update.text).not.toContain(SECRET);
      expect((await put(s, 'app/new', { password: SECRET })).status).toBe(500);
      expect((await call(s.socket, 'DELETE', '/v1/var/app/db')).status).toBe(500);
    } finally {
      spy.mockRestore();
    }
    expect(logged.join('')).toMatch(/PUT \/v1\/var\/app\/db: cannot commit/);
    expect(logged.join('')).not.toContain(SECRET);
    expect((await call(s.socket, 'GET', '/v1/var/app/db')).json()).toEqual(before);
    expect((await call(s.socket, 'GET', '/v1/var/app/new')).status).toBe(404);
    s.full.on = false;
    expect((await put(s, 'app/db', { password: 'new' }, `?cas=${before.ModifyIndex}`)).status).toBe(200);
  });

  it('keeps an acknowledged write when the agent stops without warning and starts again', async () => {
    const dir = freshDir();
    const first = await serve(dir);
    const v = (await put(first, 'nomad/jobs/web', { token: SECRET })).json();
    await first.stop();
    const second = await serve(dir);
    expect((await call(second.socket, 'GET', '/v1/var/nomad/jobs/web')).json()).toEqual(v);
    // The index goes on from where it was: a newer write has a newer index.
    expect((await put(second, 'next', { k: 'v' })).json().ModifyIndex).toBeGreaterThan(v.ModifyIndex);
  });

  it('puts variables into the store snapshot, and a restored store reads them back', async () => {
    const s = await serve();
    const v = (await put(s, 'nomad/jobs/web', { token: SECRET })).json();
    const file = join(freshDir(), 'snap.mdb');
    // The snapshot is binary: read as bytes, straight from the route.
    const bytes = await new Promise<Buffer>((resolve, reject) => {
      const req = request({ socketPath: s.socket.socketPath, path: '/v1/operator/snapshot' }, (r) => {
        if (r.statusCode !== 200) reject(new Error(`snapshot: ${r.statusCode}`));
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => resolve(Buffer.concat(chunks)));
        r.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
    writeFileSync(file, bytes, { mode: 0o600 });
    const copy = AgentStore.openFile(file, { readOnly: true, create: false });
    try {
      expect(new VariableStore(copy).get('nomad/jobs/web')).toEqual(v);
    } finally {
      await copy.close();
    }
  });

  it('publishes Variables events with the metadata only', async () => {
    const s = await serve();
    const events = await stream(s.socket, '/v1/event/stream?topic=Variables');
    try {
      const v = (await put(s, 'evt', { k: SECRET })).json();
      expect((await call(s.socket, 'DELETE', '/v1/var/evt')).status).toBe(204);
      const text = await events.until((t) => t.includes('VariableDeleted'));
      const batches = text.split('\n').filter((l) => l.startsWith('{"Index"')).map((l) => JSON.parse(l));
      expect(batches.flatMap((b) => b.Events.map((e: { Type: string }) => e.Type))).toEqual(['VariableUpserted', 'VariableDeleted']);
      const { ModifyIndex, CreateIndex, CreateTime, ModifyTime } = v;
      expect(batches[0].Events[0]).toEqual({ Topic: 'Variables', Type: 'VariableUpserted', Key: 'evt', Namespace: 'default', FilterKeys: [], Index: ModifyIndex, Payload: { Variable: { Namespace: 'default', Path: 'evt', CreateIndex, ModifyIndex, CreateTime, ModifyTime } } });
      expect(text).not.toContain(SECRET);
    } finally {
      events.close();
    }
  });
});

describe('variables and client tokens', { timeout: 60_000 }, () => {
  it('lets a read token read and list variables but not write or delete them; a submit token writes', async () => {
    const dataDir = freshDir();
    const store = AgentStore.open(dataDir);
    const agent = createAgent({ dataDir, store: store.runners() });
    await agent.start();
    const TOKEN = 'management-token-0123456789abcdef';
    const api = await serveAgentApi({ agent, dataDir, store, version: 'test', http: '127.0.0.1:0', token: TOKEN });
    try {
      const port = Number(new URL(api.url!).port);
      const tcp = (token: string): Endpoint => ({ host: '127.0.0.1', port, token });
      const token = async (policy: string) => (await call({ socketPath: api.socketPath }, 'POST', '/v1/acl/token', { Type: 'client', Policies: [policy] })).json().SecretID as string;
      const read = tcp(await token('read'));
      const submit = tcp(await token('submit'));
      const as = (e: Endpoint, method: string, path: string, body?: unknown) => call(e, method, path, body);

      expect((await as(submit, 'PUT', '/v1/var/app/cfg', { Items: { k: 'v' } })).status).toBe(200);
      expect((await as(read, 'GET', '/v1/var/app/cfg')).json().Items).toEqual({ k: 'v' });
      expect((await as(read, 'GET', '/v1/vars')).json()).toHaveLength(1);
      const refused = await as(read, 'PUT', '/v1/var/app/cfg', { Items: { k: 'changed' } });
      expect([refused.status, refused.text]).toEqual([403, 'Permission denied']);
      expect((await as(read, 'DELETE', '/v1/var/app/cfg')).status).toBe(403);
      expect((await as(read, 'GET', '/v1/var/app/cfg')).json().Items).toEqual({ k: 'v' });
      expect((await as(submit, 'DELETE', '/v1/var/app/cfg')).status).toBe(204);
    } finally {
      await api.close();
      await store.close();
    }
  });
});
