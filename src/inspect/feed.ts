/**
 * `createInspectorFeed()`: what every page connection is served, whoever serves the HTTP around it (the
 * inspector's own server, server.ts, or the agent's API at /ui): hello, the history (history.ts) or the
 * page's missing batches, then live batches; commands from the page to the `control` callback, each
 * first allowed or refused by the connection's `refuse`; and task logs for `/logs`.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { WebSocket, type RawData } from 'ws';
import type { InspectionEvent } from 'xstate';
import { parseCommandFrame } from './command.ts';
import { createHistory, DEFAULT_HISTORY_LIMITS, checkpointFrame, type History, type HistoryLimits } from './history.ts';
import { createInspectionStream, type InspectionStream } from './inspection-stream.ts';
import { PROTOCOL_VERSION, type InspectorCommandEvent, type InspectMessage, type ServerFrame } from './protocol.ts';

/**
 * Applies a command from the page. `targetPath` is the actor's id path from its root: `['a1']` for an
 * allocation, `['a1', 'web']` for its task. Throw (or reject) to refuse; the message is shown on the page.
 */
export type InspectorControl = (targetPath: string[], event: InspectorCommandEvent) => void | Promise<void>;

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

/** Options for `createInspectorFeed`. */
export interface InspectorFeedOptions {
  /** Default: a new stream. */
  stream?: InspectionStream;
  /** Without it commands are refused: the embedding app decides. */
  control?: InspectorControl;
  /** Serves task logs (`allocRunnerLogs` routes them to runners). */
  logs?: InspectorLogs;
  /**
   * How much history a page that connects gets (history.ts); `false`: none, only the current picture, and
   * the stream is read only while a page is connected (nothing is built while nobody looks).
   */
  history?: Partial<HistoryLimits> | false;
}

/** What a page connection asks and may do. */
export interface PageConnection {
  /** The stream the page last read and its last batch there (`?stream=ID&after=SEQ`). */
  resume?: { stream: string; after: number };
  /** Says why a command may not be carried out on this connection (e.g. a read-only token), or undefined. */
  refuse?(event: InspectorCommandEvent): string | undefined;
}

/** A feed serving any number of pages. */
export interface InspectorFeed {
  stream: InspectionStream;
  /** Pass as `inspect` to `createAllocRunner` / `createAgent`. */
  inspect: (ev: InspectionEvent) => void;
  /** New on every feed: a page reconnecting to another one (a restarted server) starts over. */
  readonly streamId: string;
  readonly controls: boolean;
  readonly logs: boolean;
  /** Serves a connected page socket until it closes. */
  connect(ws: WebSocket, how?: PageConnection): void;
  /** `?alloc=A&task=T[&follow=1][&tail=N]`: a task's lines as plain text. */
  serveLogs(req: IncomingMessage, res: ServerResponse): void;
  /** Pages connected now. */
  openPages(): number;
  /** Resolves once no page is connected (at once when none is). */
  whenNoPages(): Promise<void>;
  /** Kept history, when there is one (tests, bench). */
  history?: History;
  /** Ends every page connection and stops reading the stream. */
  close(): void;
}

// A page that cannot keep up is dropped rather than buffered without bound (history is sent before the check).
const MAX_BUFFERED = 32 * 1024 * 1024;

/** The page's `?stream=ID&after=SEQ`, when both are there and well-formed. */
export function resumeOf(url: string | undefined): PageConnection['resume'] {
  const q = new URL(url ?? '/', 'http://x').searchParams;
  const stream = q.get('stream');
  const after = q.get('after');
  return stream && after && /^-?\d+$/.test(after) ? { stream, after: Number(after) } : undefined;
}

