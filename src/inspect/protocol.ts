/**
 * The inspection protocol: what the runtime tells the visualizer, over the WebSocket and in recordings.
 * Shared by the node side and the page, so it imports nothing: plain types and a few pure helpers.
 *
 * A stream is a sequence of messages: a machine's definition once per machine id, an actor when it is
 * created, every event relayed to an actor, and a transition for every macrostep's snapshot that changed
 * something the page shows. Each says only what changed. Live they travel in batches; recordings hold one
 * message per line.
 */

/**
 * Bumped on changes a page built for the previous version cannot read. 3: transitions leave out an
 * unchanged state value and an output (error) their done (error) event already carried; children's actor
 * messages leave out the root. 4: a promise or callback actor created and settled in one batch is one actor
 * message with `settled`. 5: a connection starts with a checkpoint frame (the page resets to it) and the
 * history after it, or resumes after the batch the page asked for; hello names the stream. 6: a list past
 * the item limit keeps its newest items (the marker first), and an append to it says the cut (`cut`). 7: a
 * context patch may copy what the page holds in another actor's context (`copy`): a task runner's
 * `taskState` and its alloc's `taskStates.<task>` are one object, sent once; a transition's status is left out
 * while the actor is active.
 */
export const PROTOCOL_VERSION = 7;

/** The oldest recording version this protocol's readers replay: each version's streams are a later one's, said at more length. */
export const OLDEST_REPLAYABLE_VERSION = 2;

/** JSON values: what sanitized context, event payloads and outputs are reduced to. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** An XState state value (`'pending'`, `{ running: { poststart: 'done' } }`). */
export type StateValue = string | { [key: string]: StateValue };

/** An actor's snapshot status, as XState reports it. */
export type ActorStatus = 'active' | 'done' | 'error' | 'stopped';

/** One transition of a state node, compacted from the machine for drawing; `event` is `''` for `always`. */
export interface TransitionDef {
  event: string;
  /** The state node id the transition belongs to. */
  source: string;
  /** Target state node ids; empty for a targetless transition (actions only). */
  targets: string[];
  guard?: string;
  actions: string[];
  reenter: boolean;
  /** Set on a transition that goes around an empty hook phase (that phase's state id): drawn as entering it. */
  skipsPhase?: string;
  /** Set on a hook's done that ends its phase at once (that phase's state id): drawn as the done and the phase's way out. */
  endsPhase?: string;
  /** Set on a transition that lands on a hook phase's `calling` at once (that phase's state id): drawn as the one into `next` and `next`'s way on. */
  callsHook?: string;
  /** Set on a transition that goes on through a state it would have stopped in (that state's id): drawn as the one into it and its way on. */
  passes?: string;
}

/** One state node and its children in document order. */
export interface StateNodeDef {
  id: string;
  key: string;
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  /** The id of the initial child state, for compound states. */
  initial?: string;
  states: StateNodeDef[];
  transitions: TransitionDef[];
  /** Ids of the actors the state invokes while active. */
  invoke: string[];
  entry: string[];
  exit: string[];
  tags: string[];
  description?: string;
  /** Set on hook loops (`meta.hookPhase`): the walker folds them into one box by default. */
  hookPhase?: string;
}

/** A machine's structure, sent once per machine id. */
export interface MachineDef {
  id: string;
  root: StateNodeDef;
}

/** A machine's definition; sent before the first actor running it. */
export interface DefinitionMessage {
  kind: 'definition';
  machineId: string;
  definition: MachineDef;
}

/** An actor was created (before it starts). */
export interface ActorMessage {
  kind: 'actor';
  at: number;
  sessionId: string;
  /** The actor's id within its parent: the alloc id, a task name, `prestart:task_dir`, `driver:wait`. */
  id: string;
  parentSessionId?: string;
  /** Roots only (version 2: every actor); a child's is its parent's. */
  rootSessionId?: string;
  /** Set for state machine actors; names the definition to draw. */
  machineId?: string;
  /** The implementation's name in `setup({ actors })` (`driverStart`, `hook`), when invoked by name. */
  src?: string;
  /**
   * A promise or callback actor created and settled in the same batch: its done (error) event to its
   * parent, `xstate.done.actor.<id>` (`xstate.error.actor.<id>`) with payload `{ output }` (`{ error }`),
   * said here instead of in an event message of its own. Such a message comes where that event would.
   */
  settled?: { at: number; status: 'done' | 'error'; output?: JsonValue; error?: JsonValue };
}

/** An event was delivered to `target` (from `source`, when an actor sent it). */
export interface EventMessage {
  kind: 'event';
  at: number;
  target: string;
  source?: string;
  type: string;
  /**
   * The event's other fields, sanitized. An invoked actor's done (error) event carries `{ output }`
   * (`{ error }`): the source actor's output (error), which its final transition then leaves out.
   */
  payload?: JsonValue;
}

