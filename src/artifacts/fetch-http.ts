/**
 * go-getter's HTTP getter as Nomad configures it: one GET (no HEAD first), redirects followed, the job's
 * headers sent, the whole download bounded by the client's read timeout and size limit, a non-2xx answer
 * an error. The body streams into a new file the caller names (in the task dir), never into the artifact's
 * place, so a broken download leaves nothing that looks like the artifact.
 */
import { createWriteStream } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { Agent, fetch } from 'undici';
import { formatDuration } from '../../machines/model.ts';
import { formatBytes } from './config.ts';
import { ArtifactError, messageOf } from './errors.ts';

/** How one download is made and bounded. */
export interface HttpDownload {
  headers?: Readonly<Record<string, string>>;
  /** The whole download must finish within this (ms). */
  timeout: number;
  /** The largest body accepted, in bytes. */
  maxBytes: number;
  /** Skip TLS certificate checks (Nomad's GetterInsecure). */
  insecure?: boolean;
  signal: AbortSignal;
}

/** The URL as shown in messages: without a password. */
export function shownUrl(url: URL): string {
  if (!url.password) return url.toString();
  const safe = new URL(url);
  safe.password = 'REDACTED';
  return safe.toString();
}

/** Downloads `url` into the new file `to` (created 0644, exclusive); resolves with the bytes written. */
export async function downloadHttp(url: URL, to: string, opts: HttpDownload): Promise<number> {
  const deadline = AbortSignal.timeout(opts.timeout);
  const signal = AbortSignal.any([opts.signal, deadline]);
  const dispatcher = new Agent({ connect: { rejectUnauthorized: !opts.insecure } });
  const fail = (err: unknown): never => {
    if (err instanceof ArtifactError) throw err;
    if (deadline.aborted) throw new ArtifactError(`download of ${shownUrl(url)} did not finish within ${formatDuration(opts.timeout)} (the client's http_read_timeout)`);
    if (opts.signal.aborted) throw new ArtifactError(`download of ${shownUrl(url)} was cancelled`);
    const cause = (err as { cause?: unknown }).cause;
    throw new ArtifactError(`GET ${shownUrl(url)}: ${messageOf(err)}${cause ? `: ${messageOf(cause)}` : ''}`);
  };
  try {
    // fetch refuses a URL with credentials: they go as basic auth, as Go's client sends a URL's userinfo.
    const target = new URL(url);
    const headers: Record<string, string> = {};
    const ownAuth = Object.keys(opts.headers ?? {}).some((k) => k.toLowerCase() === 'authorization');
    if ((target.username || target.password) && !ownAuth) {
      headers['authorization'] = `Basic ${Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString('base64')}`;
    }
    target.username = '';
    target.password = '';
    Object.assign(headers, opts.headers);
    const res = await fetch(target, { headers, redirect: 'follow', signal, dispatcher }).catch(fail);
    if (res.status < 200 || res.status > 299) {
      await res.body?.cancel().catch(() => undefined);
      throw new ArtifactError(`GET ${shownUrl(url)}: bad response code: ${res.status}`);
    }
    const declared = Number(res.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > opts.maxBytes) {
      await res.body?.cancel().catch(() => undefined);
      throw tooLarge(url, opts.maxBytes);
    }
    let written = 0;
    const limit = new Transform({
      transform(chunk: Buffer, _enc, done) {
        written += chunk.length;
        done(written > opts.maxBytes ? tooLarge(url, opts.maxBytes) : null, chunk);
      },
    });
    const body = res.body ? Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>) : Readable.from([]);
    await pipeline(body, limit, createWriteStream(to, { flags: 'wx', mode: 0o644 }), { signal }).catch(fail);
    return written;
  } finally {
    await dispatcher.destroy().catch(() => undefined);
  }
}

function tooLarge(url: URL, max: number): ArtifactError {
  return new ArtifactError(`download of ${shownUrl(url)} is larger than the client's limit of ${formatBytes(max)} (http_max_size)`);
}
