/**
 * The visualizer as the agent's UI, at /ui on the API's own addresses (the socket, and `--http` behind the
 * same tokens), as Nomad serves its UI on the agent: the page, its script, its WebSocket (/ui/ws: history,
 * then live batches; commands back) and task logs (/ui/logs). One address and one token, so a page left
 * open reconnects by itself to a restarted agent there.
 *
 * Watching is `read`. Commands (KILL, RESTART, SIGNAL) are allocation lifecycle writes: each is checked,
 * when it arrives, against the token the socket was opened with (looked up again, so a token revoked
 * meanwhile is refused), and refused with Nomad's "Permission denied" to a token whose policies do not
 * grant `lifecycle`. The socket's handshake must come from the page's own origin (as Nomad checks its
 * exec socket's), so another site cannot open it with the browser's cookie.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { WebSocketServer } from 'ws';
import type { InspectorFeed } from '../../inspect/feed.ts';
import { resumeOf } from '../../inspect/feed.ts';
import type { PageFiles } from '../../inspect/page-files.ts';
import type { InspectorCommandEvent } from '../../inspect/protocol.ts';
import { identify, policiesAllow, type Identity } from '../acl.ts';
import type { ApiContext } from '../context.ts';
import { signInCookie, uiTokenOf } from '../ui-auth.ts';

/** What the agent's UI serves: its feed, and the built page (or why there is none). */
export interface AgentUi {
  feed: InspectorFeed;
  page: PageFiles | { missing: string };
}

const PAGE_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

/** Why `identity` may not send `event`, in Nomad's words, or undefined when it may. */
export function commandRefusal(identity: Identity | undefined, event: InspectorCommandEvent): string | undefined {
  if (!identity) return 'Permission denied: the token is no longer valid on this agent; sign in again';
  if (identity.kind !== 'client' || policiesAllow(identity.token.Policies, 'lifecycle')) return undefined;
  return `Permission denied: ${event.type} is an allocation lifecycle command and this token's policies (${identity.token.Policies.join(', ')}) do not grant it; use a token with the lifecycle policy`;
}

/** Whether a handshake's Origin (when a browser sent one) is the address it was sent to. */
function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

/** Registers /ui on `app`; `token` is what guards the app (undefined on the socket). */
export function uiRoutes(app: FastifyInstance, ctx: ApiContext & { ui?: AgentUi }, token: string | undefined): void {
  const ui = ctx.ui;
  const unavailable = () =>
    ui === undefined ? 'this agent serves no UI (it was started with --no-ui)' : 'missing' in ui.page ? ui.page.missing : undefined;

  app.get('/ui', async (req, reply) => {
    const query = req.url.indexOf('?');
    return reply.redirect(`/ui/${query < 0 ? '' : req.url.slice(query)}`, 302);
  });

  app.get('/ui/', async (req, reply) => {
    const why = unavailable();
    if (why) return reply.code(503).type('text/plain; charset=utf-8').send(`${why}\n`);
    const q = new URL(req.url, 'http://x').searchParams;
    const given = q.get('token');
    if (given !== null) {
      // Signed in (the ACL hook let the token through): keep it in the cookie, and drop it from the address.
      q.delete('token');
      const rest = q.toString();
      if (token !== undefined) void reply.header('set-cookie', signInCookie(given));
      return reply.redirect(`/ui/${rest ? `?${rest}` : ''}`, 303);
    }
    const page = (ui!.page as PageFiles).html.replace('<head>', '<head>\n<meta name="allocrun-feed" content="live">');
    return reply.code(200).headers(PAGE_HEADERS).type('text/html; charset=utf-8').send(page);
  });

  app.get('/ui/app.js', async (_req, reply) => {
    const why = unavailable();
    if (why) return reply.code(503).type('text/plain; charset=utf-8').send(`${why}\n`);
    return reply.code(200).headers(PAGE_HEADERS).type('text/javascript; charset=utf-8').send((ui!.page as PageFiles).script);
  });

  app.get('/ui/logs', async (req, reply) => {
    if (!ui) return reply.code(503).type('text/plain; charset=utf-8').send(`${unavailable()}\n`);
    reply.hijack();
    ui.feed.serveLogs(req.raw, reply.raw);
  });

  // A plain GET of the socket's address: say what it is rather than 404.
  app.get('/ui/ws', async (_req, reply) => reply.code(426).header('upgrade', 'websocket').type('text/plain; charset=utf-8').send('/ui/ws is the UI\'s WebSocket: connect with Upgrade: websocket\n'));

  if (!ui) return;
  const pages = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  const refuse = (socket: Duplex, status: string) => socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 17\r\n\r\nPermission denied`);
  app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Other handshakes are routed through the API's routes (ws-upgrade.ts).
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/ui/ws') return;
    if (!sameOrigin(req)) return refuse(socket, '403 Forbidden');
    const presented = (req.headers['x-nomad-token'] as string | undefined) ?? uiTokenOf(req);
    if (!identify(ctx.store, token, presented)) return refuse(socket, '403 Forbidden');
    pages.handleUpgrade(req, socket, head, (ws) =>
      ui.feed.connect(ws, {
        resume: resumeOf(req.url),
        // Looked up again for every command: a token revoked since the page opened may no longer act.
        refuse: (event) => commandRefusal(identify(ctx.store, token, presented), event),
      }),
    );
  });
  // Before the server closes: an upgraded socket is no longer the HTTP server's, and would hold its close.
  app.addHook('preClose', async () => {
    for (const ws of pages.clients) ws.terminate();
    pages.close();
  });
}
