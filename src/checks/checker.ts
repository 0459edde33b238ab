/**
 * Runs one check once (Nomad's checks.checker): an HTTP request or a TCP connect to the check's address,
 * bounded by its timeout and by the caller's signal (a stopped check abandons what is under way).
 *
 * HTTP: 200 is "nomad: http ok"; any other status below 400 passes too, 400 and up fail, with up to 3 KiB
 * of the response body as the output, as Nomad judges. 429 Too Many Requests is a warning, Consul's rule:
 * the one way a running check says "warning", which check_restart's ignore_warnings and on_update
 * "ignore_warnings" let through. Redirects are not followed (a 3xx already passes).
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import type { CheckOutcome } from './check-status.ts';

/** Where a check connects, or why no address could be found (the check then fails with that output). */
export type CheckAddress = { host: string; port: number } | { error: string };

/** Everything one run needs, interpolated and resolved. Durations in ms. */
export interface CheckQuery {
  type: 'http' | 'tcp';
  address: CheckAddress;
  timeout: number;
  protocol?: 'http' | 'https';
  path?: string;
  method?: string;
  header?: Record<string, string[]>;
  body?: string;
  tlsSkipVerify?: boolean;
}

/** What one run found. */
export interface RawResult {
  outcome: CheckOutcome;
  output: string;
  statusCode?: number;
}

/** Nomad's limit on the response body kept as an HTTP check's output. */
export const OUTPUT_LIMIT = 3 * 1024;

const USER_AGENT = 'allocrun (Nomad service check)';

/** `host:port`, with IPv6 hosts in brackets (Go's net.JoinHostPort). */
export const joinHostPort = (host: string, port: number): string => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);

/** Runs the check once; never rejects (a failure is a result). */
export function runCheck(q: CheckQuery, signal: AbortSignal): Promise<RawResult> {
  if ('error' in q.address) return Promise.resolve({ outcome: 'failure', output: q.address.error });
  return q.type === 'http' ? checkHttp(q, q.address, signal) : checkTcp(q.address, q.timeout, signal);
}

function checkTcp(addr: { host: string; port: number }, timeout: number, signal: AbortSignal): Promise<RawResult> {
  const where = joinHostPort(addr.host, addr.port);
  return new Promise((resolve) => {
    const socket = connect({ host: addr.host, port: addr.port });
    const finish = (r: RawResult) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => finish({ outcome: 'failure', output: `dial tcp ${where}: i/o timeout` }), timeout);
    const onAbort = () => finish({ outcome: 'failure', output: `dial tcp ${where}: operation was canceled` });
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => finish({ outcome: 'success', output: 'nomad: tcp ok' }));
    socket.once('error', (err) => finish({ outcome: 'failure', output: `dial tcp ${where}: ${err.message}` }));
  });
}

function checkHttp(q: CheckQuery, addr: { host: string; port: number }, signal: AbortSignal): Promise<RawResult> {
  const protocol = q.protocol ?? 'http';
  const method = (q.method || 'GET').toUpperCase();
  let url: URL;
  try {
    url = new URL(q.path ?? '', `${protocol}://${joinHostPort(addr.host, addr.port)}`);
  } catch (err) {
    return Promise.resolve({ outcome: 'failure', output: `nomad: ${(err as Error).message}` });
  }
  const shown = `${method[0]}${method.slice(1).toLowerCase()} ${JSON.stringify(url.href)}`;
  const headers: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(q.header ?? {})) headers[k] = [...v];
  if (!Object.keys(headers).some((k) => k.toLowerCase() === 'user-agent')) headers['User-Agent'] = [USER_AGENT];
  const body = q.body ?? '';
  return new Promise((resolve) => {
    let settled = false;
    const finish = (r: RawResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      req.destroy();
      resolve(r);
    };
    const send = protocol === 'https' ? httpsRequest : httpRequest;
    const req = send(url, { method, headers, agent: false, ...(protocol === 'https' && q.tlsSkipVerify && { rejectUnauthorized: false }) }, (res) => {
      void readLimited(res).then((text) => finish(judge(res.statusCode ?? 0, text)), (err: Error) => finish({ ...judge(res.statusCode ?? 0, ''), output: `nomad: ${err.message}` }));
    });
    const timer = setTimeout(() => finish({ outcome: 'failure', output: `nomad: ${shown}: context deadline exceeded` }), q.timeout);
    const onAbort = () => finish({ outcome: 'failure', output: `nomad: ${shown}: context canceled` });
    signal.addEventListener('abort', onAbort, { once: true });
    req.once('error', (err) => finish({ outcome: 'failure', output: `nomad: ${shown}: ${err.message}` }));
    req.end(body.length > 0 ? body : undefined);
  });
}

/** Nomad's verdict on an HTTP status, with 429 as Consul's warning. */
function judge(status: number, body: string): RawResult {
  if (status === 200) return { outcome: 'success', output: 'nomad: http ok', statusCode: status };
  const outcome: CheckOutcome = status === 429 ? 'warning' : status < 400 ? 'success' : 'failure';
  return { outcome, output: body, statusCode: status };
}

/** The body's first OUTPUT_LIMIT bytes; the rest is not read. */
function readLimited(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      if (size >= OUTPUT_LIMIT) return;
      chunks.push(chunk);
      size += chunk.length;
      if (size >= OUTPUT_LIMIT) resolve(Buffer.concat(chunks).subarray(0, OUTPUT_LIMIT).toString('utf8'));
    });
    res.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.once('error', reject);
  });
}
