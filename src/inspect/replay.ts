/**
 * `serveReplay(file)`: the visualizer in replay mode over a recording made by `recordInspection`
 * (`allocrun replay <file>`). Same token rules as the live inspector; no socket, no commands.
 */
import { listen } from './listen.ts';
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { forbid, hasToken, loadPageFiles, newToken, servePage, urlHost } from './page-files.ts';
import { recordingProblem } from './protocol.ts';

/** The file's first line parsed as JSON, or undefined when it is not JSON (the page counts such lines). */
async function firstLine(file: string): Promise<unknown> {
  const f = await open(file);
  try {
    // A header is a short line: 4 KiB holds it.
    const { buffer, bytesRead } = await f.read(Buffer.alloc(4096), 0, 4096, 0);
    const text = buffer.subarray(0, bytesRead).toString('utf8');
    return JSON.parse(text.slice(0, text.indexOf('\n') < 0 ? text.length : text.indexOf('\n')));
  } catch {
    return undefined;
  } finally {
    await f.close();
  }
}

/** Options for `serveReplay`. */
export interface ReplayServerOptions {
  /** Default 0: any free port. */
  port?: number;
  host?: string;
  /** The built page; default visualizer/dist. */
  pageDir?: string;
}

/** A running replay server. */
export interface ReplayServer {
  /** The page in replay mode, token included. */
  url: string;
  close(): Promise<void>;
}

/** Serves the page and `file` (read on each request, so a recording still being written can be reloaded). */
export async function serveReplay(file: string, opts: ReplayServerOptions = {}): Promise<ReplayServer> {
  const info = await stat(file).catch((err: Error) => {
    throw new Error(`cannot replay ${file}: ${err.message}`);
  });
  if (!info.isFile()) throw new Error(`cannot replay ${file}: not a file`);
  const problem = recordingProblem(await firstLine(file));
  if (problem) throw new Error(`cannot replay ${file}: ${problem}`);
  const host = opts.host ?? '127.0.0.1';
  const files = await loadPageFiles(opts.pageDir);
  const token = newToken();

  const http = createServer((req, res) => {
    if (!hasToken(req, token)) return forbid(res);
    if (servePage(req, res, files, token)) return;
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/recording.jsonl') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    const body = createReadStream(file);
    body.once('error', (err) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`cannot read the recording: ${err.message}\n`);
    });
    body.once('open', () => res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' }));
    body.pipe(res);
  });
  const port = await listen(http, opts.port ?? 0, host);
  return {
    url: `http://${urlHost(host, port)}/?token=${encodeURIComponent(token)}&mode=replay`,
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
