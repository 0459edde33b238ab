/**
 * How a browser signs in to the agent's UI at /ui. A page load or a WebSocket cannot carry X-Nomad-Token,
 * so the UI takes the token once in the URL (`/ui/?token=…`, or the sign-in form), answers with an
 * HttpOnly, SameSite=Strict cookie scoped to /ui and a redirect that drops the token from the address
 * bar, and from then on every /ui request (the page, its socket, its logs) carries the cookie. The cookie
 * is only ever read on /ui paths: the API proper still wants the header. A token is never logged.
 *
 * Refusals: an API client (no `Accept: text/html`) gets the API's own `403 Permission denied`; a browser
 * gets a page saying what to do (401 without a token, 403 with one that is not valid here).
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyReply } from 'fastify';

/** The sign-in cookie's name. */
export const UI_COOKIE = 'allocrun-ui-token';

/** Whether `url` (a request's, with its query) is one of the UI's. */
export function isUiPath(url: string): boolean {
  return url === '/ui' || url.startsWith('/ui/') || url.startsWith('/ui?');
}

/** The token a UI request presents: `?token=` (signing in) first, else the sign-in cookie. */
export function uiTokenOf(req: IncomingMessage): string | undefined {
  const given = new URL(req.url ?? '/', 'http://x').searchParams.get('token');
  if (given) return given;
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === UI_COOKIE) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim()) || undefined;
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** The cookie that keeps a valid token for the UI's later requests (a session cookie: gone with the browser). */
export function signInCookie(token: string): string {
  return `${UI_COOKIE}=${encodeURIComponent(token)}; Path=/ui; HttpOnly; SameSite=Strict`;
}

/** The cookie that forgets a token the agent refused. */
export const SIGN_OUT_COOKIE = `${UI_COOKIE}=; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=0`;

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The sign-in page: why the UI refused, and how to get in. */
export function signInPage(rejected: boolean): string {
  const why = rejected
    ? 'The token you gave is not valid on this agent (revoked, mistyped, or another agent’s).'
    : 'This agent requires an ACL token: the UI is served behind the same tokens as its API.';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>allocrun: sign in</title>
<style>body{font:14px system-ui,sans-serif;margin:3em auto;max-width:44em;color:#222}code{background:#f3f3f3;padding:0 .3em}input{width:28em;font:inherit;padding:.3em}</style>
</head><body>
<h1>${rejected ? '403' : '401'}: sign in to the allocrun UI</h1>
<p>${escapeHtml(why)}</p>
<form method="get" action="/ui/"><label>ACL token <input type="password" name="token" autocomplete="off" autofocus></label> <button>Sign in</button></form>
<p>Use the agent’s own token (the file <code>agent-token</code> in its data dir, or the one given with <code>--token-file</code>),
or a client token: <code>allocrun acl token create -policy read</code> to watch, <code>-policy lifecycle</code> to also KILL, RESTART and SIGNAL.
You can also open <code>/ui/?token=YOUR_TOKEN</code>: the token is then kept in a cookie for this browser session and left out of the address.</p>
</body></html>
`;
}

/** Refuses a UI request: a browser gets the sign-in page, anything else the API's answer. */
export function refuseUi(req: IncomingMessage, reply: FastifyReply, presented: boolean): FastifyReply {
  if (!(req.headers.accept ?? '').includes('text/html')) return reply.code(403).type('text/plain; charset=utf-8').send('Permission denied');
  if (presented) void reply.header('set-cookie', SIGN_OUT_COOKIE);
  return reply
    .code(presented ? 403 : 401)
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .type('text/html; charset=utf-8')
    .send(signInPage(presented));
}
