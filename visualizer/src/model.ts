/**
 * The page's picture of the system, rebuilt from protocol messages: definitions, the actor tree with each
 * actor's latest state, and the timeline. Live and replay feed it the same way. It keeps the messages it
 * applied and a checkpoint of the picture every `checkpointEvery` messages, so `at(seq)` rebuilds the
 * picture at any timeline entry from the nearest checkpoint (time travel) instead of from the first message.
 * Both are capped: past `maxLog` messages the oldest checkpoint and what it covers are dropped, and
 * `historyCut` says so. Finished actors replaced by a newer one of the same id are folded into a count on
 * their parent at each checkpoint boundary, so a long run's restarts do not pile up either.
 */
import { applyContextPatch, KEEP_TASK_EVENTS, shortenTaskEvents, statusOf, type ActorMessage, type ActorStatus, type EventMessage, type InspectMessage, type JsonValue, type MachineDef, type StateValue } from '../../src/inspect/protocol.ts';
import { activeNodeIdsOf, edgeKeyOf, isInternalEvent, transitionsOf } from '../../src/inspect/statechart.ts';

/** One actor as the page shows it. */
export interface ActorView {
  sessionId: string;
  id: string;
  parentSessionId?: string;
  machineId?: string;
  src?: string;
  createdAt: number;
  status: ActorStatus;
  value?: StateValue;
  activeNodeIds: string[];
  context?: JsonValue;
  output?: JsonValue;
  error?: JsonValue;
  /** The transitions taken by the latest transition message (edge keys), for the animation. */
  lastEdges: string[];
  /** Counts transitions, so views can tell a new one from a repaint. */
  version: number;
  children: string[];
  /** When the latest transition happened. */
  updatedAt: number;
  /** Children folded away (finished, replaced by a newer one of the same id): how many per id. */
  retired?: Record<string, number>;
}

/** A row of the timeline: an event delivered, or an actor's state or status changing. */
export type TimelineEntry =
  | { kind: 'event'; seq: number; at: number; target: string; source?: string; type: string; payload?: JsonValue; internal: boolean }
  | { kind: 'state'; seq: number; at: number; sessionId: string; from?: string; to: string; event: string; internal: boolean };

/** Views register here and are told once per applied batch. */
export type ModelListener = (m: Model) => void;

// The page keeps more history than a late joiner gets, but not without bound.
const MAX_TIMELINE = 20_000;
/**
 * Messages between checkpoints. A pick replays at most this many from its checkpoint; bench/visualizer.ts
 * measures the pick (≤ 100 ms at 500 allocations) and the heap the checkpoints cost. At 2,000 the work at
 * each boundary (folding, the checkpoint's map of every actor) came every second at 500 churning
 * allocations, and 30 checkpoints were kept; a pick's rebuild was 8 ms at p99, so 4,000 halves that work
 * and the checkpoints kept for a rebuild still far under the goal.
 */
export const CHECKPOINT_EVERY = 4_000;
/** Messages kept for time travel (~1-2 minutes at 500 busy allocations); older ones are dropped by checkpoint. */
export const MAX_LOG = 60_000;

/** How the model keeps history. */
export interface ModelOptions {
  /** Keep messages and checkpoints for time travel (the views' past models do not). */
  keepLog?: boolean;
  checkpointEvery?: number;
  maxLog?: number;
}

/** The picture before message `seq`: actors are frozen copies, shared with the next checkpoint while unchanged. */
interface Checkpoint {
  seq: number;
  definitions: Map<string, MachineDef>;
  actors: Map<string, ActorView>;
  roots: string[];
  origin: number | undefined;
}

/** What was dropped from the oldest end of the history. */
export interface HistoryCut {
  /** Messages dropped so far. */
  dropped: number;
  /** The oldest moment time travel reaches now. */
  seq: number;
  at: number | undefined;
}

