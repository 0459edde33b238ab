/**
 * The CLI's client of a running agent's HTTP API. The agent is found the way Nomad's CLI finds one, in
 * this order: `--address` (or `$ALLOCRUN_ADDR`) with its token, then the socket of `--data-dir` (or
 * `$ALLOCRUN_DATA_DIR`). The token is found as src/api/agent-token.ts's clientToken says: `--token`,
 * `--token-file`, `$ALLOCRUN_TOKEN`, `$ALLOCRUN_TOKEN_FILE`, `$NOMAD_TOKEN`, then the data dir's
 * `agent-token`. Errors are CliErrors saying what to do, never a stack trace.
 */
import { request, type IncomingMessage } from 'node:http';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { WebSocket } from 'ws';
import { clientToken } from '../api/agent-token.ts';
import { CliError, UsageError } from './errors.ts';

/** The socket an agent serves in its data dir (src/api/serve-agent-api.ts names it the same). */
const SOCKET_NAME = 'agent.sock';

/** The flags every command that talks to an agent takes. */
export const AGENT_FLAGS = {
  address: { type: 'string' },
  token: { type: 'string' },
  'token-file': { type: 'string' },
  'data-dir': { type: 'string', short: 'd' },
} as const;

/** The help lines for AGENT_FLAGS. */
export const AGENT_FLAGS_HELP = `  --address URL     the agent's HTTP address (default: $ALLOCRUN_ADDR), e.g. http://127.0.0.1:4646
  --token-file F    read the agent's token for --address from F (default: $ALLOCRUN_TOKEN_FILE)
  --token T         the agent's token for --address (default: $ALLOCRUN_TOKEN, else $NOMAD_TOKEN,
                    else D/agent-token when --data-dir D is given too); prefer --token-file: a token
                    on the command line is readable by every local user
  -d, --data-dir D  reach the agent serving D through its socket (default: $ALLOCRUN_DATA_DIR)`;

/** An API answer that is not a success: its status and the agent's message. */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message, status === 404 ? 'ErrNotFound' : status === 403 ? 'ErrPermissionDenied' : 'ErrApi');
    this.name = 'ApiError';
  }
}

/** Where the agent is. */
type Target = { socketPath: string; label: string } | { url: URL; token?: string; label: string };

/** A client of one agent. */
export interface AgentClient {
  /** `GET`s JSON; with the `X-Nomad-Index` of the answer. */
  get<T>(path: string, query?: Record<string, string | number | boolean | undefined>): Promise<{ body: T; index: number }>;
  /** Sends JSON with `method` and reads JSON back. */
  send<T>(method: 'PUT' | 'POST' | 'DELETE', path: string, body?: unknown, query?: Record<string, string | number | boolean | undefined>): Promise<T>;
  /** Opens a streamed `GET` (logs, events); the caller reads the response. */
  stream(path: string, query?: Record<string, string | number | boolean | undefined>): Promise<IncomingMessage>;
  /** Opens a WebSocket (alloc exec): resolves once open, rejects with the agent's answer when it refuses the handshake. */
  socket(path: string, query?: Record<string, string | number | boolean | undefined>): Promise<WebSocket>;
  /** Where it connects, for messages. */
  readonly label: string;
}

