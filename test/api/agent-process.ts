/**
 * A real `allocrun agent` process for the API tests, and small HTTP clients for its unix socket and TCP
 * address: requests with a JSON body, and streams read line by line until a wanted line arrives.
 */
import { readFileSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { createServer } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCli, type CliProcess } from '../cli/spawn-cli.ts';

/** An HTTP answer. */
export interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  text: string;
  json<T = any>(): T; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** Where requests go: the agent's socket, or its TCP address with an optional token. */
export type Endpoint = { socketPath: string } | { host: string; port: number; token?: string };

function open(to: Endpoint, method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const h: Record<string, string> = { ...headers };
    if (body !== undefined) h['content-length'] = String(Buffer.byteLength(body));
    if ('token' in to && to.token !== undefined) h['x-nomad-token'] = to.token;
    const target = 'socketPath' in to ? { socketPath: to.socketPath } : { host: to.host, port: to.port };
    const req = request({ ...target, method, path, headers: h }, resolve);
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * A request that announces a `contentLength`-byte body but sends only `start` of it, then waits for the
 * answer: a server that refuses by the announced length answers at once. (Writing a whole oversize body
 * races the server's close: the client may see EPIPE before it reads the answer.)
 */
export function callAnnounced(to: Endpoint, method: string, path: string, contentLength: number, start: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const target = 'socketPath' in to ? { socketPath: to.socketPath } : { host: to.host, port: to.port };
    const req = request({ ...target, method, path, headers: { 'content-type': 'application/json', 'content-length': String(contentLength) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
      });
    });
    req.on('error', reject);
    req.write(start);
  });
}

/** One request, read to the end. */
export async function call(to: Endpoint, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer> {
  const raw = body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const res = await open(to, method, path, raw, headers);
  let text = '';
  res.setEncoding('utf8');
  for await (const chunk of res) text += chunk;
  return { status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) };
}

/** A streamed answer read as it arrives. */
export interface Stream {
  status: number;
  /** Everything received so far. */
  text(): string;
  /** Resolves with the text once `test(text)` holds; rejects if the stream ends first. */
  until(test: (text: string) => boolean): Promise<string>;
  ended: Promise<string>;
  close(): void;
}

/** Opens a streamed GET (logs, events). */
export async function stream(to: Endpoint, path: string): Promise<Stream> {
  const res = await open(to, 'GET', path);
  let text = '';
  let done = false;
  const waiters: { test: (t: string) => boolean; resolve: (t: string) => void; reject: (e: Error) => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) if (w.test(text)) (waiters.splice(waiters.indexOf(w), 1), w.resolve(text));
  };
  res.setEncoding('utf8');
  res.on('data', (d: string) => ((text += d), check()));
  const ended = new Promise<string>((resolve) =>
    res.on('close', () => {
      done = true;
      for (const w of waiters.splice(0)) w.reject(new Error(`the stream ended before the wanted text:\n${text}`));
      resolve(text);
    }),
  );
  return {
    status: res.statusCode ?? 0,
    text: () => text,
    until: (test) =>
      new Promise((resolve, reject) => {
        if (test(text)) return resolve(text);
        if (done) return reject(new Error(`the stream ended before the wanted text:\n${text}`));
        waiters.push({ test, resolve, reject });
      }),
    ended,
    close: () => res.destroy(),
  };
}

/** A running agent and how to reach it. */
export interface AgentProcess {
  cli: CliProcess;
  dataDir: string;
  socket: Endpoint;
  /** Set when started with `http`. */
  tcp?: { host: string; port: number; token: string };
  /**
   * Purges every job (stopping their tasks), waits for the allocations to end, then stops the agent: the one
   * in `cli` when stop is called, so a test that replaced it (`{ ...agent, cli: next }`) stops its new agent.
   */
  stop(): Promise<void>;
}

