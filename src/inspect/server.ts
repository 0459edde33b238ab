/**
 * `serveInspector()`: the visualizer page over HTTP and the inspection stream over a WebSocket on the
 * same port, bound to 127.0.0.1 and guarded by a per-run token. Late joiners get the current picture,
 * then live batches. Commands from the page (KILL, RESTART, SIGNAL) go to the `control` callback.
 */
import { listen } from './listen.ts';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import type { InspectionEvent } from 'xstate';
import { parseCommandFrame } from './command.ts';
import { createStatelyFeed } from './stately.ts';
import { createInspectionStream, type InspectionStream } from './inspection-stream.ts';
import { forbid, hasToken, loadPageFiles, newToken, servePage, urlHost } from './page-files.ts';
import { PROTOCOL_VERSION, type InspectorCommandEvent, type ServerFrame } from './protocol.ts';

/**
 * Applies a command from the page. `targetPath` is the actor's id path from its root: `['a1']` for an
 * allocation, `['a1', 'web']` for its task. Throw (or reject) to refuse; the message is shown on the page.
 */
export type InspectorControl = (targetPath: string[], event: InspectorCommandEvent) => void | Promise<void>;

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
}

/** One log line, as `Controller.logs()` gives it. */
export interface InspectorLogLine {
  stream: 'stdout' | 'stderr';
  line: string;
  time: number;
}

/** Reads a task's logs: a subscribable of lines (rxjs Observables fit), completing when there is no more. */
export type InspectorLogs = (
  allocId: string,
  task: string,
  opts: { follow: boolean; tail?: number },
) => { subscribe(o: { next(l: InspectorLogLine): void; error(e: unknown): void; complete(): void }): { unsubscribe(): void } };

/** A running inspector. */
export interface InspectorServer {
  /** The page, token included: `http://127.0.0.1:PORT/?token=…`. */
  url: string;
  /** For `@statelyai/inspect` receivers, when `stately` is on. */
  statelyUrl?: string;
  /** Pass as `inspect` to `createAllocRunner` / `createAgent`. */
  inspect: (ev: InspectionEvent) => void;
  stream: InspectionStream;
  close(): Promise<void>;
}

// A page that cannot keep up is dropped rather than buffered without bound.
const MAX_BUFFERED = 16 * 1024 * 1024;
const STATELY_REPLAY = 200;

/** `/logs`: a task's lines as plain text, streamed while `follow` lasts; ends when the reader completes or the client goes. */
function serveLogs(req: IncomingMessage, res: ServerResponse, logs: InspectorLogs | undefined): void {
  const q = new URL(req.url ?? '/', 'http://x').searchParams;
  const alloc = q.get('alloc');
  const task = q.get('task');
  const text = { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };
  if (!logs) return void res.writeHead(404, text).end('this inspector serves no logs: the app did not pass `logs` to serveInspector\n');
  if (!alloc || !task) return void res.writeHead(400, text).end('/logs needs ?alloc=ALLOC&task=TASK\n');
  const tail = q.get('tail');
  let sub: { unsubscribe(): void } | undefined;
  try {
    sub = logs(alloc, task, { follow: q.get('follow') === '1', ...(tail && /^\d+$/.test(tail) ? { tail: Number(tail) } : { tail: 200 }) }).subscribe({
      next: (l) => {
        if (!res.headersSent) res.writeHead(200, text);
        res.write(`${l.stream === 'stderr' ? '[stderr] ' : ''}${l.line}\n`);
      },
      error: (e) => {
        if (!res.headersSent) res.writeHead(404, text);
        res.end(`${(e as Error)?.message ?? String(e)}\n`);
      },
      complete: () => {
        if (!res.headersSent) res.writeHead(200, text);
        res.end();
      },
    });
  } catch (e) {
    if (!res.headersSent) res.writeHead(404, text);
    res.end(`${(e as Error)?.message ?? String(e)}\n`);
    return;
  }
  // Until the first line the browser shows nothing: send the headers now so a quiet task reads as "waiting".
  if (!res.headersSent && !res.writableEnded) res.writeHead(200, text).write('');
  res.on('close', () => sub?.unsubscribe());
}

