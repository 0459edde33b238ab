/** The live feed: the inspector's WebSocket (hello, the late joiner's picture, then batches) and commands back. */
import type { ClientFrame, CommandResultFrame, HelloFrame, ServerFrame } from '../../src/inspect/protocol.ts';
import type { Model } from './model.ts';

/** What the page learns from the connection besides messages. */
export interface LiveHooks {
  onHello(h: HelloFrame): void;
  onStatus(s: 'connecting' | 'open' | 'closed'): void;
  onResult(r: CommandResultFrame): void;
}

/** Connects to `url` and feeds `model`; returns a sender for command frames. */
export function connectLive(url: string, model: Model, hooks: LiveHooks) {
  const ws = new WebSocket(url);
  hooks.onStatus('connecting');
  ws.addEventListener('open', () => hooks.onStatus('open'));
  ws.addEventListener('close', () => hooks.onStatus('closed'));
  ws.addEventListener('message', (ev) => {
    const frame = JSON.parse(String(ev.data)) as ServerFrame;
    if (frame.type === 'hello') hooks.onHello(frame);
    else if (frame.type === 'batch') model.apply(frame.messages);
    else if (frame.type === 'command-result') hooks.onResult(frame);
  });
  return {
    send(frame: ClientFrame): boolean {
      if (ws.readyState !== WebSocket.OPEN) return false;
      ws.send(JSON.stringify(frame));
      return true;
    },
    close(): void {
      ws.close();
    },
  };
}