/** Finds the agent from the flags and environment; throws a CliError saying how to name one. */
export function agentClient(command: string, values: { address?: string; token?: string; 'token-file'?: string; 'data-dir'?: string }): AgentClient {
  const address = values.address ?? process.env.ALLOCRUN_ADDR;
  let target: Target;
  if (address) {
    let url: URL;
    try {
      url = new URL(/^[a-z]+:\/\//i.test(address) ? address : `http://${address}`);
    } catch {
      throw new UsageError(`${command}: --address ${JSON.stringify(address)} is not a URL; e.g. http://127.0.0.1:4646`, command);
    }
    const dir = values['data-dir'] || process.env.ALLOCRUN_DATA_DIR || undefined;
    target = { url, token: clientToken({ token: values.token, tokenFile: values['token-file'] }, dir === undefined ? undefined : resolve(dir)), label: url.origin };
  } else {
    const dir = values['data-dir'] ?? process.env.ALLOCRUN_DATA_DIR;
    if (!dir) throw new UsageError(`${command}: which agent? pass --data-dir D (the agent's data dir) or --address URL (or set ALLOCRUN_DATA_DIR / ALLOCRUN_ADDR)`, command);
    target = { socketPath: join(resolve(dir), SOCKET_NAME), label: resolve(dir) };
  }
  return clientFor(target);
}

/** The socket of an agent serving `dataDir`, when one appears to (the socket file exists). */
export function agentSocketIn(dataDir: string): string | undefined {
  const path = join(resolve(dataDir), SOCKET_NAME);
  return existsSync(path) ? path : undefined;
}

function queryString(query: Record<string, string | number | boolean | undefined> = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}

function clientFor(target: Target): AgentClient {
  const open = (method: string, path: string, body?: string): Promise<IncomingMessage> =>
    new Promise((resolvePromise, reject) => {
      const headers: Record<string, string> = body !== undefined ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : {};
      const options =
        'socketPath' in target
          ? { socketPath: target.socketPath, path, method, headers }
          : { host: target.url.hostname.replace(/^\[|\]$/g, ''), port: target.url.port || 80, path, method, headers: { ...headers, ...(target.token && { 'x-nomad-token': target.token }) } };
      const req = request(options, async (res) => {
        if ((res.statusCode ?? 500) < 400) return resolvePromise(res);
        const text = (await readAll(res)).trim();
        const message = text || `the agent answered ${res.statusCode}`;
        if (res.statusCode !== 403) return reject(new ApiError(res.statusCode ?? 500, message));
        reject(new ApiError(403, `${message}: ${await whyDenied(target)}`));
      });
      req.on('error', (err: NodeJS.ErrnoException) => reject(connectionError(target, err)));
      req.end(body);
    });
  return {
    label: target.label,
    async get<T>(path: string, query?: Record<string, string | number | boolean | undefined>) {
      const res = await open('GET', `${path}${queryString(query)}`);
      const body = JSON.parse(await readAll(res)) as T;
      return { body, index: Number(res.headers['x-nomad-index'] ?? 0) };
    },
    async send<T>(method: 'PUT' | 'POST' | 'DELETE', path: string, body?: unknown, query?: Record<string, string | number | boolean | undefined>) {
      const res = await open(method, `${path}${queryString(query)}`, body === undefined ? undefined : JSON.stringify(body));
      const text = await readAll(res);
      return (text ? JSON.parse(text) : {}) as T;
    },
    stream: (path, query) => open('GET', `${path}${queryString(query)}`),
    socket: (path, query) =>
      new Promise((resolvePromise, reject) => {
        const where = `${path}${queryString(query)}`;
        const ws =
          'socketPath' in target
            ? new WebSocket(`ws+unix://${target.socketPath}:${where}`)
            : new WebSocket(`ws://${target.url.host}${where}`, { headers: { ...(target.token && { 'x-nomad-token': target.token }) } });
        ws.once('open', () => resolvePromise(ws));
        // The agent refused before the handshake: its answer, as every other request's.
        ws.once('unexpected-response', async (_req, res) => {
          const text = (await readAll(res)).trim();
          const message = text || `the agent answered ${res.statusCode}`;
          reject(new ApiError(res.statusCode ?? 500, res.statusCode === 403 ? `${message}: ${await whyDenied(target)}` : message));
        });
        ws.once('error', (err: NodeJS.ErrnoException) => reject(connectionError(target, err)));
      }),
  };
}

/**
 * Why the agent said 403, in words a user can act on: no token, or one it does not know (wrong, revoked), is
 * told where tokens come from; a client token it knows lacks the policy, and is named with the ones it has.
 */
async function whyDenied(target: Target): Promise<string> {
  const wantsToken = `the agent at ${target.label} wants its token (--token-file F, $ALLOCRUN_TOKEN_FILE, $ALLOCRUN_TOKEN or $NOMAD_TOKEN; unless given one, the agent keeps it in its data dir's agent-token file)`;
  if (!('url' in target) || !target.token) return wantsToken;
  const self = await new Promise<{ Name?: string; Policies?: string[] } | undefined>((resolveSelf) => {
    const req = request(
      { host: target.url.hostname.replace(/^\[|\]$/g, ''), port: target.url.port || 80, path: '/v1/acl/token/self', method: 'GET', headers: { 'x-nomad-token': target.token! } },
      (res) => {
        if (res.statusCode !== 200) return res.resume(), resolveSelf(undefined);
        readAll(res)
          .then((text) => resolveSelf(JSON.parse(text) as { Name?: string; Policies?: string[] }))
          .catch(() => resolveSelf(undefined));
      },
    );
    req.on('error', () => resolveSelf(undefined));
    req.end();
  });
  // A token was sent and refused even its own record: the agent does not know it (mistyped, deleted, another agent's).
  if (!self) return `the agent at ${target.label} does not know the token sent (wrong, deleted, or another agent's): send the agent's token or a client token (--token, --token-file F, $ALLOCRUN_TOKEN_FILE, $ALLOCRUN_TOKEN or $NOMAD_TOKEN; the agent keeps its own in its data dir's agent-token file)`;
  const policies = self.Policies?.length ? self.Policies.join(', ') : 'none';
  return `the token sent to ${target.label}${self.Name ? ` ("${self.Name}")` : ''} has policies ${policies}, which do not allow this (read: reads; submit: register, stop and purge jobs; lifecycle: restart, signal and stop allocations)`;
}

/** A response's body as text. */
export function readAll(res: IncomingMessage): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (d: string) => (text += d));
    res.on('end', () => resolvePromise(text));
    res.on('error', reject);
  });
}

/** A failed connection in words: no agent on that data dir or address. */
function connectionError(target: Target, err: NodeJS.ErrnoException): CliError {
  if ('socketPath' in target && (err.code === 'ENOENT' || err.code === 'ECONNREFUSED')) {
    return new CliError(`no agent is running on data dir ${target.label} (start one with 'allocrun agent --data-dir ${target.label}')`, 'ErrNoAgent');
  }
  if (err.code === 'ECONNREFUSED') return new CliError(`no agent answers at ${target.label} (is 'allocrun agent --http ...' running?)`, 'ErrNoAgent');
  if (err.code === 'EACCES') return new CliError(`cannot reach the agent's socket in ${target.label}: permission denied (it is private to the agent's user)`, 'ErrNoAgent');
  return new CliError(`cannot reach the agent at ${target.label}: ${err.message}`, 'ErrNoAgent');
}
