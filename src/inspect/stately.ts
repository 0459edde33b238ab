/**
 * The stream in `@statelyai/inspect`'s wire format (0.7.x), written here so the package is not needed:
 * its receivers and the hosted Stately inspector read these three event types, one JSON object each.
 */
import type { AnyActorRef, InspectionEvent } from 'xstate';
import type { JsonValue } from './protocol.ts';
import { sanitize } from './sanitize.ts';

/** The `@statelyai/inspect` version whose format this mirrors. */
export const STATELY_FORMAT_VERSION = '0.7.2';

interface StatelyBase {
  rootId: string | undefined;
  sessionId: string;
  /** Milliseconds since the epoch, as a string (their format). */
  createdAt: string;
  id: string | null;
  _version: string;
}

/** `@xstate.actor`: an actor registered; `definition` is the machine config as a JSON string. */
export interface StatelyActorEvent extends StatelyBase {
  type: '@xstate.actor';
  name: string;
  parentId: string | undefined;
  definition: string | undefined;
  snapshot: JsonValue;
}

/** `@xstate.event`: an event delivered to `sessionId`, sent by `sourceId`. */
export interface StatelyEventEvent extends StatelyBase {
  type: '@xstate.event';
  sourceId: string | undefined;
  event: JsonValue;
}

/** `@xstate.snapshot`: the actor's snapshot after `event`. */
export interface StatelySnapshotEvent extends StatelyBase {
  type: '@xstate.snapshot';
  event: JsonValue;
  snapshot: JsonValue;
}

/** One event of `@statelyai/inspect`'s stream. */
export type StatelyInspectionEvent = StatelyActorEvent | StatelyEventEvent | StatelySnapshotEvent;

// Their converter turns functions in the config into `{ type: fn.name }` and tolerates cycles.
function definitionString(config: unknown): string {
  const seen = new WeakSet<object>();
  return JSON.stringify(config, (_key, value: unknown) => {
    if (typeof value === 'function') return { type: value.name };
    if (typeof value === 'object' && value !== null) {
      if (seen.has(value)) return '[Circular]';
      seen.add(value);
    }
    return value;
  });
}

// Snapshots go out as their `toJSON` (no machine, no live children), reduced to JSON.
function snapshotJson(snapshot: unknown): JsonValue {
  const s = snapshot as { toJSON?: () => unknown } | undefined;
  const plain = typeof s?.toJSON === 'function' ? s.toJSON() : snapshot;
  if (typeof plain === 'object' && plain !== null && 'children' in plain) {
    const { children, ...rest } = plain as { children: Record<string, AnyActorRef | undefined> };
    // Keep the children as `{ id }` markers, the way XState's actor toJSON serializes them.
    const marks: Record<string, JsonValue> = {};
    for (const [k, ref] of Object.entries(children ?? {})) if (ref) marks[k] = { xstate$$type: 1, id: ref.id };
    return { ...(sanitize(rest) as Record<string, JsonValue>), children: marks };
  }
  return sanitize(plain);
}

// XState registers an actor before it has a snapshot; called that early, say what their `actor()` says.
function currentSnapshot(ref: AnyActorRef): JsonValue {
  try {
    return snapshotJson(ref.getSnapshot());
  } catch {
    return { status: 'active' };
  }
}

/** Converts one XState inspection event; microsteps and actions have no Stately counterpart (undefined). */
export function toStatelyEvent(ev: InspectionEvent, at: number = Date.now()): StatelyInspectionEvent | undefined {
  const base = { rootId: ev.rootId, sessionId: ev.actorRef.sessionId, createdAt: String(at), id: null, _version: STATELY_FORMAT_VERSION };
  switch (ev.type) {
    case '@xstate.actor': {
      const ref = ev.actorRef as AnyActorRef & { logic?: { config?: unknown } };
      const config = ref.logic?.config;
      const configId = typeof config === 'object' && config !== null ? (config as { id?: unknown }).id : undefined;
      // XState names unnamed roots by sessionId; the machine id reads better (their converter does the same).
      const name = ref.id === ref.sessionId && typeof configId === 'string' ? configId : ref.id;
      return {
        ...base,
        type: '@xstate.actor',
        name,
        parentId: ref._parent?.sessionId,
        definition: typeof config === 'object' && config !== null ? definitionString(config) : JSON.stringify({ id: name }),
        snapshot: currentSnapshot(ref),
      };
    }
    case '@xstate.event':
      return { ...base, type: '@xstate.event', sourceId: ev.sourceRef?.sessionId, event: sanitize(ev.event) };
    case '@xstate.snapshot':
      return { ...base, type: '@xstate.snapshot', event: sanitize(ev.event), snapshot: snapshotJson(ev.snapshot) };
    default:
      return undefined;
  }
}
