/**
 * Maps XState's inspection events into the protocol (protocol.ts), in batches. XState calls `inspect`
 * synchronously inside every send, so the callback only queues the event; the mapping (definitions,
 * active state nodes, sanitized context) runs once per batch, off the send path.
 */
import type { AnyStateMachine, InspectionEvent } from 'xstate';
import { diffContext } from './context-diff.ts';
import { machineDefinitionOf } from './definition.ts';
import { createPicture, type PictureLimits } from './picture.ts';
import type { ActorStatus, InspectMessage, JsonValue, StateValue, TransitionMessage } from './protocol.ts';
import { DEFAULT_LIMITS, sanitize, type SanitizeLimits } from './sanitize.ts';

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
  /** Receives every XState inspection event as it happens (for `@statelyai/inspect`'s converter); returns the unsubscribe function. */
  subscribeRaw(fn: (ev: InspectionEvent) => void): () => void;
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

/** The machine's transitions in document order (as definition.ts lists them), by identity: edges travel as indices. */
const transitionIndexes = new WeakMap<AnyStateMachine, Map<unknown, number>>();
function transitionIndexOf(machine: AnyStateMachine): Map<unknown, number> {
  let index = transitionIndexes.get(machine);
  if (index) return index;
  index = new Map();
  let n = 0;
  const walk = (node: AnyStateMachine['root']) => {
    for (const [, list] of node.transitions) for (const t of list) index!.set(t, n++);
    for (const t of node.always ?? []) index!.set(t, n++);
    for (const child of Object.values(node.states)) walk(child);
  };
  walk(machine.root);
  transitionIndexes.set(machine, index);
  return index;
}

function edgesOf(machine: AnyStateMachine, transitions: readonly { target?: readonly unknown[]; eventType: string }[]): number[] {
  const index = transitionIndexOf(machine);
  const out: number[] = [];
  for (const t of transitions) {
    // Initial transitions (eventType null) are not drawn as edges, nor are targetless ones (actions only).
    if (typeof t.eventType !== 'string' || !t.target || t.target.length === 0) continue;
    const i = index.get(t);
    if (i !== undefined) out.push(i);
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
  const rawSubscribers = new Set<(ev: InspectionEvent) => void>();
  const definitions = new Set<string>();
  /** The context object last sent per actor: context is replaced, never mutated, so identity means unchanged. */
  const sentContext = new Map<string, unknown>();
  /** Edges taken since the actor's last snapshot. */
  const takenEdges = new Map<string, number[]>();

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
    // Active state nodes follow from the value and the definition (statechart.ts): not sent, to keep messages small.
    if (machine && snap.value !== undefined) msg.value = snap.value;
    const edges = lastInBatch ? takenEdges.get(ref.sessionId) : undefined;
    if (edges) {
      msg.edges = edges;
      takenEdges.delete(ref.sessionId);
    }
    // Only the actor's last snapshot in a batch carries context: the page shows the newest anyway.
    // After the first, only what changed: a context shares the parts an assign did not touch with the last one.
    if (lastInBatch && snap.context !== undefined && sentContext.get(ref.sessionId) !== snap.context) {
      if (sentContext.has(ref.sessionId)) {
        const patch = diffContext(sentContext.get(ref.sessionId), snap.context, limits);
        if (patch.length > 0) msg.patch = patch;
      } else msg.context = sanitize(snap.context, limits);
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
          // Not sent: `xstate.init` (the actor message says the actor started), a promise telling itself it settled (its done/error event to the parent says it), and
          // a child's snapshot relayed to its parent (the child's own transition says it; the parent's
          // transition names the event when it reacts).
          const t = ev.event.type;
          if (t === 'xstate.init' || t.startsWith('xstate.promise.') || t.startsWith('xstate.snapshot.')) return;
          const payload = payloadOf(ev.event);
          batch.push({
            kind: 'event', at: at[i]!, target: ref.sessionId, source: ev.sourceRef?.sessionId, type: ev.event.type,
            ...(payload === undefined ? {} : { payload }),
          });
          return;
        }
        case '@xstate.microstep': {
          const machine = machineOf(ref);
          if (!machine) return;
          const taken = edgesOf(machine, ev._transitions);
          if (taken.length === 0) return;
          const list = takenEdges.get(ref.sessionId);
          if (list) list.push(...taken);
          else takenEdges.set(ref.sessionId, taken);
          return;
        }
        case '@xstate.snapshot': {
          // A promise or callback actor's snapshot says something only when its status changes: the actor
          // message already stands for "active".
          const status = (ev.snapshot as { status?: string }).status;
          if (!machineOf(ref) && status === 'active') return;
          batch.push(transitionOf(ev, at[i]!, lastSnapshot.get(ref.sessionId) === i));
          return;
        }
      }
    });
    for (const msg of batch) picture.apply(msg);
    if (batch.length > 0) deliver(subscribers, batch);
  };

  return {
    inspect(ev) {
      // Actions are already visible as transitions; dropping them here keeps the send path short.
      if (rawSubscribers.size > 0) deliver(rawSubscribers, ev);
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
    subscribeRaw(fn) {
      rawSubscribers.add(fn);
      return () => void rawSubscribers.delete(fn);
    },
    snapshotForLateJoiner: () => picture.messages(),
    flush,
    pathOf: (sessionId) => picture.pathOf(sessionId),
  };
}
