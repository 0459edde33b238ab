/**
 * The built visualizer (visualizer/dist: index.html + app.js) and the token check every request passes:
 * the page, its script, the recording and the sockets all need the per-run token from the URL.
 */
import { timingSafeEqual, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The package root: the nearest folder above this module whose package.json is allocrun's. This module
 * runs from src/inspect/ (tsx, the CLI) and from dist/src/inspect/ (the compiled library), so a fixed
 * relative path would be right in only one of them.
 */
export function packageRoot(from: string = fileURLToPath(import.meta.url)): string {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'allocrun') return dir;
      } catch {
        // Not a readable manifest: keep looking further up.
      }
    }
    if (dirname(dir) === dir) throw new Error(`cannot find allocrun's package.json above ${from}`);
  }
}

/** Where `npm run build:visualizer` writes the page: visualizer/dist under the package root. */
export const DEFAULT_PAGE_DIR = join(packageRoot(), 'visualizer', 'dist');

/** The page's two files, loaded once per server. */
export interface PageFiles {
  html: string;
  script: Buffer;
}

/** The built page under `dir`; fails with the command that builds it when it is missing. */
export async function loadPageFiles(dir: string = DEFAULT_PAGE_DIR): Promise<PageFiles> {
  try {
    const [html, script] = await Promise.all([readFile(join(dir, 'index.html'), 'utf8'), readFile(join(dir, 'app.js'))]);
    return { html, script };
  } catch (err) {
    throw new Error(`the visualizer page is not built (${(err as Error).message}); run \`npm run build:visualizer\``);
  }
}

/** A fresh random token for one server run. */
export function newToken(): string {
  return randomBytes(18).toString('base64url');
}

/** Whether the request's `?token=` matches, compared in constant time. */
export function hasToken(req: IncomingMessage, token: string): boolean {
  const given = new URL(req.url ?? '/', 'http://x').searchParams.get('token') ?? '';
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Answers a request without a valid token. */
export function forbid(res: ServerResponse): void {
  res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' }).end('403: this inspector needs the token from its URL\n');
}

const SECURITY_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** Serves `/` (the page, its script URL carrying the token) and `/app.js`; returns false for other paths. */
export function servePage(req: IncomingMessage, res: ServerResponse, files: PageFiles, token: string): boolean {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (path === '/' || path === '/index.html') {
    const html = files.html.replace('src="app.js"', `src="app.js?token=${encodeURIComponent(token)}"`);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...SECURITY_HEADERS }).end(html);
    return true;
  }
  if (path === '/app.js') {
    res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', ...SECURITY_HEADERS }).end(files.script);
    return true;
  }
  return false;
}

/** The URL host part for `host`, bracketing IPv6 literals. */
export function urlHost(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
