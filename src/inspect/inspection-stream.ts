/**
 * Maps XState's inspection events into the protocol (protocol.ts), in batches. XState calls `inspect`
 * synchronously inside every send, so the callback only queues what the page may be sent; the mapping
 * (definitions, state values, context patches) runs once per batch, off the send path, and says only what
 * changed: a snapshot that changed nothing the page shows is not sent at all.
 */
import { StateMachine, type AnyStateMachine, type InspectionEvent } from 'xstate';
import { diffContext, type SharedValue } from './context-diff.ts';
import { machineDefinitionOf } from './definition.ts';
import { createPicture, type PictureLimits } from './picture.ts';
import { shortenTaskEvents, type ActorMessage, type ActorStatus, type ContextCopy, type ContextPatch, type DefinitionMessage, type EventMessage, type InspectMessage, type JsonValue, type StateValue, type TransitionMessage } from './protocol.ts';
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
  /** Called when a subscriber throws, or the picture's upkeep while nobody reads does; default `console.error`. */
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

// It runs for every inspection event: the class check answers for the runtime's own machines at once; the
// shape check keeps machines made by another copy of XState (an embedder's) working.
function machineOf(ref: InspectedRef): AnyStateMachine | undefined {
  const logic = ref.logic;
  if (logic instanceof StateMachine) return logic as AnyStateMachine;
  return typeof logic === 'object' && logic !== null && 'root' in logic ? (logic as AnyStateMachine) : undefined;
}

// Payload limits are tighter than context's: the timeline shows them one line at a time.
const PAYLOAD_LIMITS: SanitizeLimits = { depth: 6, items: 50, chars: 1_000 };

/** The event's fields but `type`, as JSON; undefined (and no copy made: most events have none) when it has none. */
function payloadOf(event: { type: string }): JsonValue | undefined {
  for (const k in event) {
    if (k === 'type') continue;
    const { type: _type, ...rest } = event as Record<string, unknown>;
    return sanitize(rest, PAYLOAD_LIMITS);
  }
  return undefined;
}

/**
 * Whether the page is ever sent anything for `ev`. Not: actions (the transitions show them); `xstate.init`
 * (the actor message says the actor started); a promise telling itself it settled (its done/error event to
 * the parent says it); a child's snapshot relayed to its parent, or a task runner's news to its alloc
 * (`TASK_CHANGED`: the child's own transition says it, and the parent's names the event when it reacts); a
 * promise or callback actor's snapshot while it is active (its actor message stands for that).
 */
function worthQueueing(ev: InspectionEvent): boolean {
  switch (ev.type) {
    case '@xstate.action':
      return false;
    case '@xstate.event': {
      const t = ev.event.type;
      if (t === 'TASK_CHANGED') return ev.sourceRef === undefined;
      return !(t.startsWith('xstate.') && (t === 'xstate.init' || t.startsWith('xstate.promise.') || t.startsWith('xstate.snapshot.')));
    }
    case '@xstate.snapshot':
      return machineOf(ev.actorRef as InspectedRef) !== undefined || (ev.snapshot as { status?: string }).status !== 'active';
    default:
      return true;
  }
}

/**
 * Whether `ev` is its source actor's done (error) event to its parent, exactly as the page rebuilds it
 * from an actor message's `settled` (protocol.ts): `xstate.done.actor.<id>` (`error`) to the parent.
 */
function settlesAtParent(ev: InspectionEvent & { type: '@xstate.event' }): boolean {
  const source = ev.sourceRef as InspectedRef | undefined;
  const id = source?.id;
  const t = ev.event.type;
  if (id === undefined || source!._parent?.sessionId !== (ev.actorRef as InspectedRef).sessionId || !t.endsWith(id)) return false;
  const prefix = t.length - id.length;
  return (prefix === 18 && t.startsWith('xstate.done.actor.')) || (prefix === 19 && t.startsWith('xstate.error.actor.'));
}

const isSettling = (t: string) => t.startsWith('xstate.done.actor.') || t.startsWith('xstate.error.actor.');

