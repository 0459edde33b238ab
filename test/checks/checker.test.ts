/**
 * One run of a check against real sockets (src/checks/checker.ts): Nomad's HTTP verdicts (200 ok, other
 * statuses below 400 pass with the body as output, 400 and up fail), 429 as a warning, the request as
 * written (method, path with query, headers, body), the timeout, and TCP connect or refuse.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runCheck, type CheckQuery } from '../../src/checks/checker.ts';
import { freePort } from '../api/agent-process.ts';

const servers: { close(cb?: () => void): unknown }[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise<void>((r) => s.close(() => r()));
});

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** An HTTP server answering every request with `status` and `body`, recording what it was sent. */
async function server(status: number, body = '', delayMs = 0): Promise<{ port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  const s: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: text });
      setTimeout(() => res.writeHead(status).end(body), delayMs);
    });
  });
  s.keepAliveTimeout = 1;
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  servers.push({ close: (cb) => (s.closeAllConnections(), s.close(cb)) });
  return { port: (s.address() as AddressInfo).port, seen };
}

const http = (port: number, extra: Partial<CheckQuery> = {}): CheckQuery => ({ type: 'http', address: { host: '127.0.0.1', port }, timeout: 2_000, path: '/', ...extra });
const never = new AbortController().signal;

describe('http checks', () => {
  it('200 passes with "nomad: http ok" and the status code', async () => {
    const { port } = await server(200, 'hello');
    expect(await runCheck(http(port), never)).toEqual({ outcome: 'success', output: 'nomad: http ok', statusCode: 200 });
  });

  it('another status below 400 passes, with the body as output', async () => {
    const { port } = await server(204, '');
    expect(await runCheck(http(port), never)).toEqual({ outcome: 'success', output: '', statusCode: 204 });
    const moved = await server(302, 'see elsewhere');
    expect(await runCheck(http(moved.port), never)).toEqual({ outcome: 'success', output: 'see elsewhere', statusCode: 302 });
  });

  it('400 and up fail, with the body (up to 3 KiB) as output', async () => {
    const { port } = await server(503, 'x'.repeat(5_000));
    const r = await runCheck(http(port), never);
    expect(r).toMatchObject({ outcome: 'failure', statusCode: 503 });
    expect(r.output).toHaveLength(3 * 1024);
  });

  it('429 Too Many Requests is a warning', async () => {
    const { port } = await server(429, 'slow down');
    expect(await runCheck(http(port), never)).toEqual({ outcome: 'warning', output: 'slow down', statusCode: 429 });
  });

  it('sends the method, the path with its query, the headers and the body as written', async () => {
    const { port, seen } = await server(200);
    await runCheck(http(port, { method: 'post', path: '/health?deep=1', header: { 'X-Probe': ['a', 'b'], Authorization: ['Bearer t'] }, body: '{"ping":1}' }), never);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/health?deep=1', body: '{"ping":1}' });
    expect(seen[0]!.headers['x-probe']).toBe('a, b');
    expect(seen[0]!.headers.authorization).toBe('Bearer t');
    expect(seen[0]!.headers['user-agent']).toBeTruthy();
  });

  it('fails when the answer takes longer than the timeout', async () => {
    const { port } = await server(200, 'late', 1_500);
    const r = await runCheck(http(port, { timeout: 200 }), never);
    expect(r.outcome).toBe('failure');
    expect(r.output).toContain('context deadline exceeded');
  });

  it('fails with the connection error when nothing listens', async () => {
    const port = await freePort();
    const r = await runCheck(http(port), never);
    expect(r.outcome).toBe('failure');
    expect(r.output).toMatch(/^nomad: Get "http:\/\/127\.0\.0\.1:\d+\/": .*ECONNREFUSED/);
  });

  it('fails with the address problem when the port could not be resolved', async () => {
    expect(await runCheck({ type: 'http', address: { error: 'invalid port "web": port label not found' }, timeout: 1_000 }, never)).toEqual({ outcome: 'failure', output: 'invalid port "web": port label not found' });
  });
});

describe('tcp checks', () => {
  it('pass when the port accepts a connection', async () => {
    const s = createTcpServer((c) => c.end());
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    servers.push(s);
    const port = (s.address() as AddressInfo).port;
    expect(await runCheck({ type: 'tcp', address: { host: '127.0.0.1', port }, timeout: 1_000 }, never)).toEqual({ outcome: 'success', output: 'nomad: tcp ok' });
  });

  it('fail when it refuses', async () => {
    const port = await freePort();
    const r = await runCheck({ type: 'tcp', address: { host: '127.0.0.1', port }, timeout: 1_000 }, never);
    expect(r.outcome).toBe('failure');
    expect(r.output).toMatch(/^dial tcp 127\.0\.0\.1:\d+: .*ECONNREFUSED/);
  });

});

describe('a stopped check', () => {
  it('abandons the request under way at once', async () => {
    const { port } = await server(200, 'late', 5_000);
    const ac = new AbortController();
    const pending = runCheck(http(port, { timeout: 10_000 }), ac.signal);
    setTimeout(() => ac.abort(), 50);
    const r = await pending;
    expect(r.outcome).toBe('failure');
    expect(r.output).toContain('context canceled');
  });
});