/** Starts the inspector; resolves once it listens. */
export async function serveInspector(opts: InspectorServerOptions = {}): Promise<InspectorServer> {
  const host = opts.host ?? '127.0.0.1';
  const files = await loadPageFiles(opts.pageDir);
  const token = opts.token ?? newToken();
  if (token.length < 16) throw new Error('serveInspector: a token must be at least 16 characters (it is the only thing guarding commands)');
  const stream = opts.stream ?? createInspectionStream();
  const control = opts.control;

  const http = createServer((req, res) => {
    if (!hasToken(req, token)) return forbid(res);
    if (servePage(req, res, files, token)) return;
    if (new URL(req.url ?? '/', 'http://x').pathname === '/logs') return serveLogs(req, res, opts.logs);
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

  const sendRaw = (ws: WebSocket, data: string) => {
    if (ws.readyState !== WebSocket.OPEN) return;
    if (ws.bufferedAmount > MAX_BUFFERED) return ws.close(1013, 'inspector page too slow');
    ws.send(data);
  };
  const send = (ws: WebSocket, frame: ServerFrame) => sendRaw(ws, JSON.stringify(frame));

  // One subscription for all pages, held while at least one is connected: each batch is serialized once,
  // whatever the number of pages, and with no page open the stream builds no messages at all.
  let seq = 0;
  let unsubscribePages: (() => void) | undefined;
  const readStream = () =>
    stream.subscribe((messages) => {
      const data = JSON.stringify({ type: 'batch', seq: seq++, messages } satisfies ServerFrame);
      for (const ws of pages.clients) sendRaw(ws, data);
    });

  pages.on('connection', (ws) => {
    send(ws, { type: 'hello', version: PROTOCOL_VERSION, mode: 'live', controls: control !== undefined, logs: opts.logs !== undefined });
    // Subscribe before taking the picture: the stream's next batch says what changed since this picture.
    unsubscribePages ??= readStream();
    // The picture stands for every batch so far, so it carries the last one's number.
    send(ws, { type: 'batch', seq: seq - 1, messages: stream.snapshotForLateJoiner() });
    ws.on('message', (data: RawData) => void onCommand(ws, data));
    ws.on('close', () => {
      // The server drops a closed socket from `clients` before this listener runs.
      if (pages.clients.size > 0 || !unsubscribePages) return;
      unsubscribePages();
      unsubscribePages = undefined;
    });
  });

  const onCommand = async (ws: WebSocket, data: RawData) => {
    let raw: unknown;
    try {
      raw = JSON.parse(data.toString());
    } catch {
      return send(ws, { type: 'command-result', id: '', ok: false, message: 'frames must be JSON' });
    }
    const cmd = parseCommandFrame(raw);
    if (typeof cmd === 'string') {
      const id = typeof (raw as { id?: unknown })?.id === 'string' ? (raw as { id: string }).id : '';
      return send(ws, { type: 'command-result', id, ok: false, message: cmd });
    }
    const reply = (ok: boolean, message?: string) => send(ws, { type: 'command-result', id: cmd.id, ok, ...(message ? { message } : {}) });
    if (!control) return reply(false, 'this inspector is read-only: the app did not pass `control` to serveInspector');
    const path = typeof cmd.target === 'string' ? stream.pathOf(cmd.target) : cmd.target;
    if (!path) return reply(false, `no actor ${JSON.stringify(cmd.target)} is known to this inspector`);
    try {
      await control(path, cmd.event);
      reply(true);
    } catch (err) {
      reply(false, err instanceof Error ? err.message : String(err));
    }
  };

  const statelyLog: string[] = [];
  let unsubscribeStately: (() => void) | undefined;
  if (opts.stately) {
    const feed = await createStatelyFeed((ev) => {
      const line = JSON.stringify(ev);
      statelyLog.push(line);
      if (statelyLog.length > STATELY_REPLAY) statelyLog.shift();
      for (const ws of statelyClients.clients) if (ws.readyState === WebSocket.OPEN) ws.send(line);
    });
    unsubscribeStately = stream.subscribeRaw(feed);
    statelyClients.on('connection', (ws) => statelyLog.forEach((line) => ws.send(line)));
  }

  const port = await listen(http, opts.port ?? 0, host);
  const base = urlHost(host, port);

  return {
    url: `http://${base}/?token=${encodeURIComponent(token)}`,
    ...(opts.stately ? { statelyUrl: `ws://${base}/stately?token=${encodeURIComponent(token)}` } : {}),
    inspect: stream.inspect,
    stream,
    async close() {
      unsubscribePages?.();
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