/**
 * Task events the page keeps per task (the latest, as Nomad's UI shows them): shortenTaskEvents and the
 * limit live with the protocol, since the server's picture for a late joiner cuts them the same way.
 */
export { KEEP_TASK_EVENTS, shortenTaskEvents };

const cloneActor = (a: ActorView): ActorView => ({ ...a, children: [...a.children], ...(a.retired && { retired: { ...a.retired } }) });
/** Checkpoints' actor copies: never changed, so a past model shares them and copies one only when it changes it. */
const FROZEN = new WeakSet<ActorView>();
const frozenCopy = (a: ActorView): ActorView => {
  const c = cloneActor(a);
  FROZEN.add(c);
  return c;
};

/** Short form of a state value: `running`, `pending.prestart`, `running(poststart.done, updates.idle)`. */
export function valueText(v: StateValue | undefined): string {
  if (v === undefined) return '';
  if (typeof v === 'string') return v;
  const entries = Object.entries(v);
  if (entries.length === 1) {
    const [k, sub] = entries[0]!;
    return `${k}.${valueText(sub)}`;
  }
  return `(${entries.map(([k, sub]) => `${k}.${valueText(sub)}`).join(', ')})`;
}

/** The page's state. */
export class Model {
  readonly definitions = new Map<string, MachineDef>();
  readonly actors = new Map<string, ActorView>();
  readonly roots: string[] = [];
  timeline: TimelineEntry[] = [];
  /** Time of the first message, for relative timestamps. */
  origin: number | undefined;
  /** Actors whose row may have changed since the views last asked (`takeChanged`). */
  private changed = new Set<string>();
  /** Actors changed since the last checkpoint (their frozen copy must be renewed). */
  private dirty = new Set<string>();
  /** Bumped when actors are added or the model is reset: lists must rebuild their rows. */
  structure = 0;
  /** Sequence number of the next message applied (never reused, also across trims). */
  nextSeq = 0;
  /** The first sequence number since the last reset: event numbers count from here (`eventNumber`). */
  resetSeq = 0;
  /** What the cap dropped from the oldest end, if anything. */
  historyCut: HistoryCut | undefined;
  /** Time spent in the work done at checkpoint boundaries and trims (total and longest ms), for the bench. */
  readonly costs: Record<'fold' | 'checkpoint' | 'trim' | 'order', { total: number; max: number }> = {
    fold: { total: 0, max: 0 }, checkpoint: { total: 0, max: 0 }, trim: { total: 0, max: 0 }, order: { total: 0, max: 0 },
  };
  /** Names of folded-away actors the timeline still mentions. */
  private retiredNames = new Map<string, string>();
  private log: InspectMessage[] = [];
  private logBase = 0;
  private checkpoints: Checkpoint[] = [];
  private readonly listeners = new Set<ModelListener>();
  private readonly keepLog: boolean;
  readonly checkpointEvery: number;
  private readonly maxLog: number;

  constructor(opts: boolean | ModelOptions = true) {
    const o = typeof opts === 'boolean' ? { keepLog: opts } : opts;
    this.keepLog = o.keepLog ?? true;
    this.checkpointEvery = Math.max(1, o.checkpointEvery ?? CHECKPOINT_EVERY);
    // At least two checkpoints' worth, so dropping the oldest always leaves one to start from.
    this.maxLog = Math.max(2 * this.checkpointEvery, o.maxLog ?? MAX_LOG);
  }

  subscribe(fn: ModelListener): void {
    this.listeners.add(fn);
  }

  /** Forgets everything (replay restarts; a reconnected page gets a fresh picture). */
  reset(): void {
    this.definitions.clear();
    this.actors.clear();
    this.roots.length = 0;
    this.timeline = [];
    this.origin = undefined;
    this.changed.clear();
    this.dirty.clear();
    this.retiredNames.clear();
    this.structure++;
    this.log = [];
    this.checkpoints = [];
    this.logBase = this.nextSeq;
    this.resetSeq = this.nextSeq;
    this.historyCut = undefined;
    this.notify();
  }