/** Starts `allocrun agent` on a fresh data dir; with `http`, also on TCP (the token is read from its file). */
export async function startAgent(opts: { http?: boolean; args?: string[] } = {}): Promise<AgentProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), 'allocrun-api-'));
  const cli = startCli(['agent', '--data-dir', dataDir, '--json', ...(opts.http ? ['--http', '127.0.0.1:0'] : []), ...(opts.args ?? [])], { timeoutMs: 20 * 60_000 }); // stopped by stop(); the limit only ends a hung agent
  await cli.waitFor(opts.http ? /API listening on http:\/\/127\.0\.0\.1:\d+/ : /API listening on \//);
  const socket = { socketPath: join(dataDir, 'agent.sock') };
  let tcp: AgentProcess['tcp'];
  if (opts.http) {
    const port = Number(/API listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(cli.stdout())![1]);
    const { readFile } = await import('node:fs/promises');
    tcp = { host: '127.0.0.1', port, token: (await readFile(join(dataDir, 'agent-token'), 'utf8')).trim() };
  }
  return {
    cli,
    dataDir,
    socket,
    tcp,
    async stop(this: AgentProcess) {
      const jobs = (await call(socket, 'GET', '/v1/jobs')).json<{ ID: string }[]>();
      for (const j of jobs) await call(socket, 'DELETE', `/v1/job/${j.ID}?purge=true`);
      await waitForAllocs(socket, '/v1/allocations', (list) => list.every((a) => a.ClientStatus !== 'running' && a.ClientStatus !== 'pending'));
      this.cli.child.kill('SIGTERM');
      await this.cli.exited;
      await rm(dataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    },
  };
}

/** An allocation as the API lists it (the fields the tests read). */
export interface Alloc {
  ID: string;
  JobID: string;
  JobVersion: number;
  DesiredStatus: string;
  ClientStatus: string;
  PreviousAllocation: string;
  ModifyIndex: number;
  TaskStates: Record<string, { State: string; Restarts: number; Events: { Type: string; DisplayMessage: string }[] }>;
}

/**
 * Reads `path` with blocking queries until `done(list)` holds: no polling, each read waits for a change. After
 * `timeoutMs` it fails with what it saw last (each allocation's status, its tasks' states, restarts and events),
 * so a run that never gets there says where it stopped instead of only timing out.
 */
export async function waitForAllocs(to: Endpoint, path: string, done: (allocs: Alloc[]) => boolean, timeoutMs = 110_000): Promise<Alloc[]> {
  const end = Date.now() + timeoutMs;
  let index = 0;
  for (;;) {
    const waitS = Math.max(1, Math.min(30, Math.ceil((end - Date.now()) / 1000)));
    const res = await call(to, 'GET', `${path}${path.includes('?') ? '&' : '?'}index=${index}&wait=${waitS}s`);
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text}`);
    const list = res.json<Alloc[]>();
    if (done(list)) return list;
    if (Date.now() >= end) throw new Error(`GET ${path}: not there after ${timeoutMs / 1000} s (index ${res.headers['x-nomad-index']}); last seen: ${describeAllocs(list)}`);
    index = Number(res.headers['x-nomad-index']);
  }
}

/** Allocations as a failure message shows them: status, and each task's state, restarts and event types. */
function describeAllocs(list: Alloc[]): string {
  return JSON.stringify(list.map((a) => ({
    ID: a.ID, DesiredStatus: a.DesiredStatus, ClientStatus: a.ClientStatus, ModifyIndex: a.ModifyIndex,
    Tasks: Object.fromEntries(Object.entries(a.TaskStates ?? {}).map(([name, t]) => [name, `${t.State} restarts=${t.Restarts} ${(t.Events ?? []).map((e) => e.Type).join(',')}`])),
  })));
}

/** Alive and not a zombie (PID 1 here may not reap orphans: a zombie keeps its pid but runs nothing). */
export function processRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** A port nothing listens on right now (the kernel's pick, released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