/** Creates a feed; with history on it reads the stream from now on. */
export function createInspectorFeed(opts: InspectorFeedOptions = {}): InspectorFeed {
  const stream = opts.stream ?? createInspectionStream();
  const control = opts.control;
  const pages = new Set<WebSocket>();
  const streamId = randomBytes(9).toString('base64url');
  const pictureJson = () => {
    const messages = stream.snapshotForLateJoiner();
    return { json: JSON.stringify(messages), count: messages.length, messages };
  };

  const sendRaw = (ws: WebSocket, data: string) => {
    if (ws.readyState !== WebSocket.OPEN) return;
    if (ws.bufferedAmount > MAX_BUFFERED) return ws.close(1013, 'inspector page too slow');
    ws.send(data);
  };
  const send = (ws: WebSocket, frame: ServerFrame) => sendRaw(ws, JSON.stringify(frame));

  // One subscription for all pages: each batch is serialized once, whatever the number of pages.
  let seq = 0;
  let history: History | undefined;
  let unsubscribe: (() => void) | undefined;
  const read = () =>
    stream.subscribe((messages: InspectMessage[]) => {
      const n = seq++;
      const data = JSON.stringify({ type: 'batch', seq: n, messages } satisfies ServerFrame);
      history?.record(n, data, messages.length);
      for (const ws of pages) sendRaw(ws, data);
    });
  if (opts.history !== false) {
    // Subscribe before the first checkpoint: the stream's next batch says what changed since it.
    unsubscribe = read();
    let first: ReturnType<typeof pictureJson> | undefined = pictureJson();
    const startCut = first.messages.some((m) => m.kind === 'actor');
    const take = () => {
      const c = first ?? pictureJson();
      first = undefined;
      return c;
    };
    history = createHistory({ ...DEFAULT_HISTORY_LIMITS, ...opts.history }, take, -1, startCut);
  }

  const onCommand = async (ws: WebSocket, data: RawData, how: PageConnection) => {
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
    const refused = how.refuse?.(cmd.event);
    if (refused !== undefined) return reply(false, refused);
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

  const noPages: (() => void)[] = [];
  return {
    stream,
    inspect: stream.inspect,
    streamId,
    openPages: () => pages.size,
    whenNoPages: () => (pages.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => noPages.push(resolve))),
    controls: control !== undefined,
    logs: opts.logs !== undefined,
    history,
    connect(ws, how = {}) {
      const resume = how.resume?.stream === streamId ? how.resume.after : undefined;
      const mayCommand = control !== undefined && how.refuse?.({ type: 'KILL' }) === undefined;
      if (history) {
        const replay = history.replay(resume);
        send(ws, { type: 'hello', version: PROTOCOL_VERSION, mode: 'live', controls: control !== undefined, logs: opts.logs !== undefined, stream: streamId, resumed: replay.resumed, mayCommand });
        // The history goes out whole before the next batch can: this runs between two of the stream's batches.
        for (const frame of replay.frames) if (ws.readyState === WebSocket.OPEN) ws.send(frame);
      } else {
        send(ws, { type: 'hello', version: PROTOCOL_VERSION, mode: 'live', controls: control !== undefined, logs: opts.logs !== undefined, stream: streamId, resumed: false, mayCommand });
        unsubscribe ??= read();
        // The picture stands for every batch so far, so it carries the last one's number.
        const picture = pictureJson();
        sendRaw(ws, checkpointFrame(seq - 1, true, picture));
      }
      pages.add(ws);
      ws.on('message', (data: RawData) => void onCommand(ws, data, how));
      ws.on('close', () => {
        pages.delete(ws);
        if (pages.size === 0) for (const resolve of noPages.splice(0)) resolve();
        // Without history, nothing is built while no page looks.
        if (history || pages.size > 0 || !unsubscribe) return;
        unsubscribe();
        unsubscribe = undefined;
      });
    },
    serveLogs: (req, res) => serveLogs(req, res, opts.logs),
    close() {
      unsubscribe?.();
      unsubscribe = undefined;
      for (const ws of pages) ws.terminate();
      pages.clear();
      for (const resolve of noPages.splice(0)) resolve();
    },
  };
}

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