  /** Applies messages in order, then tells the views once. */
  apply(messages: readonly InspectMessage[]): void {
    const before = this.timeline.length;
    const every = this.checkpointEvery;
    for (const m of messages) {
      const seq = this.nextSeq++;
      if (this.keepLog) this.log.push(m);
      this.applyOne(m, seq);
      // Boundaries are absolute sequence numbers: a rebuild from a checkpoint folds at the same points as the live picture did.
      if ((seq + 1) % every === 0) {
        this.timedCost('fold', () => this.foldRetired());
        if (this.keepLog) this.timedCost('checkpoint', () => this.checkpoint(seq + 1));
      }
    }
    // A late joiner's picture lists events before the latest transitions; put the rows back in time order.
    const t = this.timeline;
    for (let i = Math.max(1, before); i < t.length; i++) {
      if (t[i]!.at < t[i - 1]!.at) {
        this.timedCost('order', () => (this.timeline = t.map((e, idx) => [e, idx] as const).sort((a, b) => a[0].at - b[0].at || a[1] - b[1]).map(([e]) => e)));
        break;
      }
    }
    if (this.log.length > this.maxLog) this.timedCost('trim', () => this.trimLog());
    if (this.timeline.length > MAX_TIMELINE) this.setTimeline(this.timeline.slice(-MAX_TIMELINE / 2));
    this.notify();
  }

  private timedCost(what: keyof Model['costs'], fn: () => void): void {
    const t0 = performance.now();
    fn();
    const ms = performance.now() - t0;
    const c = this.costs[what];
    c.total += ms;
    if (ms > c.max) c.max = ms;
  }

  /** The sessionIds changed since the last call, and whether the set of actors changed too. */
  takeChanged(): Set<string> {
    const c = this.changed;
    this.changed = new Set();
    return c;
  }

  /** The oldest sequence number `at` can go back to. */
  get earliestSeq(): number {
    return this.logBase;
  }

  /** Messages kept for time travel, and checkpoints kept: what the cap bounds. */
  get kept(): { messages: number; checkpoints: number } {
    return { messages: this.log.length, checkpoints: this.checkpoints.length };
  }

  /** The 1-based number of message `seq` since the last reset: what a replay's position bar counts. */
  eventNumber(seq: number): number {
    return seq - this.resetSeq + 1;
  }

  /**
   * The picture as it was right after message `seq`: a separate model, for time travel. It starts from the
   * newest checkpoint at or before `seq` and replays at most `checkpointEvery` messages.
   */
  at(seq: number): Model {
    const past = new Model({ keepLog: false, checkpointEvery: this.checkpointEvery });
    const target = Math.max(this.logBase - 1, Math.min(this.nextSeq - 1, seq));
    let from = this.logBase;
    for (let i = this.checkpoints.length - 1; i >= 0; i--) {
      const cp = this.checkpoints[i]!;
      if (cp.seq <= target + 1) {
        past.restore(cp);
        from = cp.seq;
        break;
      }
    }
    past.nextSeq = from;
    past.apply(this.log.slice(from - this.logBase, target + 1 - this.logBase));
    past.resetSeq = this.resetSeq;
    past.retiredNames = this.retiredNames;
    // The past's timeline is the present's up to that moment (the rows rebuilt from a checkpoint would start there).
    past.timeline = this.timeline.filter((e) => e.seq <= target);
    return past;
  }

  /**
   * The picture rebuilt from the oldest kept message without checkpoints: what `at` must equal (the
   * property test checks it). O(history); only for tests.
   */
  rebuiltFromStart(seq: number): Model {
    const past = new Model({ keepLog: false, checkpointEvery: this.checkpointEvery });
    const first = this.checkpoints.find((cp) => cp.seq === this.logBase);
    if (first) past.restore(first);
    past.nextSeq = this.logBase;
    past.apply(this.log.slice(0, Math.max(0, Math.min(this.log.length, seq - this.logBase + 1))));
    return past;
  }

