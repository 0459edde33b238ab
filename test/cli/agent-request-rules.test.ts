/**
 * What the CLI client sends and how it reads what comes back (src/cli/api-client.ts): every verb sends its
 * method to its path with its query; a failed answer is an ApiError by name; a connection that breaks
 * reads as "cannot reach the agent", with the cause, never as a missing agent or a hang; a socket file no
 * agent listens on is "no agent is running".
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, agentClient, readAll } from '../../src/cli/api-client.ts';
import { startFakeAgent, type FakeAgent } from './agent-server.ts';

let agent: FakeAgent;
beforeAll(async () => {
  agent = await startFakeAgent();
});
afterAll(async () => {
  await agent.close();
});
beforeEach(() => {
  agent.seen.length = 0;
  agent.handle = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  };
});

const client = () => agentClient('x', { 'data-dir': agent.dataDir });

describe('requests', () => {
  it.each<[string, (c: ReturnType<typeof client>) => Promise<unknown>, string, string]>([
    ['get', (c) => c.get('/v1/job/j', { index: 3 }), 'GET', '/v1/job/j?index=3'],
    ['send PUT', (c) => c.send('PUT', '/v1/jobs', { Job: {} }, { region: 'global' }), 'PUT', '/v1/jobs?region=global'],
    ['send DELETE', (c) => c.send('DELETE', '/v1/job/j', undefined, { purge: true }), 'DELETE', '/v1/job/j?purge=true'],
    ['stream', async (c) => (await c.stream('/v1/event/stream', { index: 5 })).resume(), 'GET', '/v1/event/stream?index=5'],
  ])('%s sends its method to its path with its query', async (_verb, call, method, url) => {
    await call(client());
    expect(agent.seen.map((s) => [s.method, s.url])).toEqual([[method, url]]);
  });

  it('a refused request is an ApiError by name, so a log shows what failed', async () => {
    agent.handle = (_req, res) => {
      res.writeHead(409);
      res.end('conflict');
    };
    const err = await client().get('/v1/jobs').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as Error).name).toBe('ApiError');
  });
});

describe('broken connections', () => {
  it('an agent that drops the connection is "cannot reach the agent" with the cause', async () => {
    agent.handle = (req) => req.socket.destroy();
    await expect(agentClient('x', { address: `http://127.0.0.1:${agent.port}` }).get('/v1/jobs')).rejects.toMatchObject({
      code: 'ErrNoAgent',
      message: `cannot reach the agent at http://127.0.0.1:${agent.port}: socket hang up`,
    });
  });

  it('an agent that drops the connection on its socket is "cannot reach the agent", not "no agent is running"', async () => {
    agent.handle = (req) => req.socket.destroy();
    await expect(client().get('/v1/jobs')).rejects.toMatchObject({
      code: 'ErrNoAgent',
      message: `cannot reach the agent at ${agent.dataDir}: socket hang up`,
    });
  });

  it('a body cut off half way rejects the read instead of waiting for an end that never comes', async () => {
    agent.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"partial":');
      setTimeout(() => res.socket?.destroy(), 20);
    };
    const res = await client().stream('/v1/jobs');
    await expect(readAll(res)).rejects.toThrow(/aborted/);
  });

  it('a socket file no agent listens on is "no agent is running on data dir"', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'allocrun-dead-socket-'));
    try {
      // A file where the socket should be refuses the connection (ECONNREFUSED), as a stale socket does.
      writeFileSync(join(dir, 'agent.sock'), '');
      await expect(agentClient('x', { 'data-dir': dir }).get('/v1/jobs')).rejects.toMatchObject({
        code: 'ErrNoAgent',
        message: `no agent is running on data dir ${dir} (start one with 'allocrun agent --data-dir ${dir}')`,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
