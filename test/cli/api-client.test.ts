/**
 * The CLI's client of the agent API: where it sends a request (the data dir's socket, or an address with
 * the token), and that every answer of 400 or more is a failure carrying the agent's own message, which
 * the `allocrun job` commands turn into a non-zero exit. The agent here is a small real HTTP server that
 * records each request and answers what the test sets, on a unix socket and on TCP, so the client's side
 * is pinned whatever the real agent would answer.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { agentClient, ApiError, agentSocketIn } from '../../src/cli/api-client.ts';
import { CliError } from '../../src/cli/errors.ts';
import { startCli } from './spawn-cli.ts';

interface Seen {
  via: 'socket' | 'tcp';
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

const TOKEN = 'a3f1'.repeat(16);
let dataDir: string;
let servers: Server[] = [];
let port: number;
const seen: Seen[] = [];
type Answer = { status: number; body: string; headers?: Record<string, string> };
/** The answer to the next requests: status, body, headers; or one per request. */
let answer: Answer | ((method: string, url: string) => Answer) = { status: 200, body: '{}' };

function agentServer(via: Seen['via']): Server {
  return createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      seen.push({ via, method: req.method!, url: req.url!, headers: req.headers, body });
      const a = typeof answer === 'function' ? answer(req.method!, req.url!) : answer;
      res.writeHead(a.status, { 'content-type': a.status < 400 ? 'application/json' : 'text/plain; charset=utf-8', ...a.headers });
      res.end(a.body);
    });
  });
}

const ENV_NAMES = ['ALLOCRUN_ADDR', 'ALLOCRUN_TOKEN', 'ALLOCRUN_TOKEN_FILE', 'NOMAD_TOKEN', 'ALLOCRUN_DATA_DIR'] as const;
const savedEnv: Record<string, string | undefined> = {};

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'allocrun-client-'));
  const socket = agentServer('socket');
  const tcp = agentServer('tcp');
  servers = [socket, tcp];
  socket.listen(join(dataDir, 'agent.sock'));
  tcp.listen(0, '127.0.0.1');
  await Promise.all([once(socket, 'listening'), once(tcp, 'listening')]);
  port = (tcp.address() as { port: number }).port;
  for (const n of ENV_NAMES) savedEnv[n] = process.env[n];
});
afterAll(async () => {
  for (const s of servers) s.close();
  for (const n of ENV_NAMES) if (savedEnv[n] === undefined) delete process.env[n];
  else process.env[n] = savedEnv[n];
  rmSync(dataDir, { recursive: true, force: true });
});
beforeEach(() => {
  // The runner's own environment must not pick the agent or the token for these tests.
  for (const n of ENV_NAMES) delete process.env[n];
  seen.length = 0;
  answer = { status: 200, body: '{}' };
});
afterEach(() => {
  for (const n of ENV_NAMES) delete process.env[n];
});

const address = () => `http://127.0.0.1:${port}`;