  /** The ids from the root down to `sessionId`. */
  pathOf(sessionId: string): string[] {
    const path: string[] = [];
    for (let a = this.actors.get(sessionId); a; a = a.parentSessionId ? this.actors.get(a.parentSessionId) : undefined) path.unshift(a.id);
    return path;
  }

  /** A readable name for a sessionId in the timeline (its id path, or the raw id if unknown). */
  nameOf(sessionId: string | undefined): string {
    if (sessionId === undefined) return '';
    const a = this.actors.get(sessionId);
    return a ? this.pathOf(sessionId).join('/') : this.retiredNames.get(sessionId) ?? sessionId;
  }

  /** The newest actor with this id path (a restarted task's runner replaces the old one under the same name). */
  findByPath(path: string[]): ActorView | undefined {
    let ids = this.roots;
    let found: ActorView | undefined;
    for (const id of path) {
      found = undefined;
      for (let i = ids.length - 1; i >= 0; i--) {
        const a = this.actors.get(ids[i]!);
        if (a?.id === id) {
          found = a;
          break;
        }
      }
      if (!found) return undefined;
      ids = found.children;
    }
    return found;
  }

  private notify(): void {
    for (const fn of this.listeners) fn(this);
  }

  /** The actor to change in place: a checkpoint's shared copy is copied first (and replaces it here). */
  private writable(a: ActorView): ActorView {
    if (!FROZEN.has(a)) return a;
    const c = cloneActor(a);
    this.actors.set(a.sessionId, c);
    return c;
  }

  /** Marks an actor's row changed, for the views and for the next checkpoint. */
  private touch(sessionId: string): void {
    this.changed.add(sessionId);
    if (this.keepLog) this.dirty.add(sessionId);
  }

  private setTimeline(t: TimelineEntry[]): void {
    this.timeline = t;
    // Folded actors' names are kept only while a row still mentions them.
    if (this.retiredNames.size === 0) return;
    const mentioned = new Set<string>();
    for (const e of t) {
      if (e.kind === 'state') mentioned.add(e.sessionId);
      else {
        mentioned.add(e.target);
        if (e.source !== undefined) mentioned.add(e.source);
      }
    }
    for (const sid of this.retiredNames.keys()) if (!mentioned.has(sid)) this.retiredNames.delete(sid);
  }

  /** Freezes the picture before message `seq`, sharing the previous checkpoint's copies of unchanged actors. */
  private checkpoint(seq: number): void {
    const prev = this.checkpoints.at(-1);
    let actors: Map<string, ActorView>;
    if (prev) {
      actors = new Map(prev.actors);
      for (const sid of this.dirty) {
        const a = this.actors.get(sid);
        if (a) actors.set(sid, frozenCopy(a));
        else actors.delete(sid);
      }
    } else {
      actors = new Map();
      for (const [sid, a] of this.actors) actors.set(sid, frozenCopy(a));
    }
    this.dirty.clear();
    this.checkpoints.push({ seq, definitions: new Map(this.definitions), actors, roots: [...this.roots], origin: this.origin });
  }

  private restore(cp: Checkpoint): void {
    for (const [k, v] of cp.definitions) this.definitions.set(k, v);
    // Shared, not copied: `writable` copies the few actors the replay from here changes.
    for (const [sid, a] of cp.actors) this.actors.set(sid, a);
    this.roots.push(...cp.roots);
    this.origin = cp.origin;
    this.structure++;
  }

