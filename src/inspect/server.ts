/**
 * `serveInspector()`: the visualizer page over HTTP and the inspection stream over a WebSocket on the
 * same port, bound to 127.0.0.1 and guarded by a per-run token. Pages get the feed's history (feed.ts),
 * then live batches. Commands from the page (KILL, RESTART, SIGNAL) go to the `control` callback.
 */
import { listen } from './listen.ts';
import { createServer, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { InspectionEvent } from 'xstate';
import { createInspectorFeed, resumeOf, type InspectorControl, type InspectorFeed, type InspectorLogs } from './feed.ts';
import type { HistoryLimits } from './history.ts';
import { createStatelyFeed } from './stately.ts';
import type { InspectionStream } from './inspection-stream.ts';
import { forbid, hasToken, loadPageFiles, newToken, servePage, urlHost } from './page-files.ts';

export type { InspectorControl, InspectorLogLine, InspectorLogs } from './feed.ts';

/** Options for `serveInspector`. */
export interface InspectorServerOptions {
  /** Default 0: any free port (read it from `url`). */
  port?: number;
  host?: string;
  /** Share one stream with `recordInspection`; default: a new stream. */
  stream?: InspectionStream;
  /** Without it the page's buttons are disabled and commands are refused: the embedding app decides. */
  control?: InspectorControl;
  /** Also serve the stream in `@statelyai/inspect`'s format at `/stately` (the last 200 replayed on connect). */
  stately?: boolean;
  /** The built page; default visualizer/dist. */
  pageDir?: string;
  /**
   * The token every request must carry; default: a fresh random one. Pass a stable one (the agent keeps
   * it in its data dir) so an open page reconnects to a restarted server.
   */
  token?: string;
  /** Serves a task's log lines at `/logs?alloc=A&task=T[&follow=1][&tail=N]` (`allocRunnerLogs` routes them to runners). */
  logs?: InspectorLogs;
  /** How much history a page that connects late gets (feed.ts, history.ts); `false`: only the current picture. */
  history?: Partial<HistoryLimits> | false;
  /**
   * Serve an existing feed (the agent's, shared with its /ui) instead of making one; `stream`, `control`,
   * `logs` and `history` are then the feed's.
   */
  feed?: InspectorFeed;
}

/** A running inspector. */
export interface InspectorServer {
  /** The page, token included: `http://127.0.0.1:PORT/?token=…`. */
  url: string;
  /** For `@statelyai/inspect` receivers, when `stately` is on. */
  statelyUrl?: string;
  /** Pass as `inspect` to `createAllocRunner` / `createAgent`. */
  inspect: (ev: InspectionEvent) => void;
  stream: InspectionStream;
  /** Pages connected now (to this server's feed). */
  openPages(): number;
  /** Resolves once no page is connected (at once when none is). */
  whenNoPages(): Promise<void>;
  close(): Promise<void>;
}

const STATELY_REPLAY = 200;

/** Starts the inspector; resolves once it listens. */
export async function serveInspector(opts: InspectorServerOptions = {}): Promise<InspectorServer> {
  const host = opts.host ?? '127.0.0.1';
  const files = await loadPageFiles(opts.pageDir);
  const token = opts.token ?? newToken();
  if (token.length < 16) throw new Error('serveInspector: a token must be at least 16 characters (it is the only thing guarding commands)');
  const feed = opts.feed ?? createInspectorFeed({ stream: opts.stream, control: opts.control, logs: opts.logs, history: opts.history });
  const ownFeed = opts.feed === undefined;
  const stream = feed.stream;

  const http = createServer((req, res) => {
    if (!hasToken(req, token)) return forbid(res);
    if (servePage(req, res, files, token)) return;
    if (new URL(req.url ?? '/', 'http://x').pathname === '/logs') return feed.serveLogs(req, res);
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  });

  const pages = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  const statelyClients = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const wss = path === '/ws' ? pages : path === '/stately' && opts.stately ? statelyClients : undefined;
    if (!wss || !hasToken(req, token)) {
      socket.end(`HTTP/1.1 ${wss ? '403 Forbidden' : '404 Not Found'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
  pages.on('connection', (ws: WebSocket, req: IncomingMessage) => feed.connect(ws, { resume: resumeOf(req.url) }));

  const statelyLog: string[] = [];
  let unsubscribeStately: (() => void) | undefined;
  if (opts.stately) {
    const statelyFeed = await createStatelyFeed((ev) => {
      const line = JSON.stringify(ev);
      statelyLog.push(line);
      if (statelyLog.length > STATELY_REPLAY) statelyLog.shift();
      for (const ws of statelyClients.clients) if (ws.readyState === WebSocket.OPEN) ws.send(line);
    });
    unsubscribeStately = stream.subscribeRaw(statelyFeed);
    statelyClients.on('connection', (ws) => statelyLog.forEach((line) => ws.send(line)));
  }

  let port: number;
  try {
    port = await listen(http, opts.port ?? 0, host);
  } catch (err) {
    unsubscribeStately?.();
    if (ownFeed) feed.close();
    throw err;
  }
  const base = urlHost(host, port);

  return {
    url: `http://${base}/?token=${encodeURIComponent(token)}`,
    ...(opts.stately ? { statelyUrl: `ws://${base}/stately?token=${encodeURIComponent(token)}` } : {}),
    inspect: stream.inspect,
    stream,
    openPages: () => feed.openPages(),
    whenNoPages: () => feed.whenNoPages(),
    async close() {
      // A shared feed is its owner's to close; this server's pages go with it.
      if (ownFeed) feed.close();
      for (const ws of pages.clients) ws.terminate();
      unsubscribeStately?.();
      for (const wss of [pages, statelyClients]) {
        for (const ws of wss.clients) ws.terminate();
        wss.close();
      }
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