describe('addressing', () => {
  it('--data-dir D reaches the agent through D/agent.sock, sending no token', async () => {
    await agentClient('job status', { 'data-dir': dataDir }).get('/v1/jobs');
    expect(seen).toMatchObject([{ via: 'socket', method: 'GET', url: '/v1/jobs' }]);
    expect(seen[0]!.headers['x-nomad-token']).toBeUndefined();
    expect(agentSocketIn(dataDir)).toBe(join(dataDir, 'agent.sock'));
  });

  it('--address reaches the agent over TCP with the token in X-Nomad-Token', async () => {
    await agentClient('job status', { address: address(), token: TOKEN }).get('/v1/jobs');
    expect(seen).toMatchObject([{ via: 'tcp', url: '/v1/jobs', headers: { 'x-nomad-token': TOKEN } }]);
  });

  it('--address wins over --data-dir, and an address without a scheme is http', async () => {
    await agentClient('job status', { address: `127.0.0.1:${port}`, 'data-dir': dataDir, token: TOKEN }).get('/v1/jobs');
    expect(seen.map((s) => s.via)).toEqual(['tcp']);
  });

  it('$ALLOCRUN_ADDR and $ALLOCRUN_TOKEN stand in for the flags, $ALLOCRUN_DATA_DIR for --data-dir', async () => {
    process.env.ALLOCRUN_ADDR = address();
    process.env.ALLOCRUN_TOKEN = TOKEN;
    await agentClient('job status', {}).get('/v1/jobs');
    delete process.env.ALLOCRUN_ADDR;
    process.env.ALLOCRUN_DATA_DIR = dataDir;
    await agentClient('job status', {}).get('/v1/jobs');
    expect(seen.map((s) => [s.via, s.headers['x-nomad-token']])).toEqual([['tcp', TOKEN], ['socket', undefined]]);
  });

  it('refuses to guess: no address and no data dir is a usage error naming both', () => {
    expect(() => agentClient('job status', {})).toThrow(expect.objectContaining({ code: 'ErrUsage', message: expect.stringMatching(/--data-dir D.*--address URL/) }));
    expect(() => agentClient('job status', { address: 'http://[bad' })).toThrow(expect.objectContaining({ code: 'ErrUsage' }));
  });

  it('writes the query string with only the values given, encoded', async () => {
    await agentClient('x', { 'data-dir': dataDir }).get('/v1/job/a%2Fb', { index: 7, wait: '30s', prefix: 'a b&c', gone: undefined });
    expect(seen[0]!.url).toBe('/v1/job/a%2Fb?index=7&wait=30s&prefix=a+b%26c');
  });

  it('sends a body as JSON with its length, and reads JSON back', async () => {
    answer = { status: 200, body: '{"EvalID":"e1","JobModifyIndex":4}' };
    const out = await agentClient('x', { 'data-dir': dataDir }).send('PUT', '/v1/jobs', { Job: { ID: 'j' } });
    expect(out).toEqual({ EvalID: 'e1', JobModifyIndex: 4 });
    expect(seen[0]).toMatchObject({ method: 'PUT', body: '{"Job":{"ID":"j"}}', headers: { 'content-type': 'application/json', 'content-length': '18' } });
  });

  it('reads X-Nomad-Index of a GET as its index, 0 when absent', async () => {
    answer = { status: 200, body: '[]', headers: { 'X-Nomad-Index': '42' } };
    expect((await agentClient('x', { 'data-dir': dataDir }).get('/v1/jobs')).index).toBe(42);
    answer = { status: 200, body: '[]' };
    expect((await agentClient('x', { 'data-dir': dataDir }).get('/v1/jobs')).index).toBe(0);
  });

  it('an empty answer to a send is an empty object', async () => {
    answer = { status: 200, body: '' };
    expect(await agentClient('x', { 'data-dir': dataDir }).send('DELETE', '/v1/job/j')).toEqual({});
  });
});

describe('failures', () => {
  const calls = {
    get: (c: ReturnType<typeof agentClient>) => c.get('/v1/job/j'),
    'send PUT': (c: ReturnType<typeof agentClient>) => c.send('PUT', '/v1/jobs', { Job: { ID: 'j' } }),
    'send DELETE': (c: ReturnType<typeof agentClient>) => c.send('DELETE', '/v1/job/j'),
    stream: (c: ReturnType<typeof agentClient>) => c.stream('/v1/event/stream'),
  };
  const rows = Object.keys(calls).flatMap((verb) =>
    [
      [400, 'tasks[0].driver: must not be empty', 'ErrApi'],
      [404, 'job not found', 'ErrNotFound'],
      [409, 'conflict', 'ErrApi'],
      [500, 'cannot commit: disk full', 'ErrApi'],
    ].map(([status, text, code]) => [verb, status, text, code] as [keyof typeof calls, number, string, string]),
  );

  it.each(rows)('%s answered %i is an ApiError with that status and the agent\'s message', async (verb, status, text, code) => {
    answer = { status, body: `${text}\n` };
    const err = await calls[verb](agentClient('x', { 'data-dir': dataDir })).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status, message: text, code });
    expect((err as CliError).exitCode).not.toBe(0);
  });

  it('403 says the agent wants its token, after the agent\'s own message', async () => {
    answer = { status: 403, body: 'Permission denied' };
    const err = await agentClient('x', { address: address() }).get('/v1/jobs').catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 403, code: 'ErrPermissionDenied', message: expect.stringMatching(/^Permission denied: the agent at http:\/\/127\.0\.0\.1:\d+ wants its token/) });
  });

  it('403 to a token the agent does not know says so, not that no token was sent', async () => {
    answer = { status: 403, body: 'Permission denied' };
    const err = await agentClient('x', { address: address(), token: 'wrong-token-0000' }).get('/v1/jobs').catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 403, code: 'ErrPermissionDenied', message: expect.stringMatching(/^Permission denied: the agent at http:\/\/127\.0\.0\.1:\d+ does not know the token sent \(wrong, deleted/) });
    expect((err as Error).message).not.toContain('wants its token');
  });

  it('403 to a token the agent knows names its policies instead of asking for a token', async () => {
    answer = (_method, url) =>
      url === '/v1/acl/token/self'
        ? { status: 200, body: JSON.stringify({ AccessorID: 'a1', Name: 'ci', Type: 'client', Policies: ['read'] }) }
        : { status: 403, body: 'Permission denied' };
    const err = await agentClient('x', { address: address(), token: TOKEN }).send('DELETE', '/v1/job/j').catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 403, code: 'ErrPermissionDenied' });
    expect((err as Error).message).toMatch(/^Permission denied: the token sent to http:\/\/127\.0\.0\.1:\d+ \("ci"\) has policies read, which do not allow this \(/);
    expect((err as Error).message).not.toContain('wants its token');
  });

  it('an error without a body names the status', async () => {
    answer = { status: 502, body: '' };
    await expect(agentClient('x', { 'data-dir': dataDir }).get('/v1/jobs')).rejects.toMatchObject({ status: 502, message: 'the agent answered 502' });
  });

  it('no agent on a data dir, or at an address, is ErrNoAgent saying how to start one', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'allocrun-noagent-'));
    try {
      await expect(agentClient('x', { 'data-dir': empty }).get('/v1/jobs')).rejects.toMatchObject({ code: 'ErrNoAgent', message: expect.stringContaining(`no agent is running on data dir ${empty}`) });
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const closedPort = (closed.address() as { port: number }).port;
    closed.close();
    await once(closed, 'close');
    await expect(agentClient('x', { address: `http://127.0.0.1:${closedPort}` }).get('/v1/jobs')).rejects.toMatchObject({ code: 'ErrNoAgent', message: expect.stringContaining('no agent answers at') });
  });
});

