/**
 * Test helpers for artifacts: a local HTTP server that serves files by path and records every request, and
 * archives built with libraries (tar, yazl) in a temp dir.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { c as tarCreate } from 'tar';
import yazl from 'yazl';

/** One request the server saw. */
export interface SeenRequest {
  path: string;
  headers: IncomingMessage['headers'];
}

/** A served route: bytes, or a handler for odd servers (slow, failing). */
export type Route = Buffer | ((req: IncomingMessage, res: ServerResponse) => void);

export interface ArtifactServer {
  url(path: string): string;
  readonly requests: SeenRequest[];
  /** Requests for one path. */
  count(path: string): number;
  route(path: string, body: Route): void;
  close(): Promise<void>;
}

/** Starts a server on 127.0.0.1 serving `routes` (404 for anything else). */
export async function startArtifactServer(routes: Record<string, Route> = {}): Promise<ArtifactServer> {
  const table = new Map(Object.entries(routes));
  const requests: SeenRequest[] = [];
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push({ path, headers: req.headers });
    const route = table.get(path);
    if (!route) {
      res.writeHead(404).end('not found');
      return;
    }
    if (typeof route === 'function') return route(req, res);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': route.length }).end(route);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    requests,
    count: (path) => requests.filter((r) => r.path === path).length,
    route: (path, body) => void table.set(path, body),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

const dirs: string[] = [];

/** A temp dir removed by removeTempDirs. */
export function tempDir(prefix = 'allocrun-artifact-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

export async function removeTempDirs(): Promise<void> {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
}

/** Writes `files` (path → content; a `symlink:` prefix makes a link to the rest) under a new dir. */
export function tree(files: Record<string, string>): string {
  const root = tempDir('allocrun-tree-');
  for (const [path, content] of Object.entries(files)) {
    const at = join(root, path);
    mkdirSync(dirname(at), { recursive: true });
    if (content.startsWith('symlink:')) symlinkSync(content.slice('symlink:'.length), at);
    else writeFileSync(at, content);
  }
  return root;
}

/** A tar archive (gzipped unless `gzip` is false) of `files`, built with node-tar. */
export async function tarOf(files: Record<string, string>, gzip = true): Promise<Buffer> {
  const root = tree(files);
  const out = join(tempDir(), 'a.tar');
  const top = [...new Set(Object.keys(files).map((p) => p.split('/')[0]!))];
  await tarCreate({ cwd: root, file: out, gzip, portable: true }, top);
  return readFileSync(out);
}

/** A zip archive of `files`, built with yazl; `rename` swaps entry names byte for byte (same length) afterwards. */
export async function zipOf(files: Record<string, string>, rename: Record<string, string> = {}): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [path, content] of Object.entries(files)) zip.addBuffer(Buffer.from(content), path, { mode: 0o100644 });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const c of zip.outputStream) chunks.push(c as Buffer);
  let bytes = Buffer.concat(chunks);
  // yazl refuses to write a zip-slip name, so the name is written harmless and patched in place: local
  // header and central directory hold it the same way, and the CRC covers only the data.
  for (const [from, to] of Object.entries(rename)) {
    if (from.length !== to.length) throw new Error('renames must keep the length');
    bytes = Buffer.from(bytes.toString('latin1').split(from).join(to), 'latin1');
  }
  return bytes;
}

export const gz = (s: string) => gzipSync(Buffer.from(s));

/** Whether a command-line tool is on this machine (for the bzip2/xz archives only their tools make). */
export function hasTool(name: string, args = ['--version']): boolean {
  try {
    execFileSync(name, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** `data` compressed by the command-line tool `name` (`bzip2`, `xz`). */
export function compressWith(name: string, data: Buffer): Buffer {
  return execFileSync(name, ['-c'], { input: data });
}