  /** Drops the oldest checkpoints, and the messages before the oldest one kept, until the log fits the cap. */
  private trimLog(): void {
    let keep = 0;
    while (keep < this.checkpoints.length - 1 && this.nextSeq - this.checkpoints[keep]!.seq > this.maxLog) keep++;
    const cp = this.checkpoints[keep];
    if (!cp || cp.seq <= this.logBase) return;
    const cut = cp.seq - this.logBase;
    this.log = this.log.slice(cut);
    this.checkpoints = this.checkpoints.slice(keep);
    this.logBase = cp.seq;
    const first = this.log[0];
    this.historyCut = { dropped: (this.historyCut?.dropped ?? 0) + cut, seq: cp.seq, at: first && 'at' in first ? first.at : undefined };
    // Timeline rows older than the oldest reachable moment could not be travelled to.
    if (this.timeline.some((e) => e.seq < cp.seq)) this.setTimeline(this.timeline.filter((e) => e.seq >= cp.seq));
  }

  /**
   * Folds away children that a newer child of the same id replaced (a task's runner after a restart, a
   * hook called again): XState ids are unique among live children, so the older one has finished. Their
   * count stays on the parent, their names while the timeline mentions them.
   */
  private foldRetired(): void {
    let folded = false;
    for (const shared of this.actors.values()) {
      if (shared.children.length < 2) continue;
      let p = shared;
      const newest = new Map<string, string>();
      for (const sid of p.children) {
        const c = this.actors.get(sid);
        if (c) newest.set(c.id, sid);
      }
      if (newest.size === p.children.length) continue;
      const kept: string[] = [];
      for (const sid of p.children) {
        const c = this.actors.get(sid);
        if (!c || newest.get(c.id) === sid) {
          if (c) kept.push(sid);
          continue;
        }
        p = this.writable(p);
        p.retired = { ...p.retired, [c.id]: (p.retired?.[c.id] ?? 0) + 1 };
        this.dropSubtree(sid);
      }
      p = this.writable(p);
      p.children = kept;
      this.touch(p.sessionId);
      folded = true;
    }
    if (folded) this.structure++;
  }

  private dropSubtree(sid: string): void {
    const a = this.actors.get(sid);
    if (!a) return;
    for (const c of a.children) this.dropSubtree(c);
    this.retiredNames.set(sid, this.pathOf(sid).join('/'));
    this.actors.delete(sid);
    if (this.keepLog) this.dirty.add(sid);
    this.changed.delete(sid);
  }

  /** Another actor's context as the page holds it now: what a `copy` patch (protocol 7) reads. */
  private readonly contextOf = (sessionId: string): JsonValue | undefined => this.actors.get(sessionId)?.context;

  private isHook(sessionId: string | undefined): boolean {
    const a = sessionId === undefined ? undefined : this.actors.get(sessionId);
    return !!a && !a.machineId;
  }

  /**
   * An invoked actor's done (error) event says it finished and carries its output (error) as `{ output }`
   * (`{ error }`): the actor's own final transition leaves the output out, and a promise or callback
   * actor's is not sent at all (protocol version 3), so the event stands for it.
   */
  private settle(m: EventMessage, seq: number): void {
    const done = m.type.startsWith('xstate.done.actor.');
    if (!done && !m.type.startsWith('xstate.error.actor.')) return;
    const found = m.source === undefined ? undefined : this.actors.get(m.source);
    const a = found && found.machineId ? this.writable(found) : found;
    if (!a) return;
    const p = m.payload;
    const fields = typeof p === 'object' && p !== null && !Array.isArray(p) ? p : {};
    const v = done ? fields.output : fields.error;
    if (a.machineId) {
      if (v === undefined) return;
      if (done) a.output = v;
      else a.error = v;
      this.touch(a.sessionId);
      return;
    }
    this.applyOne({ kind: 'transition', at: m.at, sessionId: a.sessionId, event: m.type, status: done ? 'done' : 'error', ...(v === undefined ? {} : done ? { output: v } : { error: v }) }, seq);
  }