/**
 * One change to an actor's context: `value` replaces what is at `path` (the whole context for `[]`),
 * `append` adds items to the list at `path`, `remove` deletes the key at `path`, `copy` puts at `path`
 * what the reader holds at `copy.path` in the context of actor `copy.actor`, as it is when the patch is
 * applied (stream order). An `append` with `cut` is to a list past the sanitizer's item limit: after
 * appending, only the last `cut.keep` items stay, behind the marker `cutMarker(cut.earlier)` (what
 * `sanitize` makes of the whole list).
 */
export interface ContextPatch {
  path: string[];
  value?: JsonValue;
  append?: JsonValue[];
  cut?: { keep: number; earlier: number };
  remove?: true;
  /** Version 7. The stream sends it only where the value is the very one it already sent there. */
  copy?: ContextCopy;
}

/** Where a `copy` patch reads: a path in another actor's context (its sessionId). */
export interface ContextCopy {
  actor: string;
  path: string[];
}

/** The context a reader holds for an actor, by sessionId: what `copy` patches read. */
export type ContextOf = (sessionId: string) => JsonValue | undefined;

/** What `context` holds at `path`; undefined when the path does not lead anywhere. */
export function valueAtPath(context: JsonValue | undefined, path: readonly string[]): JsonValue | undefined {
  let node = context;
  for (const k of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = Array.isArray(node) ? node[Number(k)] : node[k];
  }
  return node;
}

/** The first item of a list cut to its newest items: how many earlier ones were left out. */
export function cutMarker(earlier: number): string {
  return `[… ${earlier} earlier]`;
}

/**
 * `list` with `items` appended, cut as `cut` says. A list that was cut already (more than `keep` items:
 * the marker and `keep` items) loses its old marker first.
 */
function appended(list: JsonValue | undefined, items: readonly JsonValue[], cut: ContextPatch['cut']): JsonValue[] {
  const old = Array.isArray(list) ? list : [];
  if (!cut) return [...old, ...items];
  const kept = old.length > cut.keep ? old.slice(1) : old;
  return [cutMarker(cut.earlier), ...[...kept, ...items].slice(-cut.keep)];
}

/**
 * Applies patches to a context, copying only along the changed paths (the old context is left as it was).
 * `contextOf` answers `copy` patches (another actor's context as the reader holds it now); without it, or
 * for an actor it does not know, a copied value is null.
 */
export function applyContextPatch(context: JsonValue | undefined, patches: readonly ContextPatch[], contextOf?: ContextOf): JsonValue | undefined {
  let root = context;
  for (const p of patches) {
    const value = p.copy ? (valueAtPath(contextOf?.(p.copy.actor), p.copy.path) ?? null) : p.value;
    if (p.path.length === 0) {
      root = p.append ? appended(root, p.append, p.cut) : p.remove ? undefined : value;
      continue;
    }
    const copy = (v: JsonValue | undefined): { [k: string]: JsonValue } | JsonValue[] =>
      Array.isArray(v) ? [...v] : typeof v === 'object' && v !== null ? { ...v } : {};
    const top = copy(root);
    let node = top as Record<string, JsonValue>;
    for (let i = 0; i < p.path.length - 1; i++) {
      const k = p.path[i]!;
      node[k] = copy(node[k]);
      node = node[k] as Record<string, JsonValue>;
    }
    const last = p.path[p.path.length - 1]!;
    if (p.remove) delete node[last];
    else if (p.append) node[last] = appended(node[last], p.append, p.cut);
    else node[last] = value ?? null;
    root = top;
  }
  return root;
}

/** An actor's snapshot after a macrostep. */
export interface TransitionMessage {
  kind: 'transition';
  at: number;
  sessionId: string;
  /** The type of the event that caused it. */
  event: string;
  /** Omitted while the actor is active (version 7: most transitions); read it with `statusOf`. */
  status?: ActorStatus;
  /** Machine actors only; omitted when unchanged since the actor's last transition message. */
  value?: StateValue;
  /** Every active state node id, ancestors included; not sent live (the page derives it from `value`, statechart.ts). */
  activeNodeIds?: string[];
  /**
   * The transitions this actor's microsteps took since its last transition message, in order: indices into
   * its machine's transitions in document order (`transitionsOf` in statechart.ts).
   */
  edges?: number[];
  /** The whole context, sanitized: an actor's first, and in a late joiner's picture. */
  context?: JsonValue;
  /** Otherwise what changed since the actor's previous context (omitted when nothing did). */
  patch?: ContextPatch[];
  /** Omitted when the actor's done (error) event to its parent carried it. */
  output?: JsonValue;
  error?: JsonValue;
}

/** A transition's actor status: `active` when the message leaves it out. */
export function statusOf(m: TransitionMessage): ActorStatus {
  return m.status ?? 'active';
}

/** Anything the stream says. */
export type InspectMessage = DefinitionMessage | ActorMessage | EventMessage | TransitionMessage;

/** The first line of a recording file. */
export interface RecordingHeader {
  kind: 'recording';
  version: number;
  startedAt: number;
  /** The replay format of the file's replay lines (replay-format.ts); absent in recordings made before them. */
  replay?: number;
}

/**
 * Why a recording whose first line is `first` cannot be replayed here, or undefined when it can (a
 * first line that is no header is left to the reader: it may be a file cut at the front).
 */
