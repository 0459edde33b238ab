/**
 * The page's picture of the system, rebuilt from protocol messages: definitions, the actor tree with each
 * actor's latest state, and the timeline. Live and replay feed it the same way. It keeps the messages it
 * applied (bounded), so `at(seq)` can rebuild the picture as it was at any timeline entry: time travel.
 */
import { applyContextPatch, type ActorMessage, type ActorStatus, type EventMessage, type InspectMessage, type JsonValue, type MachineDef, type StateValue } from '../../src/inspect/protocol.ts';
import { activeNodeIdsOf, isInternalEvent, transitionsOf } from '../../src/inspect/statechart.ts';

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
}

/** A row of the timeline: an event delivered, or an actor's state or status changing. */
export type TimelineEntry =
  | { kind: 'event'; seq: number; at: number; target: string; source?: string; type: string; payload?: JsonValue; internal: boolean }
  | { kind: 'state'; seq: number; at: number; sessionId: string; from?: string; to: string; event: string; internal: boolean };

/** Views register here and are told once per applied batch. */
export type ModelListener = (m: Model) => void;

// The page keeps more history than a late joiner gets, but not without bound.
const MAX_TIMELINE = 20_000;
// Messages kept for time travel; beyond it the oldest half is folded into a picture of that moment.
const MAX_LOG = 400_000;

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
  /** Bumped when actors are added or the model is reset: lists must rebuild their rows. */
  structure = 0;
  /** Sequence number of the next message applied (never reused, also across trims). */
  nextSeq = 0;
  private log: InspectMessage[] = [];
  private logBase = 0;
  private readonly listeners = new Set<ModelListener>();

  constructor(private readonly keepLog = true) {}

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
    this.structure++;
    this.log = [];
    this.logBase = this.nextSeq;
    this.notify();
  }

  /** Applies messages in order, then tells the views once. */
  apply(messages: readonly InspectMessage[]): void {
    const before = this.timeline.length;
    for (const m of messages) {
      const seq = this.nextSeq++;
      if (this.keepLog) this.log.push(m);
      this.applyOne(m, seq);
    }
    // A late joiner's picture lists events before the latest transitions; put the rows back in time order.
    const t = this.timeline;
    for (let i = Math.max(1, before); i < t.length; i++) {
      if (t[i]!.at < t[i - 1]!.at) {
        this.timeline = t.map((e, idx) => [e, idx] as const).sort((a, b) => a[0].at - b[0].at || a[1] - b[1]).map(([e]) => e);
        break;
      }
    }
    if (this.timeline.length > MAX_TIMELINE) this.timeline = this.timeline.slice(-MAX_TIMELINE / 2);
    if (this.log.length > MAX_LOG) this.trimLog();
    this.notify();
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

  /** The picture as it was right after message `seq`: a separate model, for time travel. */
  at(seq: number): Model {
    const past = new Model(false);
    const end = Math.max(0, Math.min(this.log.length, seq - this.logBase + 1));
    past.nextSeq = this.logBase;
    past.apply(this.log.slice(0, end));
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
    return a ? this.pathOf(sessionId).join('/') : sessionId;
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

  // Folds the oldest half of the log into messages that rebuild the picture at that point.
  private trimLog(): void {
    const cut = Math.floor(this.log.length / 2);
    const head = new Model(false);
    head.apply(this.log.slice(0, cut));
    const picture: InspectMessage[] = [...head.definitions].map(([machineId, definition]) => ({ kind: 'definition', machineId, definition }));
    for (const a of head.actors.values()) {
      picture.push({ kind: 'actor', at: a.createdAt, sessionId: a.sessionId, id: a.id, parentSessionId: a.parentSessionId, machineId: a.machineId, src: a.src });
    }
    for (const a of head.actors.values()) {
      picture.push({ kind: 'transition', at: a.updatedAt, sessionId: a.sessionId, event: '', status: a.status, value: a.value, context: a.context, output: a.output, error: a.error });
    }
    this.logBase += cut - picture.length;
    this.log = [...picture, ...this.log.slice(cut)];
  }

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
    const a = m.source === undefined ? undefined : this.actors.get(m.source);
    if (!a) return;
    const p = m.payload;
    const fields = typeof p === 'object' && p !== null && !Array.isArray(p) ? p : {};
    const v = done ? fields.output : fields.error;
    if (a.machineId) {
      if (v === undefined) return;
      if (done) a.output = v;
      else a.error = v;
      this.changed.add(a.sessionId);
      return;
    }
    this.applyOne({ kind: 'transition', at: m.at, sessionId: a.sessionId, event: m.type, status: done ? 'done' : 'error', ...(v === undefined ? {} : done ? { output: v } : { error: v }) }, seq);
  }

  private addActor(m: ActorMessage): void {
    const existing = this.actors.get(m.sessionId);
    const view: ActorView = existing ?? {
      sessionId: m.sessionId, id: m.id, createdAt: m.at, updatedAt: m.at, status: 'active', activeNodeIds: [], lastEdges: [], version: 0, children: [],
    };
    Object.assign(view, { id: m.id, parentSessionId: m.parentSessionId, machineId: m.machineId, src: m.src });
    this.changed.add(m.sessionId);
    if (existing) return;
    this.structure++;
    this.actors.set(m.sessionId, view);
    const parent = m.parentSessionId ? this.actors.get(m.parentSessionId) : undefined;
    if (parent) {
      parent.children.push(m.sessionId);
      this.changed.add(parent.sessionId);
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
        const a = this.actors.get(m.sessionId);
        if (!a) return;
        const before = a.machineId ? valueText(a.value) : a.status;
        a.status = m.status;
        a.updatedAt = m.at;
        const def = a.machineId ? this.definitions.get(a.machineId) : undefined;
        if (m.value !== undefined) {
          a.value = m.value;
          a.activeNodeIds = m.activeNodeIds ?? (def ? activeNodeIdsOf(def, m.value) : []);
        }
        if (m.context !== undefined) a.context = m.context;
        else if (m.patch) a.context = applyContextPatch(a.context, m.patch);
        if (m.output !== undefined) a.output = m.output;
        if (m.error !== undefined) a.error = m.error;
        a.lastEdges = [];
        if (m.edges && def) {
          const all = transitionsOf(def);
          for (const i of m.edges) {
            const t = all[i];
            if (t) a.lastEdges.push(`${t.source}|${t.event}|${t.targets.join(',')}`);
          }
        }
        a.version++;
        this.changed.add(a.sessionId);
        // The alloc's row shows its tasks' states: a task changing changes its parent's row too.
        if (a.parentSessionId) this.changed.add(a.parentSessionId);
        const after = a.machineId ? valueText(a.value) : a.status;
        const statusNote = a.machineId && m.status !== 'active' ? ` (${m.status})` : '';
        // Hook and driver calls finishing show up as done/error events at their parent; only failures get a row.
        const worthARow = a.machineId ? before !== after || statusNote !== '' : m.status === 'error' && before !== 'error';
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
