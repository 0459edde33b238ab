/**
 * Client tokens (src/api/acl.ts, src/api/routes/acl.ts), in process on a real store and real HTTP: every
 * route the API registers has a class, and every class is enforced on every route for every kind of token
 * (a table walked over all registered routes, so a new route cannot be left open by accident); tokens are
 * kept only as hashes, survive a restart, and stop working the moment they are deleted.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { installAcl, registeredRoutes, ROUTE_CLASSES, routeClass, type RouteClass } from '../../src/api/acl.ts';
import type { ApiContext } from '../../src/api/context.ts';
import { serveAgentApi, type ServedApi } from '../../src/api/serve-agent-api.ts';
import { buildApi } from '../../src/api/server.ts';
import { StateIndex } from '../../src/api/state-index.ts';
import { createAgent } from '../../src/runtime/create-agent.ts';
import { AgentStore, STORE_FILE } from '../../src/state/agent-store.ts';
import { call, waitForAllocs, type Endpoint } from './agent-process.ts';

const TOKEN = 'management-token-0123456789abcdef';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'allocrun-acl-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

interface Served {
  dataDir: string;
  store: AgentStore;
  api: ServedApi;
  socket: Endpoint;
  tcp: (token?: string) => Endpoint;
  stop(): Promise<void>;
}

/** An agent with its API on the socket and on TCP (guarded by TOKEN), on `dataDir`. */
async function serve(dataDir = freshDir()): Promise<Served> {
  const store = AgentStore.open(dataDir);
  const agent = createAgent({ dataDir, store: store.runners() });
  await agent.start();
  const found = (await store.runners().list()).map((r) => ({ ...r, runner: agent.get(r.spec.id) }));
  const api = await serveAgentApi({ agent, dataDir, store, version: 'test', found, http: '127.0.0.1:0', token: TOKEN });
  const port = Number(new URL(api.url!).port);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await api.close();
    for (const r of agent.list()) r.send({ type: 'KILL' });
    await Promise.all(agent.list().map((r) => r.done.catch(() => undefined)));
    await store.close();
  };
  cleanups.push(stop);
  return { dataDir, store, api, socket: { socketPath: api.socketPath }, tcp: (token) => ({ host: '127.0.0.1', port, token }), stop };
}

/** Creates a client token through the socket; its accessor and its secret. */
async function createToken(s: Served, policies: string[], name = ''): Promise<{ accessor: string; secret: string }> {
  const res = await call(s.socket, 'POST', '/v1/acl/token', { Name: name, Type: 'client', Policies: policies });
  expect(res.status, res.text).toBe(200);
  const body = res.json<{ AccessorID: string; SecretID: string }>();
  return { accessor: body.AccessorID, secret: body.SecretID };
}

/**
 * Who may call a route, written from the rules (issue 25, point 5) rather than read from ROUTE_CLASSES:
 * reads are `read`, job and variable writes `submit`, allocation restart/signal/stop `lifecycle`, and managing tokens or
 * taking a snapshot of the whole store `management`. A route these rules do not cover fails the walk.
 */
function expectedClass(method: string, url: string): RouteClass {
  const read = method === 'GET' || method === 'HEAD';
  if (url === '/v1/acl/token/self' && read) return 'read';
  if (url.startsWith('/v1/acl/')) return 'management';
  if (url === '/v1/operator/snapshot') return 'management';
  // Garbage collection: the client's (Nomad: node:write) and the server's are management, one allocation's submit (Nomad: submit-job).
  if (url === '/v1/client/gc' || url === '/v1/system/gc') return 'management';
  // Applying dynamic node meta (Nomad: node:write, as the client's gc).
  if (url === '/v1/client/metadata' && !read) return 'management';
  // Writing node pools (Nomad: node_pool write, in no client policy here; the agent refuses them anyway).
  if ((url === '/v1/node/pools' || url === '/v1/node/pool/:name') && !read) return 'management';
  if (url === '/v1/client/allocation/:id/gc') return 'submit';
  // Running a command in a task (Nomad: alloc-node-exec for raw_exec, in no built-in policy).
  if (url === '/v1/client/allocation/:id/exec') return 'management';
  if (read) return 'read';
  // Searching reads (Nomad: read-job, node:read, variables' list), though sent as a POST or PUT.
  if (url === '/v1/search' || url === '/v1/search/fuzzy') return 'read';
  if (/^\/v1\/(jobs|jobs\/parse|job\/:id|validate\/job|job\/:id\/(plan|evaluate|periodic\/force|dispatch|revert|scale)|deployment\/(fail|promote)\/:id|service\/:name\/:id)$/.test(url)) return 'submit';
  if (/^\/v1\/(allocation\/:id\/stop|client\/allocation\/:id\/(restart|signal))$/.test(url)) return 'lifecycle';
  // Writing and deleting variables goes with submitting jobs (reading them is read, above).
  if (url === '/v1/var/*') return 'submit';
  throw new Error(`${method} ${url}: no rule says who may call it; add it to ROUTE_CLASSES in src/api/acl.ts and to this table`);
}

