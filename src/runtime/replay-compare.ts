/**
 * How the replay says what it compares (replay-driver.ts): steps as `event → state`, the transitions a
 * step took, and where two TaskStates differ, each one line a person can read in `replay --check`'s report.
 */
import { encodeReplayValue, formatStateValue, type ReplayStepLine } from '../inspect/replay-format.ts';

/** A transition a replayed step took: its source state node, event, targets, guard and actions. */
export interface TakenTransition {
  source: string;
  event: string;
  targets: string[];
  guard?: string;
  actions: string[];
}

/** JSON for comparing values (errors as `{ $error }`). */
export const json = (v: unknown): string => JSON.stringify(v, encodeReplayValue) ?? 'undefined';

/** One of XState's transition definitions (a microstep's `_transitions`) as plain data. */
export function describeTransition(t: { source: { id: string }; eventType: string; target?: readonly { id: string }[]; guard?: unknown; actions?: readonly unknown[] }): TakenTransition {
  const guard = t.guard as { type?: string } | string | undefined;
  const out: TakenTransition = {
    source: t.source.id,
    event: t.eventType,
    targets: (t.target ?? []).map((n) => n.id),
    actions: (t.actions ?? []).map((a) => (typeof a === 'string' ? a : ((a as { type?: string }).type ?? '(inline)'))),
  };
  const g = typeof guard === 'string' ? guard : guard?.type;
  if (g) out.guard = g;
  return out;
}

type TaskStateLike = { state?: string; failed?: boolean; restarts?: number; events?: Record<string, unknown>[] } & Record<string, unknown>;

/** The fields of `a` and `b` that differ, as `key: value` of each side. */
function fieldDifference(a: Record<string, unknown>, b: Record<string, unknown>, skip: string[] = []): [string, string] | undefined {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => !skip.includes(k) && json(a[k]) !== json(b[k]));
  if (keys.length === 0) return undefined;
  const side = (o: Record<string, unknown>) => keys.map((k) => `${k} ${json(o[k])}`).join(', ');
  return [side(a), side(b)];
}

/** Where two TaskStates differ, one line for each side: the first differing field, else the first differing event. */
export function taskStateDifference(recorded: unknown, now: unknown): [string, string] {
  const r = (recorded ?? {}) as TaskStateLike;
  const n = (now ?? {}) as TaskStateLike;
  const top = fieldDifference(r, n, ['events']);
  if (top) return top;
  const re = r.events ?? [];
  const ne = n.events ?? [];
  for (let i = 0; i < Math.max(re.length, ne.length); i++) {
    const a = re[i];
    const b = ne[i];
    if (json(a) === json(b)) continue;
    const label = (e: Record<string, unknown> | undefined) => (e ? `event #${i} ${String(e.type)}` : `no event #${i}`);
    const diff = a && b && a.type === b.type ? fieldDifference(a, b) : undefined;
    return diff ? [`${label(a)}: ${diff[0]}`, `${label(b)}: ${diff[1]}`] : [label(a) + (a ? ` ${json(a)}` : ''), label(b) + (b ? ` ${json(b)}` : '')];
  }
  return [json(recorded), json(now)];
}

/** A step as `event → state` (with its status when not active). */
export function describeStep(s: ReplayStepLine): string {
  return `${s.event} → ${formatStateValue(s.value)}${s.status === 'active' ? '' : ` (${s.status})`}`;
}
