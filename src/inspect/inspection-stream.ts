/**
 * Maps XState's inspection events into the protocol (protocol.ts), in batches. XState calls `inspect`
 * synchronously inside every send, so the callback only queues the event; the mapping (definitions,
 * active state nodes, sanitized context) runs once per batch, off the send path.
 */
import { getStateNodes, type AnyStateMachine, type InspectionEvent } from 'xstate';
import { machineDefinitionOf } from './definition.ts';
import { createPicture, type PictureLimits } from './picture.ts';
import type { ActorStatus, EdgeRef, InspectMessage, JsonValue, StateValue, TransitionMessage } from './protocol.ts';
import { DEFAULT_LIMITS, sanitize, type SanitizeCache, type SanitizeLimits } from './sanitize.ts';
import { toStatelyEvent, type StatelyInspectionEvent } from './stately.ts';

/** Tuning for a stream; every field has a default. */
export interface InspectionStreamOptions {
  /** The time stamped on messages; pass the runtime's clock (`() => clock.now()`) to stamp simulated time. */
  now?: () => number;
  /** Schedules a flush of the queued events; default `setImmediate`, so one batch spans a burst of sends. */
  schedule?: (flush: () => void) => void;
  /** Limits for sanitized context and event payloads. */
  limits?: SanitizeLimits;
  /** How much history a late joiner gets. */
  picture?: Partial<PictureLimits>;
  /** Called when a subscriber throws; default `console.error`. */
  onError?: (err: unknown) => void;
}

/** A live stream of protocol batches built from a root actor's `inspect` option. */
export interface InspectionStream {
  /** Pass as `inspect` to `createAllocRunner`, `createAgent` or `createActor`. */
  inspect: (ev: InspectionEvent) => void;
  /** Receives every batch, in order; returns the unsubscribe function. */
  subscribe(fn: (batch: InspectMessage[]) => void): () => void;
  /** Receives the same stream as `@statelyai/inspect` events; conversion only runs while someone listens. */
  subscribeStately(fn: (ev: StatelyInspectionEvent) => void): () => void;
  /** The messages that rebuild the current picture (definitions, actors, recent events, latest transitions). */
  snapshotForLateJoiner(): InspectMessage[];
  /** Maps and delivers the queued events now (before closing a recorder, in tests). */
  flush(): void;
  /** The id path from the root actor (`['a1', 'web']`) of a known actor, for routing commands. */
  pathOf(sessionId: string): string[] | undefined;
}

/** The parts of an actor ref the mapping reads (XState types inspection refs as the narrower ActorRefLike). */
interface InspectedRef {
  sessionId: string;
  id?: string;
  _parent?: { sessionId: string };
  src?: unknown;
  logic?: unknown;
}

function machineOf(ref: InspectedRef): AnyStateMachine | undefined {
  const logic = ref.logic;
  return typeof logic === 'object' && logic !== null && 'root' in logic ? (logic as AnyStateMachine) : undefined;
}

// Payload limits are tighter than context's: the timeline shows them one line at a time.
const PAYLOAD_LIMITS: SanitizeLimits = { depth: 6, items: 50, chars: 1_000 };

function payloadOf(event: { type: string }): JsonValue | undefined {
  const t = event.type;
  // No payload where it would repeat what a transition already carries: a child's snapshot relayed to its
  // parent (the child's context), `xstate.init` (the input, visible in context) and a promise's own
  // resolve/reject (the done/error event to its parent carries the same value).
  if (t === 'xstate.init' || t.startsWith('xstate.snapshot.') || t.startsWith('xstate.promise.')) return undefined;
  const { type: _type, ...rest } = event as Record<string, unknown>;
  for (const _k in rest) return sanitize(rest, PAYLOAD_LIMITS);
  return undefined;
}

function edgesOf(transitions: readonly { source: { id: string }; target?: readonly { id: string }[]; eventType: string }[]): EdgeRef[] {
  const out: EdgeRef[] = [];
  for (const t of transitions) {
    // Initial transitions (eventType null) are not drawn as edges.
    if (typeof t.eventType !== 'string' || !t.target || t.target.length === 0) continue;
    out.push({ source: t.source.id, event: t.eventType, targets: t.target.map((n) => n.id) });
  }
  return out;
}

