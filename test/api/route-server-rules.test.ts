/**
 * How the API is built and served (src/api/server.ts, src/api/serve-agent-api.ts), rule by rule: the body
 * depth scan and the listen address parser as tables; then agents served in process for what every request
 * goes through (the body parser, the error handler's statuses and words, the 404 of an unknown path), and for
 * where the API listens (the socket, a stale or a live one, TCP on loopback with its token, the refusals).
 */
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { globalAgent } from 'node:http';
import { hostname } from 'node:os';
import { buildApi, excessiveJsonNesting, MAX_BODY_DEPTH } from '../../src/api/server.ts';
import { ListenError, parseListenAddress, serveAgentApi, socketPathOf, TOKEN_NAME } from '../../src/api/serve-agent-api.ts';
import { call, stream } from './agent-process.ts';
import { cleanUp, freshDir, mockJob, serve, type Served, SUITE_TIMEOUT } from './in-process-agent.ts';

type Json = Record<string, any>;

describe('the body depth scan', () => {
  it.each([
    ['{}', 1, undefined],
    ['{}', 0, 0],
    ['[[1]]', 2, undefined],
    ['[[1]]', 1, 1],
    ['{"a":{"b":[]}}', 2, 10],
    ['{"a":"{{{{"}', 1, undefined],
    ['{"a":"\\"{{"}', 1, undefined],
    ['{"a":"\\\\"}{', 1, undefined],
    ['[][][]', 1, undefined],
    [']][[[', 0, 4],
    ['"{"', 0, undefined],
  ])('%s at most %i deep: the first { or [ past it at %s', (text, max, at) => {
    expect(excessiveJsonNesting(text, max)).toBe(at);
  });
});

describe('a listen address', () => {
  it.each([
    ['127.0.0.1:4646', { host: '127.0.0.1', port: 4646 }],
    ['localhost:0', { host: 'localhost', port: 0 }],
    ['[::1]:65535', { host: '::1', port: 65535 }],
    ['example.org:80', { host: 'example.org', port: 80 }],
  ])('%s is host and port', (addr, parsed) => {
    expect(parseListenAddress(addr)).toEqual(parsed);
  });

  it('is refused with a ListenError of code ErrListen', () => {
    let caught: unknown;
    try {
      parseListenAddress('nope');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ListenError);
    expect(caught).toMatchObject({ name: 'ListenError', code: 'ErrListen' });
  });

  it.each(['127.0.0.1', ':4646', '127.0.0.1:65536', '127.0.0.1:123456', '::1:4646', 'a:b', '127.0.0.1:46 ', '[::1]4646'])('refuses %j, with an example', (addr) => {
    expect(() => parseListenAddress(addr)).toThrow(new ListenError(`--http ${JSON.stringify(addr)}: expected HOST:PORT, e.g. 127.0.0.1:4646`));
  });
});

