/**
 * The current picture of a stream, for a page that connects late: every definition, the actors (finished
 * ones capped so a long-running agent does not grow without bound), each actor's latest state, and the
 * most recent events for the timeline. It holds each actor's latest context as XState's own (immutable)
 * object and reduces it to JSON only when someone connects: keeping up costs a field write per transition.
 */
import type { ActorMessage, ActorStatus, DefinitionMessage, EventMessage, InspectMessage, JsonValue, StateValue, TransitionMessage } from './protocol.ts';

/** How much of the past a late joiner gets. */
export interface PictureLimits {
  /** Finished (done, error, stopped) actors kept; the oldest are forgotten first. */
  maxFinishedActors: number;
  /** Events kept for the timeline. */
  recentEvents: number;
}

/** How the picture turns what it holds into JSON when asked (the stream's sanitizer and its limits). */
export interface PictureJson {
  context(raw: unknown): JsonValue;
  payload(raw: unknown): JsonValue;
  /** The message for an event kept as it came (`eventLater`), stamped `at`. */
  event(raw: unknown, at: number): EventMessage;
}

/** An actor's latest state as the stream saw it: raw values, reduced to JSON only in `messages()`. */
interface Latest {
  at: number;
  event: string;
  status: ActorStatus;
  value?: StateValue;
  context?: unknown;
  output?: unknown;
  error?: unknown;
}

/** The picture's state; feed it in stream order. */
export interface Picture {
  definition(msg: DefinitionMessage): void;
  actor(msg: ActorMessage): void;
  event(msg: EventMessage): void;
  /**
   * An event kept as it came, its message built (by `PictureJson.event`) only if a late joiner asks while it
   * is still among the recent ones: while nobody reads, most events scroll out unseen. `raw` must not change.
   */
  eventLater(at: number, raw: unknown): void;
  /** The actor's state now; `value`, `context`, `output` and `error` left undefined keep what the last call said. */
  snapshot(sessionId: string, at: number, event: string, status: ActorStatus, value?: StateValue, context?: unknown, output?: unknown, error?: unknown): void;
  /** Messages that rebuild the picture: definitions, actors, recent events, then latest transitions. */
  messages(): InspectMessage[];
  /** Each active actor's latest state value and (raw) context, as `messages()` would give them now. */
  forEachActive(fn: (sessionId: string, value: StateValue | undefined, context: unknown) => void): void;
  /** The ids from the root actor down to `sessionId` (`['a1', 'web']`), if the actor is known. */
  pathOf(sessionId: string): string[] | undefined;
}

/** An empty picture with the given limits. */
export function createPicture(limits: PictureLimits, json: PictureJson): Picture {
  const definitions = new Map<string, DefinitionMessage>();
  const actors = new Map<string, ActorMessage>();
  const latest = new Map<string, Latest>();
  // Finished actors in the order they finished; the oldest are forgotten from `head` on, and the list is
  // compacted now and then rather than shifted on every finish.
  let finished: string[] = [];
  let head = 0;
  // The recent events: messages (`kind: 'event'`), or raw events (`eventLater`) with their time beside them in
  // `eventAt` (a message's slot there is unused). Parallel arrays: keeping a raw event allocates nothing of its own.
  let events: unknown[] = [];
  let eventAt: number[] = [];
  const keepEvent = (entry: unknown, at: number) => {
    events.push(entry);
    eventAt.push(at);
    // Trim in chunks so the common push stays O(1).
    if (events.length > limits.recentEvents * 2) {
      events = events.slice(-limits.recentEvents);
      eventAt = eventAt.slice(-limits.recentEvents);
    }
  };
  /** The recent events as messages; raw ones are built now, once (the message replaces them). */
  const recentEvents = (): EventMessage[] => {
    const out: EventMessage[] = [];
    for (let i = Math.max(0, events.length - limits.recentEvents); i < events.length; i++) {
      let e = events[i] as EventMessage;
      if (e.kind !== 'event') events[i] = e = json.event(e, eventAt[i]!);
      out.push(e);
    }
    return out;
  };

  const forgetOldest = () => {
    while (finished.length - head > limits.maxFinishedActors) {
      const sessionId = finished[head++]!;
      actors.delete(sessionId);
      latest.delete(sessionId);
    }
    if (head > 1_024 && head * 2 > finished.length) {
      finished = finished.slice(head);
      head = 0;
    }
  };

  const transitionOf = (sessionId: string, s: Latest): TransitionMessage => {
    const msg: TransitionMessage = { kind: 'transition', at: s.at, sessionId, event: s.event };
    if (s.status !== 'active') msg.status = s.status;
    if (s.value !== undefined) msg.value = s.value;
    if (s.context !== undefined) msg.context = json.context(s.context);
    if (s.output !== undefined) msg.output = json.payload(s.output);
    if (s.error !== undefined) msg.error = json.payload(s.error);
    return msg;
  };

  return {
    definition(msg) {
      definitions.set(msg.machineId, msg);
    },
    actor(msg) {
      actors.set(msg.sessionId, msg);
    },
    event(msg) {
      keepEvent(msg, msg.at);
    },
    eventLater(at, raw) {
      keepEvent(raw, at);
    },
    snapshot(sessionId, at, event, status, value, context, output, error) {
      // An actor with a latest state is known (both are forgotten together): one lookup for most snapshots.
      const prev = latest.get(sessionId);
      if (!prev && !actors.has(sessionId)) return;
      const wasActive = prev === undefined || prev.status === 'active';
      if (!prev) latest.set(sessionId, { at, event, status, value, context, output, error });
      else {
        prev.at = at;
        prev.event = event;
        prev.status = status;
        if (value !== undefined) prev.value = value;
        if (context !== undefined) prev.context = context;
        if (output !== undefined) prev.output = output;
        if (error !== undefined) prev.error = error;
      }
      if (wasActive && status !== 'active') {
        finished.push(sessionId);
        forgetOldest();
      }
    },
    pathOf(sessionId) {
      const path: string[] = [];
      for (let a = actors.get(sessionId); a; a = a.parentSessionId === undefined ? undefined : actors.get(a.parentSessionId)) {
        path.unshift(a.id);
        if (a.parentSessionId === undefined) return path;
      }
      return undefined;
    },
    forEachActive(fn) {
      for (const [sessionId, s] of latest) if (s.status === 'active') fn(sessionId, s.value, s.context);
    },
    messages() {
      const transitions: TransitionMessage[] = [];
      for (const [sessionId, s] of latest) transitions.push(transitionOf(sessionId, s));
      return [...definitions.values(), ...actors.values(), ...recentEvents(), ...transitions];
    },
  };
}