/** Creates a stream; subscribe before passing `inspect` to a runner, or ask late for the picture. */
export function createInspectionStream(opts: InspectionStreamOptions = {}): InspectionStream {
  const now = opts.now ?? Date.now;
  const schedule = opts.schedule ?? ((fn: () => void) => void setImmediate(fn));
  const limits = opts.limits ?? DEFAULT_LIMITS;
  const onError = opts.onError ?? ((err: unknown) => console.error('allocrun inspect: a subscriber threw', err));
  const picture = createPicture({ maxFinishedActors: 1_000, recentEvents: 300, ...opts.picture });
  const subscribers = new Set<(batch: InspectMessage[]) => void>();
  const statelySubscribers = new Set<(ev: StatelyInspectionEvent) => void>();
  const definitions = new Set<string>();
  /** The context object last sent per actor: context is replaced, never mutated, so identity means unchanged. */
  const sentContext = new Map<string, unknown>();
  /** Edges taken since the actor's last snapshot. */
  const takenEdges = new Map<string, EdgeRef[]>();
  /** Sanitized subtrees by identity: a new context mostly shares its parts with the previous one. */
  const contextCache: SanitizeCache = new WeakMap();

  let queue: InspectionEvent[] = [];
  let times: number[] = [];
  let scheduled = false;

  const deliver = <T>(fns: Set<(x: T) => void>, x: T) => {
    for (const fn of fns) {
      try {
        fn(x);
      } catch (err) {
        onError(err);
      }
    }
  };

  const transitionOf = (ev: InspectionEvent & { type: '@xstate.snapshot' }, at: number, lastInBatch: boolean): TransitionMessage => {
    const ref = ev.actorRef as InspectedRef;
    const snap = ev.snapshot as { status: ActorStatus; value?: StateValue; context?: unknown; output?: unknown; error?: unknown };
    const msg: TransitionMessage = { kind: 'transition', at, sessionId: ref.sessionId, event: ev.event.type, status: snap.status };
    const machine = machineOf(ref);
    if (machine && snap.value !== undefined) {
      msg.value = snap.value;
      // getStateNodes repeats the ancestors of parallel regions; the page wants each id once.
      msg.activeNodeIds = [...new Set(getStateNodes(machine.root, snap.value).map((n) => n.id))];
    }
    const edges = takenEdges.get(ref.sessionId);
    if (edges) {
      msg.edges = edges;
      takenEdges.delete(ref.sessionId);
    }
    // Only the actor's last snapshot in a batch carries context: the page shows the newest anyway.
    if (lastInBatch && snap.context !== undefined && sentContext.get(ref.sessionId) !== snap.context) {
      msg.context = sanitize(snap.context, limits, contextCache);
      sentContext.set(ref.sessionId, snap.context);
    }
    if (snap.status === 'done' && snap.output !== undefined) msg.output = sanitize(snap.output, PAYLOAD_LIMITS);
    if (snap.status === 'error') msg.error = sanitize(snap.error, PAYLOAD_LIMITS);
    if (snap.status !== 'active') sentContext.delete(ref.sessionId);
    return msg;
  };

  const flush = () => {
    scheduled = false;
    if (queue.length === 0) return;
    const events = queue;
    const at = times;
    queue = [];
    times = [];
    const lastSnapshot = new Map<string, number>();
    events.forEach((ev, i) => ev.type === '@xstate.snapshot' && lastSnapshot.set(ev.actorRef.sessionId, i));

    const batch: InspectMessage[] = [];
    events.forEach((ev, i) => {
      const ref = ev.actorRef as InspectedRef;
      switch (ev.type) {
        case '@xstate.actor': {
          const machine = machineOf(ref);
          const machineId = machine?.id;
          if (machine && machineId !== undefined && !definitions.has(machineId)) {
            definitions.add(machineId);
            batch.push({ kind: 'definition', machineId, definition: machineDefinitionOf(machine) });
          }
          batch.push({
            kind: 'actor', at: at[i]!, sessionId: ref.sessionId, id: ref.id ?? ref.sessionId, parentSessionId: ref._parent?.sessionId,
            rootSessionId: ev.rootId, machineId, src: typeof ref.src === 'string' ? ref.src : undefined,
          });
          return;
        }
        case '@xstate.event': {
          const payload = payloadOf(ev.event);
          batch.push({
            kind: 'event', at: at[i]!, target: ref.sessionId, source: ev.sourceRef?.sessionId, type: ev.event.type,
            ...(payload === undefined ? {} : { payload }),
          });
          return;
        }
        case '@xstate.microstep': {
          const taken = edgesOf(ev._transitions);
          if (taken.length === 0) return;
          const list = takenEdges.get(ref.sessionId);
          if (list) list.push(...taken);
          else takenEdges.set(ref.sessionId, taken);
          return;
        }
        case '@xstate.snapshot':
          batch.push(transitionOf(ev, at[i]!, lastSnapshot.get(ref.sessionId) === i));
          return;
      }
    });
    for (const msg of batch) picture.apply(msg);
    if (statelySubscribers.size > 0) {
      events.forEach((ev, i) => {
        const converted = toStatelyEvent(ev, at[i]);
        if (converted) deliver(statelySubscribers, converted);
      });
    }
    if (batch.length > 0) deliver(subscribers, batch);
  };

  return {
    inspect(ev) {
      // Actions are already visible as transitions; dropping them here keeps the send path short.
      if (ev.type === '@xstate.action') return;
      queue.push(ev);
      times.push(now());
      if (!scheduled) {
        scheduled = true;
        schedule(flush);
      }
    },
    subscribe(fn) {
      subscribers.add(fn);
      return () => void subscribers.delete(fn);
    },
    subscribeStately(fn) {
      statelySubscribers.add(fn);
      return () => void statelySubscribers.delete(fn);
    },
    snapshotForLateJoiner: () => picture.messages(),
    flush,
    pathOf: (sessionId) => picture.pathOf(sessionId),
  };
}