/**
 * The event message for `ev`. An invoked actor's done (error) event says it finished, with its output
 * (error) as `{ output }` (`{ error }`), once: its own final transition then leaves that out, or is not
 * sent at all for a promise (the page reads it from here, model.ts).
 */
function eventMessageOf(ev: InspectionEvent & { type: '@xstate.event' }, at: number, settles: boolean): EventMessage {
  const event = ev.event as { type: string; output?: unknown; error?: unknown };
  const msg: EventMessage = { kind: 'event', at, target: ev.actorRef.sessionId, type: event.type };
  const source = ev.sourceRef?.sessionId;
  if (source !== undefined) msg.source = source;
  if (settles) {
    const raw = event.type.startsWith('xstate.done.') ? event.output : event.error;
    if (raw !== undefined) msg.payload = event.type.startsWith('xstate.done.') ? { output: sanitize(raw, PAYLOAD_LIMITS) } : { error: sanitize(raw, PAYLOAD_LIMITS) };
  } else {
    const payload = payloadOf(event);
    if (payload !== undefined) msg.payload = payload;
  }
  return msg;
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
  for (let j = 0; j < transitions.length; j++) {
    const t = transitions[j]!;
    // Initial transitions (eventType null) are not drawn as edges, nor are targetless ones (actions only).
    if (typeof t.eventType !== 'string' || !t.target || t.target.length === 0) continue;
    const i = index.get(t);
    if (i !== undefined) out.push(i);
  }
  return out;
}

/** A copy of an actor message with `settled`, field by field (a spread of it was a hot spot of the flush). */
function withSettled(born: ActorMessage, settled: NonNullable<ActorMessage['settled']>): ActorMessage {
  const msg: ActorMessage = { kind: 'actor', at: born.at, sessionId: born.sessionId, id: born.id };
  if (born.parentSessionId !== undefined) msg.parentSessionId = born.parentSessionId;
  if (born.rootSessionId !== undefined) msg.rootSessionId = born.rootSessionId;
  if (born.machineId !== undefined) msg.machineId = born.machineId;
  if (born.src !== undefined) msg.src = born.src;
  msg.settled = settled;
  return msg;
}

/** Whether two state values name the same states (XState builds a new value object on every snapshot). */
function sameValue(a: StateValue | undefined, b: StateValue): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  let n = 0;
  for (const k in a) {
    const x = b[k];
    if (x === undefined || !sameValue(a[k], x)) return false;
    n++;
  }
  for (const _k in b) n--;
  return n === 0;
}

/**
 * Whether the object at `path` in `context` is where the page holds it: every object on the way a plain one
 * no wider than the item limit (wider ones are cut by the sanitizer, and might have lost that key).
 */
function heldAt(context: unknown, path: readonly string[], items: number): unknown {
  let node = context;
  for (const k of path) {
    if (typeof node !== 'object' || node === null || Object.getPrototypeOf(node) !== Object.prototype) return undefined;
    let n = 0;
    for (const _k in node) if (++n > items) return undefined;
    node = (node as Record<string, unknown>)[k];
  }
  return node;
}

/**
 * A task's state is sent once, not twice: an alloc runner's `taskStates.<task>` and that task runner's own
 * `taskState` are one object (the alloc mirrors its child's), so whichever of the two is sent second is a
 * `copy` of the first. A TaskState's deepest object (an event's details) is 3 levels below it, so under this
 * sanitizer depth both places hold the same JSON (the copy's path is one level shallower or deeper).
 */
const MIN_DEPTH_FOR_COPIES = 8;
const TASK_STATE: readonly string[] = ['taskState'];

/**
 * One machine actor while the stream is read: what the page knows of it and the edges its next transition
 * carries. One record per actor, found once per inspection event (and kept beside the queued snapshot for
 * the flush), where separate maps by session id were several lookups per event, most of them at the flush,
 * when the actor's objects have gone cold.
 */