describe('every request', { timeout: SUITE_TIMEOUT }, () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve();
  });
  afterAll(cleanUp);

  it('is read as JSON whatever its content type, and a blank body as none', async () => {
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('typed'));
    const res = await call(s.socket, 'POST', '/v1/job/typed/evaluate', '  \n ', { 'content-type': 'text/plain' });
    expect(res.status, res.text).toBe(200);
    const typed = await call(s.socket, 'POST', '/v1/job/typed/evaluate', '{"JobID":"typed"}', { 'content-type': 'application/x-whatever' });
    expect(typed.status, typed.text).toBe(200);
  });

  it('with a body nested too deep is refused with 400 saying where, before it is parsed', async () => {
    const body = `{"Job":${'['.repeat(MAX_BODY_DEPTH)}${']'.repeat(MAX_BODY_DEPTH)}}`;
    const res = await call(s.socket, 'PUT', '/v1/jobs', body);
    expect([res.status, res.text]).toEqual([400, `the request body nests objects and lists more than ${MAX_BODY_DEPTH} levels deep (at character ${7 + MAX_BODY_DEPTH - 1})`]);
  });

  it('with a body that is not JSON is refused with 400 and the parser\'s words, except on a variable', async () => {
    const res = await call(s.socket, 'PUT', '/v1/jobs', '{"Job": nope}');
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/^the request body is not valid JSON: .*(Unexpected token|not valid JSON)/);
    expect(res.text).not.toBe('the request body is not valid JSON: it does not parse');
  });

  it('to a variable with a body that is not JSON is refused without quoting the body', async () => {
    const res = await call(s.socket, 'PUT', '/v1/var/app/db', '{"Items": {"password": "hunter2"');
    expect([res.status, res.text]).toEqual([400, 'the request body is not valid JSON: it does not parse']);
  });

  it('has a heartbeat on its streams every 10 s unless the agent is told otherwise', async () => {
    // Its own agent, served inside the test: the default is taken when the API is served.
    const s = await serve();
    const st = await stream(s.socket, '/v1/event/stream?topic=Job');
    try {
      const jobs = await call(s.socket, 'PUT', '/v1/jobs', mockJob('beat'));
      expect(jobs.status).toBe(200);
      // The job's event has come through the stream: no heartbeat has come with it, well within 10 s.
      await st.until((t) => t.includes('"JobRegistered"'));
      expect(st.text().split('\n').filter((l) => l === '{}')).toEqual([]);
    } finally {
      st.close();
    }
  });

  it('with a body over the limit is refused with 413 naming the limit', async () => {
    const res = await call(s.socket, 'PUT', '/v1/jobs', `{"Job":{"ID":"${'x'.repeat(1024 * 1024)}"}}`);
    expect([res.status, res.text]).toEqual([413, 'the request body is over the limit of 1048576 bytes']);
  });

  it('that fails validation names each field, one problem a line', async () => {
    const res = await call(s.socket, 'GET', '/v1/jobs?index=x&wait=y');
    expect(res.status).toBe(400);
    expect(res.text.split('\n').map((l) => l.split(':')[0])).toEqual(['index', 'wait']);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
  });

  it('to an unknown path is 404 naming its method and path without the query', async () => {
    const res = await call(s.socket, 'DELETE', '/v1/nothing/here?secret=1');
    expect([res.status, res.text]).toEqual([404, 'Invalid URL: DELETE /v1/nothing/here']);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
  });

  it('is answered by the node of the store\'s node ID, named after the host', async () => {
    // Its own agent, served inside the test: the node is named when the API is served.
    const s = await serve();
    const nodeId = String(s.store.get('meta', 'nodeId'));
    expect((await call(s.socket, 'GET', '/v1/agent/self')).json<Json>()['stats']['client']['node_id']).toBe(nodeId);
    expect((await call(s.socket, 'GET', '/v1/nodes')).json<Json[]>().map((n) => [n['ID'], n['Name']])).toEqual([[nodeId, hostname()]]);
  });
});

describe('an agent served with a body limit', { timeout: SUITE_TIMEOUT }, () => {
  afterAll(cleanUp);

  it('refuses a body over its own limit with 413 naming it, and takes one under it', async () => {
    const s = await serve(freshDir(), undefined, { api: { bodyLimit: 400 } as never });
    const over = await call(s.socket, 'PUT', '/v1/jobs', { ...mockJob('over'), pad: 'x'.repeat(400) });
    expect([over.status, over.text]).toEqual([413, 'the request body is over the limit of 400 bytes']);
    expect((await call(s.socket, 'PUT', '/v1/jobs', mockJob('under'))).status).toBe(200);
  });
});

describe('a restarted agent', { timeout: SUITE_TIMEOUT }, () => {
  afterAll(cleanUp);

  it('goes on from the indexes the last one served, even when nothing stored carries the last one', async () => {
    const dir = freshDir();
    const first = await serve(dir);
    // A variable written and deleted: no entry left in the store holds the delete's index.
    expect((await call(first.socket, 'PUT', '/v1/var/app/x', { Items: { a: '1' } })).status).toBe(200);
    expect((await call(first.socket, 'DELETE', '/v1/var/app/x')).status).toBe(204);
    const last = Number((await call(first.socket, 'GET', '/v1/vars')).headers['x-nomad-index']);
    await first.stop();
    const again = await serve(dir);
    const variable = await call(again.socket, 'PUT', '/v1/var/app/x', { Items: { a: '2' } });
    expect(variable.status, variable.text).toBe(200);
    expect(variable.json<Json>()['ModifyIndex']).toBeGreaterThan(last);
    const job = (await call(again.socket, 'PUT', '/v1/jobs', mockJob('after'))).json<Json>();
    expect(job['Index']).toBeGreaterThan(variable.json<Json>()['ModifyIndex']);
  });

  it('goes on past an index it handed out without a commit (its node\'s registration), reserved in the store first', async () => {
    const dir = freshDir();
    const first = await serve(dir);
    const registered = Number((await call(first.socket, 'GET', '/v1/nodes')).headers['x-nomad-index']);
    await first.stop();
    const again = await serve(dir);
    expect(Number((await call(again.socket, 'GET', '/v1/nodes')).headers['x-nomad-index'])).toBeGreaterThan(registered);
  });
});

