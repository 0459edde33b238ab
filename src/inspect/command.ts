/** Commands from the page: checked here, at the trust boundary, before any reach the runtime. */
import type { CommandFrame } from './protocol.ts';

/** Parses a frame from the socket; returns the command, or why it is refused. */
export function parseCommandFrame(raw: unknown): CommandFrame | string {
  if (typeof raw !== 'object' || raw === null) return 'a frame must be a JSON object';
  const f = raw as Record<string, unknown>;
  if (f.type !== 'command') return `unknown frame type ${JSON.stringify(f.type)}`;
  const target = f.target;
  const okTarget = typeof target === 'string' || (Array.isArray(target) && target.length > 0 && target.every((s) => typeof s === 'string'));
  if (!okTarget) return 'command.target must be a sessionId or a non-empty id path';
  const base = { type: 'command' as const, id: typeof f.id === 'string' ? f.id : '', target: target as string | string[] };
  const ev = f.event;
  if (typeof ev !== 'object' || ev === null) return 'command.event must be an object';
  const e = ev as Record<string, unknown>;
  switch (e.type) {
    case 'KILL':
      return { ...base, event: { type: 'KILL' } };
    case 'RESTART':
      return { ...base, event: { type: 'RESTART', failure: e.failure === true } };
    case 'SIGNAL':
      if (typeof e.signal !== 'string' || !/^SIG[A-Z0-9]+$/.test(e.signal)) return 'SIGNAL needs a signal name like "SIGHUP"';
      return { ...base, event: { type: 'SIGNAL', signal: e.signal } };
    default:
      return `command.event.type must be KILL, RESTART or SIGNAL, got ${JSON.stringify(e.type)}`;
  }
}