  private addActor(m: ActorMessage): void {
    const known = this.actors.get(m.sessionId);
    const existing = known && this.writable(known);
    const view: ActorView = existing ?? {
      sessionId: m.sessionId, id: m.id, createdAt: m.at, updatedAt: m.at, status: 'active', activeNodeIds: [], lastEdges: [], version: 0, children: [],
    };
    Object.assign(view, { id: m.id, parentSessionId: m.parentSessionId, machineId: m.machineId, src: m.src });
    this.touch(m.sessionId);
    if (existing) return;
    this.structure++;
    this.actors.set(m.sessionId, view);
    const up = m.parentSessionId ? this.actors.get(m.parentSessionId) : undefined;
    const parent = up && this.writable(up);
    if (parent) {
      parent.children.push(m.sessionId);
      this.touch(parent.sessionId);
    } else this.roots.push(m.sessionId);
  }

  private applyOne(m: InspectMessage, seq: number): void {
    if ('at' in m && this.origin === undefined) this.origin = m.at;
    switch (m.kind) {
      case 'definition':
        this.definitions.set(m.machineId, m.definition);
        return;
      case 'actor': {
        this.addActor(m);
        // An actor created and settled in one batch comes with its done (error) event to its parent: replay that event.
        const s = m.settled;
        if (s && m.parentSessionId !== undefined) {
          const v = s.status === 'done' ? s.output : s.error;
          const payload: JsonValue | undefined = v === undefined ? undefined : { [s.status === 'done' ? 'output' : 'error']: v };
          this.applyOne({ kind: 'event', at: s.at, target: m.parentSessionId, source: m.sessionId, type: `xstate.${s.status}.actor.${m.id}`, ...(payload ? { payload } : {}) }, seq);
        }
        return;
      }
      case 'event':
        // A promise actor resolving tells itself so; its done/error event to the parent already says it.
        if (m.source === m.target) return;
        this.timeline.push({
          kind: 'event', seq, at: m.at, target: m.target, source: m.source, type: m.type, payload: m.payload,
          internal: isInternalEvent(m.type) || this.isHook(m.target) || this.isHook(m.source),
        });
        this.settle(m, seq);
        return;
      case 'transition': {
        const found = this.actors.get(m.sessionId);
        if (!found) return;
        const a = this.writable(found);
        const before = a.machineId ? valueText(a.value) : a.status;
        const status = statusOf(m);
        a.status = status;
        a.updatedAt = m.at;
        const def = a.machineId ? this.definitions.get(a.machineId) : undefined;
        if (m.value !== undefined) {
          a.value = m.value;
          a.activeNodeIds = m.activeNodeIds ?? (def ? activeNodeIdsOf(def, m.value) : []);
        }
        if (m.context !== undefined) a.context = shortenTaskEvents(m.context);
        else if (m.patch) a.context = shortenTaskEvents(applyContextPatch(a.context, m.patch, this.contextOf));
        if (m.output !== undefined) a.output = m.output;
        if (m.error !== undefined) a.error = m.error;
        a.lastEdges = [];
        if (m.edges && def) {
          const all = transitionsOf(def);
          for (const i of m.edges) {
            const t = all[i];
            if (t) a.lastEdges.push(edgeKeyOf(t));
          }
        }
        a.version++;
        this.touch(a.sessionId);
        // The alloc's row shows its tasks' states: a task changing changes its parent's row too.
        if (a.parentSessionId) this.changed.add(a.parentSessionId);
        const after = a.machineId ? valueText(a.value) : a.status;
        const statusNote = a.machineId && status !== 'active' ? ` (${status})` : '';
        // Hook and driver calls finishing show up as done/error events at their parent; only failures get a row.
        const worthARow = a.machineId ? before !== after || statusNote !== '' : status === 'error' && before !== 'error';
        if (worthARow) {
          this.timeline.push({
            kind: 'state', seq, at: m.at, sessionId: m.sessionId, from: before || undefined, to: after + statusNote, event: m.event,
            internal: !a.machineId,
          });
        }
        return;
      }
    }
  }
}