describe('a request the agent cannot answer', { timeout: SUITE_TIMEOUT }, () => {
  afterAll(cleanUp);

  it('is 500 with its cause, told to the operator too, without the query', async () => {
    const full = { on: false };
    const s = await serve(freshDir(), undefined, { faults: { beforeCommit: () => { if (full.on) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }); } } });
    const lines: string[] = [];
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (lines.push(String(chunk)), true));
    try {
      full.on = true;
      const res = await call(s.socket, 'PUT', '/v1/jobs?pretty=1', mockJob('unsaved'));
      expect(res.status).toBe(500);
      expect(res.text).toContain('ENOSPC');
      expect(lines.filter((l) => l.startsWith('allocrun agent: PUT /v1/jobs: '))).toEqual([`allocrun agent: PUT /v1/jobs: ${res.text}\n`]);
      // A refused request is the client's business: nothing on the operator's stderr.
      lines.length = 0;
      full.on = false;
      expect((await call(s.socket, 'GET', '/v1/jobs?index=x')).status).toBe(400);
      expect((await call(s.socket, 'GET', '/v1/nowhere')).status).toBe(404);
      expect(lines.filter((l) => l.startsWith('allocrun agent'))).toEqual([]);
    } finally {
      write.mockRestore();
      full.on = false;
    }
  });
});

