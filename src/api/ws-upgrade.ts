/**
 * WebSocket handshakes routed through Fastify like any request (as @fastify/websocket does), so a socket
 * route gets the same ACL check, params and query validation, and error answers as the rest of the API.
 * The route finds the held connection with `upgradeOf(req.raw)` and takes it; a handshake no route takes
 * gets the route's HTTP answer, then its connection is closed.
 */
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';

/** A handshake's connection, held for the route that will upgrade it. */
export interface PendingUpgrade {
  socket: Duplex;
  head: Buffer;
}

const pending = new WeakMap<IncomingMessage, PendingUpgrade>();

/** The connection a handshake request arrived on, or undefined for a plain HTTP request. */
export function upgradeOf(req: IncomingMessage): PendingUpgrade | undefined {
  return pending.get(req);
}

/** Routes every handshake on `app`'s server whose path `owned` does not claim for another listener. */
export function routeUpgrades(app: FastifyInstance, owned: (path: string) => boolean): void {
  app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (owned(new URL(req.url ?? '/', 'http://x').pathname)) return;
    pending.set(req, { socket, head });
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as never);
    // Answered over HTTP (refused, not found, bad query): the connection is not the server's to keep.
    res.once('finish', () => socket.end());
    app.routing(req, res);
  });
}