describe('allocrun alloc commands against an agent that refuses the command itself', () => {
  it('exit non-zero with the agent\'s message when the restart, signal or stop is answered 400 or 500', { timeout: 60_000 }, async () => {
    const ID = '5b1e8c4f-7a2d-4e3b-9c1d-0123456789ab';
    const alloc = { ID, Name: 'j.g[0]', JobID: 'j', TaskGroup: 'g', DesiredStatus: 'run', ClientStatus: 'running', TaskStates: { t: { State: 'running', Failed: false, Restarts: 0, Events: [] } } };
    const runs: [number, string, string[], string][] = [
      [400, 'task "t" is not running: the allocation has finished', ['alloc', 'restart', '5b1e', 't'], '/restart'],
      [400, 'signal name: must be a signal name', ['alloc', 'signal', '-s', 'USR1', '5b1e', 't'], '/signal'],
      [500, 'cannot commit: disk full', ['alloc', 'stop', '5b1e', '--detach'], '/stop'],
    ];
    for (const [status, text, args, refused] of runs) {
      // The allocation is found; only the command is refused.
      answer = (method, url) =>
        method === 'GET' && url.startsWith('/v1/allocations') ? { status: 200, body: JSON.stringify([alloc]) }
        : method === 'GET' ? { status: 200, body: JSON.stringify(alloc) }
        : url.endsWith(refused) ? { status, body: text }
        : { status: 200, body: '{}' };
      const result = await startCli([...args, '--address', address()], { env: { ALLOCRUN_TOKEN: TOKEN } }).exited;
      expect(result.code, `${args.join(' ')} → ${status}\n${result.stderr}`).toBe(1);
      expect(result.stderr).toContain(`allocrun: ${text}`);
      expect(result.stdout).not.toMatch(/sent|registered|stopped/);
    }
  });
});

describe('allocrun job commands against an agent that refuses', () => {
  it('exit non-zero with the agent\'s message for 400, 403, 404 and 500, and print no success', { timeout: 60_000 }, async () => {
    const job = join(dataDir, 'job.json');
    writeFileSync(job, JSON.stringify({ Job: { ID: 'j', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'mock' }] }] } }));
    // One agent answers every command the same: the commands run one after another, each with its answer.
    const runs: [number, string, string[]][] = [
      [400, 'the agent refused the job', ['job', 'run', job, '--detach']],
      [403, 'Permission denied', ['job', 'status']],
      [404, 'job not found', ['job', 'stop', 'j', '--detach']],
      [500, 'cannot commit: disk full', ['job', 'run', job]],
    ];
    for (const [status, text, args] of runs) {
      answer = { status, body: text };
      const cli = startCli([...args, '--address', address()], { env: { ALLOCRUN_TOKEN: TOKEN } });
      const result = await cli.exited;
      expect(result.code, `${args.join(' ')} → ${status}\n${result.stderr}`).toBe(1);
      expect(result.stderr).toContain(`allocrun: ${text}`);
      if (status === 404) expect(result.stderr).toMatch(/job not found: no job "j" on the agent at http:\/\/127\.0\.0\.1:\d+ \('allocrun job status' lists them\)/);
      expect(result.stdout).not.toMatch(/successful|registered|stopped|No running jobs/);
    }
  });
});