describe('where the API listens', { timeout: SUITE_TIMEOUT }, () => {
  afterAll(cleanUp);

  it('is the data dir\'s socket, 0600; a second agent on the same dir is refused while the first answers', async () => {
    const s = await serve();
    expect(statSync(s.api.socketPath).mode & 0o777).toBe(0o600);
    expect(s.api.socketPath).toBe(socketPathOf(s.dataDir));
    await expect(serveAgentApi({ agent: s.agent, dataDir: s.dataDir, store: s.store, version: 'test' })).rejects.toThrow(
      new ListenError(`another agent is already serving ${s.dataDir} (its socket ${s.api.socketPath} answers)`),
    );
    expect((await call(s.socket, 'GET', '/v1/agent/health')).status).toBe(200);
  });

  it('takes over a socket file nobody answers on, left by an agent that did not exit cleanly', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'agent.sock'), '');
    const s = await serve(dir);
    expect((await call(s.socket, 'GET', '/v1/agent/health')).status).toBe(200);
  });

  it('refuses a data dir whose socket path a unix socket cannot hold', async () => {
    const s = await serve();
    const long = join(s.dataDir, 'x'.repeat(100));
    mkdirSync(long, { mode: 0o700 });
    await expect(serveAgentApi({ agent: s.agent, dataDir: long, store: s.store, version: 'test' })).rejects.toThrow(/^the data dir path is too long for a unix socket \(.*agent\.sock\); use a shorter --data-dir$/);
  });

  it.each(['0.0.0.0:0', '10.1.2.3:4646', 'example.org:4646', '128.0.0.1:0'])('refuses TCP on %s, not loopback, without a token given', async (http) => {
    const dir = freshDir();
    await expect(serve(dir, undefined, { api: { http } as never })).rejects.toThrow(
      new ListenError(`--http ${http} is not a loopback address: give a token (--token-file FILE or ALLOCRUN_TOKEN_FILE) so the network cannot reach the agent without it`),
    );
  });

  it('serves TCP on loopback with a generated token in a 0600 file, its member at that address and port', async () => {
    const s = await serve(freshDir(), undefined, { api: { http: '127.0.0.1:0' } as never });
    const url = new URL(s.api.url!);
    const port = Number(url.port);
    expect([url.protocol, url.hostname]).toEqual(['http:', '127.0.0.1']);
    expect(port).toBeGreaterThan(0);
    expect(statSync(s.api.tokenFile!).mode & 0o777).toBe(0o600);
    expect(s.api.tokenFrom).toContain(s.api.tokenFile!);
    const refused = await call({ host: '127.0.0.1', port }, 'GET', '/v1/agent/members');
    expect(refused.status).toBe(403);
    const members = await call({ host: '127.0.0.1', port, token: s.api.token! }, 'GET', '/v1/agent/members');
    expect(members.json<Json>()['Members'][0]).toMatchObject({ Addr: '127.0.0.1', Port: port });
    // The socket stays open to the agent's user without a token.
    expect((await call(s.socket, 'GET', '/v1/agent/members')).status).toBe(200);
  });

  it('serves TCP with a token given as a value: no token file, and its source in words', async () => {
    const token = 'a-token-given-in-code-0123456789';
    const s = await serve(freshDir(), undefined, { api: { http: '127.0.0.1:0', token } as never });
    expect([s.api.token, s.api.tokenFile, s.api.tokenFrom]).toEqual([token, undefined, 'token given by the token option']);
    expect(existsSync(join(s.dataDir, TOKEN_NAME))).toBe(false);
    const port = Number(new URL(s.api.url!).port);
    expect((await call({ host: '127.0.0.1', port, token }, 'GET', '/v1/agent/health')).status).toBe(200);
  });

  it('serves a non-loopback address when a token is given', async () => {
    const token = 'a-token-given-for-the-network-0123';
    const s = await serve(freshDir(), undefined, { api: { http: '0.0.0.0:0', token } as never });
    const port = Number(new URL(s.api.url!).port);
    expect((await call({ host: '127.0.0.1', port }, 'GET', '/v1/agent/health')).status).toBe(403);
    expect((await call({ host: '127.0.0.1', port, token }, 'GET', '/v1/agent/health')).status).toBe(200);
  });

  it('takes a token its caller resolved as it is; one from the data dir\'s own file does not open a non-loopback address', async () => {
    const token = 'a-token-resolved-before-0123456789';
    const resolved = { token, generated: false, given: true, description: 'token from the caller' };
    const s = await serve(freshDir(), undefined, { api: { http: '127.0.0.1:0', token: resolved } as never });
    expect([s.api.token, s.api.tokenFrom, existsSync(join(s.dataDir, TOKEN_NAME))]).toEqual([token, 'token from the caller', false]);
    await expect(serve(freshDir(), undefined, { api: { http: '0.0.0.0:0', token: { ...resolved, given: false } } as never })).rejects.toThrow(
      new ListenError('--http 0.0.0.0:0 is not a loopback address: give a token (--token-file FILE or ALLOCRUN_TOKEN_FILE) so the network cannot reach the agent without it'),
    );
  });

  it('closes its socket again when TCP cannot listen, so the next agent can serve the dir', async () => {
    const taken: Server = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    try {
      const port = (taken.address() as { port: number }).port;
      const dir = freshDir();
      await expect(serve(dir, undefined, { api: { http: `127.0.0.1:${port}` } as never })).rejects.toThrow(
        new ListenError(`--http 127.0.0.1:${port}: cannot listen: another program is listening there; pick another port, or stop it`),
      );
      const s = await serve(dir);
      expect((await call(s.socket, 'GET', '/v1/agent/health')).status).toBe(200);
    } finally {
      taken.close();
    }
  });

  it('closes at once with a stream still open, ending the stream', async () => {
    const s = await serve();
    const st = await stream(s.socket, '/v1/event/stream?topic=Job');
    await s.api.close();
    await st.ended;
  });

  it('serves a caller that found nothing to restore (no found list)', async () => {
    const s = await serve();
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('kept'));
    await s.api.close();
    // (Kept-alive sockets to the closed server would be reused for the same path: EPIPE.)
    globalAgent.destroy();
    const api = await serveAgentApi({ agent: s.agent, dataDir: s.dataDir, store: s.store, version: 'test' });
    try {
      expect((await call({ socketPath: api.socketPath }, 'GET', '/v1/jobs')).json<Json[]>().map((j) => j['ID'])).toEqual(['kept']);
    } finally {
      await api.close();
    }
  });

  it('refuses a data dir whose socket path is over 100 bytes, and serves one of exactly 100', async () => {
    const base = freshDir();
    const at = (length: number) => {
      const dir = join(base, 'd'.repeat(length - base.length - 1 - 'agent.sock'.length - 1));
      mkdirSync(dir, { mode: 0o700 });
      expect(Buffer.byteLength(socketPathOf(dir))).toBe(length);
      return dir;
    };
    const s = await serve(at(100));
    expect((await call(s.socket, 'GET', '/v1/agent/health')).status).toBe(200);
    await expect(serve(at(101))).rejects.toThrow(/^the data dir path is too long for a unix socket/);
  });

  it('takes ::1 as loopback without a token, and a host name that starts with 127. as not', async () => {
    const s = await serve(freshDir(), undefined, { api: { http: '[::1]:0' } as never });
    expect(s.api.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
    await expect(serve(freshDir(), undefined, { api: { http: '127.example.org:0' } as never })).rejects.toThrow(/is not a loopback address/);
  });

  it('refuses to be built with a short token, naming it the API token', () => {
    expect(() => buildApi({} as never, { token: 'short' })).toThrow(/the API token/);
  });

  it.each(['localhost:0', '127.0.0.9:0'])('takes %s as loopback', async (http) => {
    const s = await serve(freshDir(), undefined, { api: { http } as never });
    expect(s.api.url).toMatch(/^http:\/\/(localhost|127\.0\.0\.9):\d+$/);
  });

  it('serves TCP with a token given as a value, and brackets an IPv6 host in its URL', async () => {
    const token = 'a-token-given-in-code-0123456789';
    let s: Served;
    try {
      s = await serve(freshDir(), undefined, { api: { http: '[::1]:0', token } as never });
    } catch (err) {
      // A host without IPv6 loopback cannot bind ::1: nothing to check there.
      if ((err as NodeJS.ErrnoException).code === 'EADDRNOTAVAIL' || (err as NodeJS.ErrnoException).code === 'EAFNOSUPPORT') return;
      throw err;
    }
    expect(s.api.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
    expect(s.api.token).toBe(token);
    expect(s.api.tokenFile).toBeUndefined();
  });
});
