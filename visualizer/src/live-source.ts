/**
 * The live feed: the inspector's WebSocket (hello, the history from a checkpoint, then batches) and
 * commands back. Frames are applied to the model in time slices (feed-queue.ts), not in the socket's handler. When the socket drops it reconnects with backoff (0.5 s doubling to 5 s). A reconnect
 * to the same server's stream asks for the batches after the last one the page has (`?stream=ID&after=N`)
 * and keeps its model; a restarted server has a new stream, so the page starts over from its checkpoint
 * and history. A server that speaks another protocol version is not read (nor reconnected to): the page
 * says to reload.
 */
import { PROTOCOL_VERSION, type ClientFrame, type CommandResultFrame, type HelloFrame, type ServerFrame } from '../../src/inspect/protocol.ts';
import { createFeedQueue } from './feed-queue.ts';
import type { Model } from './model.ts';

/** The connection as the page shows it. */
export type LiveStatus =
  | { state: 'connecting'; attempt: number }
  | { state: 'open' }
  | { state: 'closed'; since: number; retryAt: number; attempt: number };

/** What the page learns of the history it was given: `cut` when the server kept less than its stream said. */
export interface LiveHistory {
  cut: boolean;
  /** The batch the checkpoint stands for (-1: the stream's start). */
  from: number;
}

/** What the page learns from the connection besides messages. */
export interface LiveHooks {
  onHello(h: HelloFrame): void;
  onStatus(s: LiveStatus): void;
  onResult(r: CommandResultFrame): void;
  /** A checkpoint arrived: the model was reset to it. */
  onHistory?(h: LiveHistory): void;
}

const FIRST_DELAY = 500;
// An agent restart takes a few seconds: a page left open should be back within moments of it.
const MAX_DELAY = 5_000;

/**
 * Where the page's socket is: `ws` next to the page (`/ws` for the inspector's own server, `/ui/ws` on the
 * agent), with the inspector's `?token=` when the page has one (the agent's /ui carries its sign-in in a cookie).
 */
export function liveSocketUrl(page: { href: string }, token: string | null): string {
  const url = new URL('ws', page.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.search = token ? `?token=${encodeURIComponent(token)}` : '';
  url.hash = '';
  return url.href;
}

/** Whether the page was served live by an agent (its /ui marks the page so: no token in the URL there). */
export function servedLive(doc: { querySelector(s: string): unknown }): boolean {
  return doc.querySelector('meta[name="allocrun-feed"][content="live"]') !== null;
}

/** Connects to `url` and feeds `model`, reconnecting until `close()`; returns a sender for command frames. */
export function connectLive(url: string, model: Model, hooks: LiveHooks) {
  let ws: WebSocket | undefined;
  let attempt = 0;
  let closedSince: number | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  /**
   * The stream the model is built from and the last batch received: what a reconnect resumes after. A
   * received batch is applied even if the socket closes before its turn (the feed queue keeps it).
   */
  let stream: string | undefined;
  let lastSeq: number | undefined;
  const feed = createFeedQueue((messages) => model.apply(messages));

  const open = () => {
    timer = undefined;
    attempt++;
    hooks.onStatus({ state: 'connecting', attempt });
    const target = new URL(url);
    if (stream !== undefined && lastSeq !== undefined) {
      target.searchParams.set('stream', stream);
      target.searchParams.set('after', String(lastSeq));
    }
    const sock = new WebSocket(target.href);
    ws = sock;
    sock.addEventListener('open', () => {
      attempt = 0;
      closedSince = undefined;
      hooks.onStatus({ state: 'open' });
    });
    sock.addEventListener('close', () => {
      if (ws !== sock || stopped) return;
      closedSince ??= Date.now();
      const delay = Math.min(MAX_DELAY, FIRST_DELAY * 2 ** Math.max(0, attempt - 1));
      hooks.onStatus({ state: 'closed', since: closedSince, retryAt: Date.now() + delay, attempt });
      timer = setTimeout(open, delay);
    });
    sock.addEventListener('message', (ev) => {
      if (stopped) return;
      const frame = JSON.parse(String(ev.data)) as ServerFrame;
      if (frame.type === 'hello') {
        // A server speaking another protocol version (upgraded under an open page): stop rather than misread it.
        if (frame.version !== PROTOCOL_VERSION) {
          stopped = true;
          feed.clear();
          sock.close();
        }
        // Another stream (a restarted server): what the page has cannot be resumed; a checkpoint follows.
        if (!frame.resumed) lastSeq = undefined;
        stream = frame.stream;
        hooks.onHello(frame);
      } else if (frame.type === 'checkpoint') {
        // The server's picture at batch `seq`: start from it, not on top of the old one (nor after what was
        // still queued from the old one).
        feed.clear();
        const { seq, cut } = frame;
        feed.push({ messages: frame.messages, before: () => model.reset(), after: () => hooks.onHistory?.({ cut, from: seq }) });
        lastSeq = seq;
      } else if (frame.type === 'batch') {
        // A batch the page has already (a resume racing a batch in flight) is not applied twice.
        if (lastSeq !== undefined && frame.seq <= lastSeq) return;
        feed.push({ messages: frame.messages });
        lastSeq = frame.seq;
      } else if (frame.type === 'command-result') hooks.onResult(frame);
    });
  };
  open();

  return {
    send(frame: ClientFrame): boolean {
      if (!ws || ws.readyState !== WebSocket.OPEN) return false;
      ws.send(JSON.stringify(frame));
      return true;
    },
    isOpen(): boolean {
      return !!ws && ws.readyState === WebSocket.OPEN;
    },
    close(): void {
      stopped = true;
      feed.clear();
      if (timer) clearTimeout(timer);
      ws?.close();
    },
  };
}