/** The routes buildApi registers, walked through the onRoute record acl.ts keeps. */
function builtRoutes(store: AgentStore) {
  const ctx = { store, index: new StateIndex(1), registry: {}, events: {}, agent: {}, dataDir: '/nonexistent', address: 'x', version: 'test', heartbeatMs: 1000 } as unknown as ApiContext;
  return registeredRoutes(buildApi(ctx, { token: TOKEN }));
}

/** The status of one request, without waiting for a streamed body to end; a 403's body too. */
function statusOf(to: { host: string; port: number }, method: string, path: string, token: string | undefined): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const body = method === 'GET' || method === 'HEAD' || method === 'DELETE' ? undefined : '{}';
    const headers: Record<string, string> = { ...(token !== undefined && { 'x-nomad-token': token }), ...(body !== undefined && { 'content-type': 'application/json', 'content-length': '2' }) };
    const req = request({ host: to.host, port: to.port, method, path, headers }, (res) => {
      const status = res.statusCode ?? 0;
      if (status !== 403) {
        // An allowed stream (events, logs, a snapshot) goes on: the status is the answer.
        res.destroy();
        return resolve({ status, text: '' });
      }
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('route classes', () => {
  it('gives every route the API registers a class, and the class the rules give it', async () => {
    const dir = freshDir();
    const store = AgentStore.open(dir);
    cleanups.push(() => store.close());
    const routes = builtRoutes(store);
    // The walk sees the HEAD twin of every GET, and at least the routes the README lists.
    expect(routes.length).toBeGreaterThan(40);
    expect(routes).toContainEqual({ method: 'HEAD', url: '/v1/jobs' });
    const unclassified = routes.filter((r) => routeClass(r.method, r.url) === undefined).map((r) => `${r.method} ${r.url}`);
    expect(unclassified, 'routes with no ACL class: add each to ROUTE_CLASSES in src/api/acl.ts').toEqual([]);
    const wrong = routes.filter((r) => routeClass(r.method, r.url) !== expectedClass(r.method, r.url)).map((r) => `${r.method} ${r.url}: ${routeClass(r.method, r.url)}, want ${expectedClass(r.method, r.url)}`);
    expect(wrong).toEqual([]);
  });

  it('has no class for a route the API does not register (a stale entry would hide a renamed route)', async () => {
    const dir = freshDir();
    const store = AgentStore.open(dir);
    cleanups.push(() => store.close());
    const registered = new Set(builtRoutes(store).map((r) => `${r.method} ${r.url}`));
    expect(Object.keys(ROUTE_CLASSES).filter((k) => !registered.has(k))).toEqual([]);
  });

  it('finds a route added without a class, and refuses it to every client token while management gets in', async () => {
    const dir = freshDir();
    const store = AgentStore.open(dir);
    cleanups.push(() => store.close());
    const secret = 'r'.repeat(40);
    await store.commit((tx) => tx.put('acl', 'a1', { AccessorID: 'a1', Name: '', Type: 'client', Policies: ['read', 'submit', 'lifecycle'], Global: false, CreateTime: new Date().toISOString(), CreateIndex: 2, ModifyIndex: 2, SecretHash: createHash('sha256').update(secret).digest('hex') }));
    const app = Fastify();
    installAcl(app, store, TOKEN);
    app.get('/v1/jobs', async () => 'listed');
    app.post('/v1/brand-new', async () => 'done');
    cleanups.push(() => app.close());
    const unclassified = registeredRoutes(app).filter((r) => routeClass(r.method, r.url) === undefined);
    expect(unclassified).toEqual([{ method: 'POST', url: '/v1/brand-new' }]);
    expect((await app.inject({ method: 'GET', url: '/v1/jobs', headers: { 'x-nomad-token': secret } })).statusCode).toBe(200);
    const refused = await app.inject({ method: 'POST', url: '/v1/brand-new', headers: { 'x-nomad-token': secret } });
    expect([refused.statusCode, refused.body]).toEqual([403, 'Permission denied']);
    expect((await app.inject({ method: 'POST', url: '/v1/brand-new', headers: { 'x-nomad-token': TOKEN } })).statusCode).toBe(200);
  });
});

describe('client tokens over TCP', { timeout: 60_000 }, () => {
  it('lets each kind of token call exactly the routes its class allows, on every registered route', async () => {
    const s = await serve();
    const tokens = {
      read: (await createToken(s, ['read'])).secret,
      submit: (await createToken(s, ['submit'])).secret,
      lifecycle: (await createToken(s, ['lifecycle'])).secret,
      'submit+lifecycle': (await createToken(s, ['submit', 'lifecycle'])).secret,
    };
    const may: Record<keyof typeof tokens, RouteClass[]> = { read: ['read'], submit: ['read', 'submit'], lifecycle: ['read', 'lifecycle'], 'submit+lifecycle': ['read', 'submit', 'lifecycle'] };
    const to = { host: '127.0.0.1', port: Number(new URL(s.api.url!).port) };
    const failures: string[] = [];
    for (const r of builtRoutes(s.store)) {
      const path = r.url.replace(/:\w+/g, 'nope');
      const cls = expectedClass(r.method, r.url);
      const cases: [string, string | undefined, boolean][] = [
        ['management', TOKEN, true],
        ['no token', undefined, false],
        ['an unknown token', 'f'.repeat(64), false],
        ...Object.entries(tokens).map(([kind, secret]) => [kind, secret, may[kind as keyof typeof tokens].includes(cls)] as [string, string, boolean]),
      ];
      for (const [who, token, allowed] of cases) {
        const res = await statusOf(to, r.method, path, token);
        // A HEAD answer has no body: its 403 is the refusal.
        const refused = res.status === 403 && (r.method === 'HEAD' || res.text === 'Permission denied');
        if (refused === allowed) failures.push(`${r.method} ${path} (${cls}) with ${who}: ${res.status} ${res.text}, want ${allowed ? 'not refused' : '403 Permission denied'}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('lets a submit token register and stop a job, a lifecycle token restart its allocation, and a read token only read', async () => {
    const s = await serve();
    const read = (await createToken(s, ['read'])).secret;
    const submit = (await createToken(s, ['submit'])).secret;
    const lifecycle = (await createToken(s, ['lifecycle'])).secret;
    const job = { Job: { ID: 'web', Type: 'service', TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: 'mock', Config: { run_for: '1h' } }] }] } };

    expect((await call(s.tcp(read), 'PUT', '/v1/jobs', job)).status).toBe(403);
    expect((await call(s.tcp(lifecycle), 'PUT', '/v1/jobs', job)).status).toBe(403);
    expect((await call(s.tcp(submit), 'PUT', '/v1/jobs', job)).status).toBe(200);
    const [alloc] = await waitForAllocs(s.tcp(read), '/v1/job/web/allocations', (l) => l.some((a) => a.ClientStatus === 'running'));
    expect((await call(s.tcp(read), 'GET', `/v1/allocation/${alloc!.ID}`)).status).toBe(200);

    expect((await call(s.tcp(read), 'POST', `/v1/client/allocation/${alloc!.ID}/restart`, {})).status).toBe(403);
    expect((await call(s.tcp(submit), 'POST', `/v1/client/allocation/${alloc!.ID}/restart`, {})).status).toBe(403);
    const restarted = await call(s.tcp(lifecycle), 'POST', `/v1/client/allocation/${alloc!.ID}/restart`, {});
    expect(restarted.status, restarted.text).toBe(200);
    await waitForAllocs(s.tcp(read), '/v1/job/web/allocations', (l) => l.some((a) => a.TaskStates['t']?.Restarts === 1));

    expect((await call(s.tcp(lifecycle), 'DELETE', '/v1/job/web?purge=true')).status).toBe(403);
    expect((await call(s.tcp(submit), 'DELETE', '/v1/job/web?purge=true')).status).toBe(200);
  });

  it('keeps a client token from creating, listing, reading or deleting tokens, its own included', async () => {
    const s = await serve();
    for (const policy of ['read', 'submit', 'lifecycle']) {
      const { accessor, secret } = await createToken(s, [policy]);
      const c = s.tcp(secret);
      expect((await call(c, 'POST', '/v1/acl/token', { Type: 'client', Policies: ['submit', 'lifecycle'] })).status).toBe(403);
      expect((await call(c, 'GET', '/v1/acl/tokens')).status).toBe(403);
      expect((await call(c, 'GET', `/v1/acl/token/${accessor}`)).status).toBe(403);
      expect((await call(c, 'DELETE', `/v1/acl/token/${accessor}`)).status).toBe(403);
      expect((await call(c, 'GET', '/v1/operator/snapshot')).status).toBe(403);
    }
    expect((await call(s.tcp(TOKEN), 'GET', '/v1/acl/tokens')).json()).toHaveLength(3);
  });

  it('refuses a near miss of a client secret: a prefix, one more character, upper case, the last character changed', async () => {
    const s = await serve();
    const { secret } = await createToken(s, ['read']);
    expect((await call(s.tcp(secret), 'GET', '/v1/jobs')).status).toBe(200);
    for (const near of [secret.slice(0, -1), `${secret}0`, secret.toUpperCase(), secret.slice(0, 16), `${secret.slice(0, -1)}${secret.endsWith('0') ? '1' : '0'}`]) {
      const res = await call(s.tcp(near), 'GET', '/v1/jobs');
      expect([near, res.status, res.text]).toEqual([near, 403, 'Permission denied']);
    }
  });

  it('answers an unknown path 404 to a valid client token and 403 to anyone else', async () => {
    const s = await serve();
    const { secret } = await createToken(s, ['read']);
    expect((await call(s.tcp(secret), 'GET', '/v1/nothing-here')).status).toBe(404);
    expect((await call(s.tcp('x'.repeat(32)), 'GET', '/v1/nothing-here')).status).toBe(403);
  });
});

describe('token records', { timeout: 60_000 }, () => {
  it('answers the secret once and keeps only its SHA-256: not in the store, not in any answer after', async () => {
    const s = await serve();
    const res = await call(s.socket, 'POST', '/v1/acl/token', { Name: 'ci', Type: 'client', Policies: ['submit'] });
    expect(res.status).toBe(200);
    const made = res.json<Record<string, unknown>>();
    expect(made).toMatchObject({ Name: 'ci', Type: 'client', Policies: ['submit'], Global: false });
    expect(made['AccessorID']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const secret = made['SecretID'] as string;
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    expect(Number.isNaN(Date.parse(made['CreateTime'] as string))).toBe(false);
    expect(made['CreateIndex']).toBe(Number(res.headers['x-nomad-index']));

    const stored = s.store.get('acl', made['AccessorID'] as string) as Record<string, unknown>;
    expect(stored).toEqual({
      AccessorID: made['AccessorID'], Name: 'ci', Type: 'client', Policies: ['submit'], Global: false,
      CreateTime: made['CreateTime'], CreateIndex: made['CreateIndex'], ModifyIndex: made['CreateIndex'],
      SecretHash: createHash('sha256').update(secret).digest('hex'),
    });
    // Nowhere in the store's file, in any encoding a reader might look for.
    const file = readFileSync(join(s.dataDir, STORE_FILE));
    for (const needle of [secret, Buffer.from(secret, 'hex').toString('latin1')]) expect(file.includes(Buffer.from(needle, 'latin1'))).toBe(false);

    const one = await call(s.tcp(TOKEN), 'GET', `/v1/acl/token/${made['AccessorID']}`);
    const list = await call(s.tcp(TOKEN), 'GET', '/v1/acl/tokens');
    for (const text of [one.text, list.text]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain('SecretHash');
      expect(text).not.toContain(stored['SecretHash'] as string);
    }
    expect(one.json()).toMatchObject({ AccessorID: made['AccessorID'], Name: 'ci', Policies: ['submit'] });
    expect(list.json()).toEqual([expect.objectContaining({ AccessorID: made['AccessorID'], Name: 'ci', Type: 'client', Policies: ['submit'] })]);
  });

  it('refuses a token the next request after it is deleted, and a second delete is 404', async () => {
    const s = await serve();
    const { accessor, secret } = await createToken(s, ['read']);
    expect((await call(s.tcp(secret), 'GET', '/v1/jobs')).status).toBe(200);
    const del = await call(s.tcp(TOKEN), 'DELETE', `/v1/acl/token/${accessor}`);
    expect(del.status).toBe(200);
    expect(s.store.get('acl', accessor)).toBeUndefined();
    expect((await call(s.tcp(secret), 'GET', '/v1/jobs')).status).toBe(403);
    const again = await call(s.tcp(TOKEN), 'DELETE', `/v1/acl/token/${accessor}`);
    expect([again.status, again.text]).toEqual([404, 'ACL token not found']);
  });

  it('keeps tokens across an agent restart', async () => {
    const dir = freshDir();
    const first = await serve(dir);
    const { accessor, secret } = await createToken(first, ['lifecycle'], 'ops');
    await first.stop();
    const second = await serve(dir);
    expect((await call(second.tcp(secret), 'GET', '/v1/jobs')).status).toBe(200);
    expect((await call(second.tcp(secret), 'PUT', '/v1/jobs', {})).status).toBe(403);
    expect((await call(second.tcp(TOKEN), 'GET', '/v1/acl/tokens')).json()).toEqual([expect.objectContaining({ AccessorID: accessor, Name: 'ops' })]);
  });

  it('answers /v1/acl/token/self with the client token, the management token, or the socket', async () => {
    const s = await serve();
    const { accessor, secret } = await createToken(s, ['read', 'lifecycle'], 'me');
    const mine = await call(s.tcp(secret), 'GET', '/v1/acl/token/self');
    expect(mine.json()).toMatchObject({ AccessorID: accessor, Name: 'me', Type: 'client', Policies: ['read', 'lifecycle'] });
    expect(mine.text).not.toContain(secret);
    expect((await call(s.tcp(TOKEN), 'GET', '/v1/acl/token/self')).json()).toMatchObject({ Type: 'management', AccessorID: 'agent-token' });
    // The socket is the agent's own user: a token sent there is not looked at.
    expect((await call({ ...s.socket }, 'GET', '/v1/acl/token/self', undefined, { 'x-nomad-token': secret })).json()).toMatchObject({ Type: 'management', AccessorID: 'agent-socket' });
  });

  it.each([
    [{ Type: 'management', Policies: ['read'] }, "Type: only client tokens can be created: the agent's own token (--token-file) is the management token"],
    [{ Type: 'client', Policies: [] }, 'Policies: a client token needs at least one policy: read, submit, lifecycle'],
    [{ Type: 'client' }, 'Policies: a client token needs at least one policy'],
    [{ Type: 'client', Policies: ['write'] }, 'Policies: unknown policy "write"; the policies are read, submit, lifecycle'],
    [{ Type: 'client', Policies: ['read'], Global: true }, 'Global: global tokens need replication'],
    [{ Type: 'client', Policies: ['read'], ExpirationTTL: 3600e9 }, 'ExpirationTTL: expiring tokens are not supported'],
    [{ Type: 'client', Policies: ['read'], SecretID: 'chosen-by-the-client-000' }, 'SecretID: the agent makes the secret'],
    [{ Type: 'client', Policies: ['read'], Name: 'a\nb' }, 'Name: must not contain control characters'],
  ])('refuses the create body %j with a 400 naming the field', async (body, message) => {
    const s = await serve();
    const res = await call(s.socket, 'POST', '/v1/acl/token', body);
    expect(res.status).toBe(400);
    expect(res.text).toContain(message);
    expect(s.store.entries('acl').values).toEqual([]);
  });

  it("accepts the zero values Nomad's Go client sends for fields it leaves unset", async () => {
    const s = await serve();
    const res = await call(s.tcp(TOKEN), 'PUT', '/v1/acl/token', {
      AccessorID: '', SecretID: '', Name: 'go', Type: 'client', Policies: ['read'], Roles: null, Global: false,
      CreateTime: '0001-01-01T00:00:00Z', ExpirationTime: null, ExpirationTTL: 0, CreateIndex: 0, ModifyIndex: 0,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json()).toMatchObject({ Name: 'go', Type: 'client', Policies: ['read'] });
  });

  it('names a damaged token entry in the list, never lets it authenticate, and lets it be deleted', async () => {
    const s = await serve();
    await s.store.commit((tx) => tx.put('acl', 'broken', { AccessorID: 'broken', Policies: ['read'], SecretHash: 'zz' }));
    const list = await call(s.tcp(TOKEN), 'GET', '/v1/acl/tokens');
    expect(list.status).toBe(500);
    expect(list.text).toContain('acl/broken: not an ACL token record');
    expect((await call(s.tcp('zz'.repeat(16)), 'GET', '/v1/jobs')).status).toBe(403);
    expect((await call(s.tcp(TOKEN), 'DELETE', '/v1/acl/token/broken')).status).toBe(200);
    expect((await call(s.tcp(TOKEN), 'GET', '/v1/acl/tokens')).json()).toEqual([]);
  });
});