export function recordingProblem(first: unknown): string | undefined {
  if (typeof first !== 'object' || first === null || (first as { kind?: unknown }).kind !== 'recording') return undefined;
  const version = (first as { version?: unknown }).version;
  if (typeof version === 'number' && version >= OLDEST_REPLAYABLE_VERSION && version <= PROTOCOL_VERSION) return undefined;
  const readable = `this allocrun replays inspection protocol versions ${OLDEST_REPLAYABLE_VERSION} to ${PROTOCOL_VERSION}`;
  if (typeof version !== 'number') return `the recording's header has no protocol version; ${readable}`;
  return version > PROTOCOL_VERSION
    ? `the recording was made with inspection protocol version ${version}, by a newer allocrun; ${readable}: replay it with the allocrun that recorded it`
    : `the recording was made with inspection protocol version ${version}; ${readable}: record the run again`;
}

/** Commands the page may send to an allocation or task actor. */
export type InspectorCommandEvent = { type: 'KILL' } | { type: 'RESTART'; failure?: boolean } | { type: 'SIGNAL'; signal: string };

/** Server → page: the first frame on every connection. */
export interface HelloFrame {
  type: 'hello';
  version: number;
  mode: 'live' | 'replay';
  /** Whether the server was given a `control` callback (commands would otherwise be refused). */
  controls: boolean;
  /** Whether `/logs` serves task logs (the server was given a `logs` callback). */
  logs?: boolean;
  /**
   * This server's stream (new on every start): a page that reconnects to the same stream may ask for the
   * batches after the last it has (`?stream=ID&after=SEQ` on the socket's URL) instead of the whole history.
   */
  stream?: string;
  /** Whether this connection resumes after the page's last batch (no checkpoint follows). */
  resumed?: boolean;
  /**
   * Whether commands sent on this connection may be carried out: false when the token may only read
   * (commands are refused with "Permission denied"). Absent: as `controls` says.
   */
  mayCommand?: boolean;
}

/**
 * Server → page: the picture (every definition, the actors, recent events, each actor's latest state and
 * whole context) as it was right after batch `seq`; the page starts over from it, and the batches that
 * follow say what changed. `cut`: the stream said more before it than the server kept.
 */
export interface CheckpointFrame {
  type: 'checkpoint';
  seq: number;
  cut: boolean;
  messages: InspectMessage[];
}

/** Server → page: messages in stream order. */
export interface BatchFrame {
  type: 'batch';
  /** The stream's batch number: one more than the previous batch's (or the checkpoint's). */
  seq: number;
  messages: InspectMessage[];
}

/** Server → page: the answer to a command frame. */
export interface CommandResultFrame {
  type: 'command-result';
  id: string;
  ok: boolean;
  message?: string;
}

/** Frames the server sends. */
export type ServerFrame = HelloFrame | CheckpointFrame | BatchFrame | CommandResultFrame;

/** Page → server: send `event` to the actor `target` (its sessionId, or its id path from the root). */
export interface CommandFrame {
  type: 'command';
  id: string;
  target: string | string[];
  event: InspectorCommandEvent;
}

/** Frames the page sends. */
export type ClientFrame = CommandFrame;

/**
 * Task events the page keeps per task, and the server's picture for a late joiner sends: Nomad keeps (and
 * its UI shows) the last 10. The runtime keeps every event (machines/model.ts: "views may truncate"), so
 * without this a long run's contexts, the page's checkpoints and the server's history checkpoints (the
 * picture of 500 flapping allocations reached ~100 MB of JSON) would grow with each restart. Context
 * patches append to event lists or replace them whole (never index into them), so a shortened list takes
 * later patches as the full one would.
 */
export const KEEP_TASK_EVENTS = 10;

const asObject = (v: JsonValue | undefined): Record<string, JsonValue> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? v : undefined;

/** A task state with at most KEEP_TASK_EVENTS events (the same object when it has no more). */
function shortTaskState(ts: JsonValue | undefined): JsonValue | undefined {
  const o = asObject(ts);
  const events = o?.events;
  if (!o || !Array.isArray(events) || events.length <= KEEP_TASK_EVENTS) return ts;
  return { ...o, events: events.slice(-KEEP_TASK_EVENTS) };
}

/** An alloc's (`taskStates`) or a task's (`taskState`) context with each task's events cut to the latest. */
export function shortenTaskEvents(ctx: JsonValue | undefined): JsonValue | undefined {
  const o = asObject(ctx);
  if (!o) return ctx;
  let out = o;
  const one = asObject(o.taskState) && shortTaskState(o.taskState);
  if (one !== undefined && one !== o.taskState) out = { ...out, taskState: one };
  const states = asObject(o.taskStates);
  if (states) {
    let next: Record<string, JsonValue> | undefined;
    for (const [name, ts] of Object.entries(states)) {
      const short = shortTaskState(ts);
      if (short !== ts) (next ??= { ...states })[name] = short ?? null;
    }
    if (next) out = { ...out, taskStates: next };
  }
  return out;
}
