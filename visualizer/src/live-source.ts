/**
 * The live feed: the inspector's WebSocket (hello, the late joiner's picture, then batches) and commands
 * back. When the socket drops it reconnects with backoff (0.5 s doubling to 10 s); on reconnecting the
 * model is rebuilt from the server's fresh picture, so a restarted agent shows as it is now. A server that
 * speaks another protocol version is not read (nor reconnected to): the page says to reload.
 */
import { PROTOCOL_VERSION, type ClientFrame, type CommandResultFrame, type HelloFrame, type ServerFrame } from '../../src/inspect/protocol.ts';
import type { Model } from './model.ts';

/** The connection as the page shows it. */
export type LiveStatus =
  | { state: 'connecting'; attempt: number }
  | { state: 'open' }
  | { state: 'closed'; since: number; retryAt: number; attempt: number };

/** What the page learns from the connection besides messages. */
export interface LiveHooks {
  onHello(h: HelloFrame): void;
  onStatus(s: LiveStatus): void;
  onResult(r: CommandResultFrame): void;
}

const FIRST_DELAY = 500;
const MAX_DELAY = 10_000;

/** Connects to `url` and feeds `model`, reconnecting until `close()`; returns a sender for command frames. */
export function connectLive(url: string, model: Model, hooks: LiveHooks) {
  let ws: WebSocket | undefined;
  let attempt = 0;
  let closedSince: number | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  let fresh = false;

  const open = () => {
    timer = undefined;
    attempt++;
    hooks.onStatus({ state: 'connecting', attempt });
    const sock = new WebSocket(url);
    ws = sock;
    sock.addEventListener('open', () => {
      attempt = 0;
      closedSince = undefined;
      fresh = true;
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
          sock.close();
        }
        hooks.onHello(frame);
      } else if (frame.type === 'batch') {
        // The first batch on a connection is the server's whole picture: start from it, not on top of the old one.
        if (fresh) model.reset();
        fresh = false;
        model.apply(frame.messages);
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
      if (timer) clearTimeout(timer);
      ws?.close();
    },
  };
}