interface Tracked {
  /** Whether the page has this actor's state (its first transition went out): then `value` and `context` say what. */
  known: boolean;
  value: StateValue | undefined;
  /**
   * XState's active state nodes of the snapshot that value was read from, when known. XState keeps the very
   * `_nodes` array from step to step while the configuration stays (and builds a new value object every
   * time), so the same array means the same value without walking both values: most snapshots change
   * context, not state, and comparing their values was a quarter of the stream's own time.
   */
  nodes: unknown;
  /** The raw context last sent: context is replaced, never mutated, so identity means unchanged. */
  context: unknown;
  /** Edges taken up to the actor's last queued snapshot, for its next transition message. */
  taken: number[] | undefined;
  /** Edges of the actor's microsteps since its last queued snapshot (its macrostep still running). */
  steps: number[] | undefined;
  /** The queue index of the actor's last queued snapshot: only that one carries edges and context. */
  last: number;
}

/** Creates a stream; subscribe before passing `inspect` to a runner, or ask late for the picture. */
export function createInspectionStream(opts: InspectionStreamOptions = {}): InspectionStream {
  const now = opts.now ?? Date.now;
  const schedule = opts.schedule ?? ((fn: () => void) => void setImmediate(fn));
  const limits = opts.limits ?? DEFAULT_LIMITS;
  const onError = opts.onError ?? ((err: unknown) => console.error('allocrun inspect: a subscriber or the picture threw', err));
  const picture = createPicture(
    { maxFinishedActors: 1_000, recentEvents: 300, ...opts.picture },
    // A late joiner gets each task's latest events, as many as the page keeps: a long-flapping task's full
    // list (up to the sanitizer's 500) made every picture, and so every history checkpoint, huge.
    {
      context: (raw) => shortenTaskEvents(sanitize(raw, limits)) ?? null,
      payload: (raw) => sanitize(raw, PAYLOAD_LIMITS),
      event: (raw, at) => {
        const ev = raw as InspectionEvent & { type: '@xstate.event' };
        return eventMessageOf(ev, at, isSettling(ev.event.type));
      },
    },
  );
  const subscribers = new Set<(batch: InspectMessage[]) => void>();
  const rawSubscribers = new Set<(ev: InspectionEvent) => void>();
  const definitions = new Set<string>();
  /** Per active machine actor, while the stream is read. */
  const tracked = new Map<string, Tracked>();
  const trackedOf = (sessionId: string): Tracked => {
    let t = tracked.get(sessionId);
    if (!t) tracked.set(sessionId, (t = { known: false, value: undefined, nodes: undefined, context: undefined, taken: undefined, steps: undefined, last: -1 }));
    return t;
  };
  /** The context the page holds for `sessionId`, as the stream last sent it. */
  const sentContext = (sessionId: string): unknown => {
    const t = tracked.get(sessionId);
    return t?.known ? t.context : undefined;
  };
  /** Actors whose done (error) event to their parent was sent: it said what their final transition would repeat. */
  const settledByEvent = new Set<string>();

  // The actor whose context is being diffed and its children, for `sharedTaskState` (one function, not a closure per diff).
  let diffRef: InspectedRef | undefined;
  let diffChildren: Record<string, InspectedRef | undefined> | undefined;
  /** The other place the page already holds a task state changed at `path`, if it was sent there already. */
  const sharedTaskState: SharedValue = (path, value) => {
    if (path.length === 1) {
      if (path[0] !== 'taskState') return undefined;
      const parent = diffRef?._parent?.sessionId;
      const id = diffRef?.id;
      if (parent === undefined || id === undefined) return undefined;
      const at = ['taskStates', id];
      return heldAt(sentContext(parent), at, limits.items) === value ? { actor: parent, path: at } : undefined;
    }
    if (path.length !== 2 || path[0] !== 'taskStates') return undefined;
    const child = diffChildren?.[path[1]!]?.sessionId;
    if (child === undefined) return undefined;
    return heldAt(sentContext(child), TASK_STATE, limits.items) === value ? ({ actor: child, path: [...TASK_STATE] } satisfies ContextCopy) : undefined;
  };
  const shared = limits.depth >= MIN_DEPTH_FOR_COPIES ? sharedTaskState : undefined;

  let queue: InspectionEvent[] = [];
  /** Beside each queued event: its actor's record, for a machine actor's snapshot queued while the stream is read. */
  let queueTracked: (Tracked | undefined)[] = [];
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

  /**
   * The message for a snapshot, or undefined when it changes nothing the page shows: same state value and
   * status, no edges, and (for the actor's last snapshot in the batch, the only one whose context is
   * compared) the same context.
   */
  const transitionOf = (ev: InspectionEvent & { type: '@xstate.snapshot' }, at: number, t: Tracked | undefined, lastInBatch: boolean): TransitionMessage | undefined => {
    const sessionId = (ev.actorRef as InspectedRef).sessionId;
    const snap = ev.snapshot as { status: ActorStatus; value?: StateValue; _nodes?: unknown; context?: unknown; output?: unknown; error?: unknown; children?: Record<string, InspectedRef | undefined> };
    const status = snap.status;
    let known = t?.known ? t : undefined;
    const first = t !== undefined && known === undefined && snap.value !== undefined;
    if (first) {
      known = t;
      t.known = true;
    }
    let value: StateValue | undefined;
    let edges: number[] | undefined;
    let context: JsonValue | undefined;
    let patch: ContextPatch[] | undefined;
    let rawContext: unknown;
    if (known) {
      // The state value only when it changed: the page keeps the last one.
      const nodes = snap._nodes;
      if (snap.value !== undefined && (nodes === undefined || nodes !== known.nodes)) {
        if (!sameValue(known.value, snap.value)) value = known.value = snap.value;
        known.nodes = nodes;
      }
      // Only the actor's last snapshot in a batch carries edges and context: the page shows the newest anyway.
      // After the first context, only what changed: a context shares the parts an assign did not touch with the last one.
      if (lastInBatch) {
        edges = t!.taken;
        t!.taken = undefined;
        if (snap.context !== undefined && known.context !== snap.context) {
          if (known.context === undefined) context = sanitize(snap.context, limits);
          else {
            diffRef = ev.actorRef as InspectedRef;
            diffChildren = snap.children;
            const changes = diffContext(known.context, snap.context, limits, shared);
            if (changes.length > 0) patch = changes;
          }
          rawContext = known.context = snap.context;
        }
      }
    }
    if (status === 'active' && !first && value === undefined && !edges && context === undefined && !patch) return undefined;

    const msg: TransitionMessage = { kind: 'transition', at, sessionId, event: ev.event.type };
    if (status !== 'active') msg.status = status;
    if (value !== undefined) msg.value = value;
    if (edges) msg.edges = edges;
    if (context !== undefined) msg.context = context;
    if (patch) msg.patch = patch;
    let settled = false;
    if (status !== 'active') {
      if (t) tracked.delete(sessionId);
      settled = settledByEvent.delete(sessionId) && (status === 'done' || status === 'error');
      if (!settled && status === 'done' && snap.output !== undefined) msg.output = sanitize(snap.output, PAYLOAD_LIMITS);
      if (!settled && status === 'error') msg.error = sanitize(snap.error, PAYLOAD_LIMITS);
    }
    picture.snapshot(sessionId, at, msg.event, status, value, rawContext, status === 'done' ? snap.output : undefined, status === 'error' ? snap.error : undefined);
    // A promise or callback actor's done (error) event said all its final transition would.
    return settled && !known ? undefined : msg;
  };

  /** The actor message for `ev`, after the machine's definition when it is the first of its machine. */
  const actorMessages = (ev: InspectionEvent & { type: '@xstate.actor' }, at: number): [DefinitionMessage | undefined, ActorMessage] => {
    const ref = ev.actorRef as InspectedRef;
    const machine = machineOf(ref);
    const machineId = machine?.id;
    let def: DefinitionMessage | undefined;
    if (machine && machineId !== undefined && !definitions.has(machineId)) {
      definitions.add(machineId);
      def = { kind: 'definition', machineId, definition: machineDefinitionOf(machine) };
      picture.definition(def);
    }
    const msg: ActorMessage = { kind: 'actor', at, sessionId: ref.sessionId, id: ref.id ?? ref.sessionId };
    // A child's root is its parent's: only roots say it.
    if (ref._parent) msg.parentSessionId = ref._parent.sessionId;
    else msg.rootSessionId = ev.rootId;
    if (machineId !== undefined) msg.machineId = machineId;
    if (typeof ref.src === 'string') msg.src = ref.src;
    picture.actor(msg);
    return [def, msg];
  };

  /** The event message for `ev` (eventMessageOf), kept in the picture's recent events. */
  const eventMessage = (ev: InspectionEvent & { type: '@xstate.event' }, at: number, settles: boolean): EventMessage => {
    const msg = eventMessageOf(ev, at, settles);
    picture.event(msg);
    return msg;
  };

  /**
   * Nobody reads the stream (no page connected, no recorder): keep the late joiner's picture current, a
   * field write per snapshot, and build no messages. An event is kept as it came: the picture builds its
   * message only if a late joiner comes while it is still among the recent ones, and most scroll out unseen.
   */
  const keepPicture = (ev: InspectionEvent, at: number) => {
    if (ev.type === '@xstate.snapshot') {
      const snap = ev.snapshot as { status: ActorStatus; value?: StateValue; context?: unknown; output?: unknown; error?: unknown };
      picture.snapshot(ev.actorRef.sessionId, at, ev.event.type, snap.status, snap.value, snap.context, snap.status === 'done' ? snap.output : undefined, snap.status === 'error' ? snap.error : undefined);
    } else if (ev.type === '@xstate.event') picture.eventLater(at, ev);
    else if (ev.type === '@xstate.actor') actorMessages(ev, at);
  };

  const flush = () => {
    scheduled = false;
    if (queue.length === 0) return;
    const events = queue;
    const at = times;
    const queuedTracked = queueTracked;
    queue = [];
    queueTracked = [];
    times = [];
    // The last reader left with these queued: into the picture, in order, before anything newer.
    if (subscribers.size === 0) {
      for (let i = 0; i < events.length; i++) keepPicture(events[i]!, at[i]!);
      return;
    }
    // Promise and callback actors created in this batch, and those of them that also settled in it: each of
    // those is sent as one actor message saying both (`settled`), where its done (error) event falls.
    const bornHere = new Set<string>();
    const settledHere = new Set<string>();
    for (let i = 0; i < events.length; i++) {
      const ev = events[i]!;
      if (ev.type === '@xstate.actor') {
        if (!machineOf(ev.actorRef as InspectedRef)) bornHere.add(ev.actorRef.sessionId);
      } else if (ev.type === '@xstate.event') {
        const source = ev.sourceRef?.sessionId;
        if (source !== undefined && bornHere.has(source) && settlesAtParent(ev)) settledHere.add(source);
        // An actor that sends or is sent anything else before it settles is announced when it starts, as usual.
        else {
          if (source !== undefined) bornHere.delete(source);
          bornHere.delete(ev.actorRef.sessionId);
        }
      }
    }
    const unsent = new Map<string, ActorMessage>();

    const batch: InspectMessage[] = [];
    for (let i = 0; i < events.length; i++) {
      const ev = events[i]!;
      const ref = ev.actorRef as InspectedRef;
      switch (ev.type) {
        case '@xstate.actor': {
          const [def, msg] = actorMessages(ev, at[i]!);
          if (def) batch.push(def);
          if (settledHere.has(ref.sessionId)) unsent.set(ref.sessionId, msg);
          else batch.push(msg);
          break;
        }
        case '@xstate.event': {
          const settles = isSettling(ev.event.type);
          const msg = eventMessage(ev, at[i]!, settles);
          const source = msg.source;
          if (settles && source !== undefined) settledByEvent.add(source);
          const born = source === undefined ? undefined : unsent.get(source);
          if (born) {
            unsent.delete(source!);
            // A copy: the picture keeps the actor message as it was when the actor started.
            const settled: NonNullable<ActorMessage['settled']> = { at: msg.at, status: ev.event.type.startsWith('xstate.done.') ? 'done' : 'error' };
            const p = msg.payload as { output?: JsonValue; error?: JsonValue } | undefined;
            if (p?.output !== undefined) settled.output = p.output;
            if (p?.error !== undefined) settled.error = p.error;
            batch.push(withSettled(born, settled));
          } else batch.push(msg);
          break;
        }
        case '@xstate.snapshot': {
          const t = queuedTracked[i];
          const msg = transitionOf(ev, at[i]!, t, t !== undefined && t.last === i);
          if (msg) batch.push(msg);
          break;
        }
      }
    }
    if (batch.length > 0) deliver(subscribers, batch);
  };

  const noteEdges = (ev: InspectionEvent & { type: '@xstate.microstep' }) => {
    const ref = ev.actorRef as InspectedRef;
    const machine = machineOf(ref);
    if (!machine) return;
    const taken = edgesOf(machine, ev._transitions);
    if (taken.length === 0) return;
    const t = trackedOf(ref.sessionId);
    if (t.steps) t.steps.push(...taken);
    else t.steps = taken;
  };

  /** A machine actor's snapshot is queued at `index`: the edges of its microsteps so far go with it. */
  const queued = (t: Tracked, index: number) => {
    t.last = index;
    const steps = t.steps;
    if (!steps) return;
    t.steps = undefined;
    if (t.taken) t.taken.push(...steps);
    else t.taken = steps;
  };

  /**
   * The stream is read again after nobody did: what the new reader is about to get is the picture, so the
   * next messages say what changed since the picture's values and contexts.
   */
  const resume = () => {
    tracked.clear();
    settledByEvent.clear();
    picture.forEachActive((sessionId, value, context) => {
      if (value !== undefined) tracked.set(sessionId, { known: true, value, nodes: undefined, context, taken: undefined, steps: undefined, last: -1 });
    });
    // Snapshots queued while nobody read are mapped at the next flush for the new reader: tracked as if queued now.
    for (let i = 0; i < queue.length; i++) {
      const ev = queue[i]!;
      if (ev.type === '@xstate.snapshot' && machineOf(ev.actorRef as InspectedRef)) queued((queueTracked[i] = trackedOf(ev.actorRef.sessionId)), i);
    }
  };

  return {
    inspect(ev) {
      if (rawSubscribers.size > 0) deliver(rawSubscribers, ev);
      // A microstep is worth only its edges, and only while someone reads (the picture does not keep them):
      // they are looked up now and the event is not queued, so the snapshot it holds (one XState drops at
      // once otherwise) does not live until the flush. They join the actor's taken edges when its snapshot
      // is queued, so each transition message carries the edges taken before it, as when they were queued.
      if (ev.type === '@xstate.microstep') {
        if (subscribers.size > 0) noteEdges(ev);
        return;
      }
      // What the page is never sent is dropped here, so the queue holds only what the flush maps.
      if (!worthQueueing(ev)) return;
      // Nobody reads and nothing is queued before it: the event goes into the picture now, so nothing is
      // queued, timed in a batch or scheduled for it. (Queued events left by the last reader go first.)
      // This runs inside XState's send: a failure of the picture's goes to onError, not into the machines.
      if (subscribers.size === 0 && queue.length === 0) {
        try {
          keepPicture(ev, now());
        } catch (err) {
          onError(err);
        }
        return;
      }
      let t: Tracked | undefined;
      if (ev.type === '@xstate.snapshot' && subscribers.size > 0 && machineOf(ev.actorRef as InspectedRef)) queued((t = trackedOf(ev.actorRef.sessionId)), queue.length);
      queueTracked.push(t);
      queue.push(ev);
      times.push(now());
      if (!scheduled) {
        scheduled = true;
        schedule(flush);
      }
    },
    subscribe(fn) {
      if (subscribers.size === 0) resume();
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
