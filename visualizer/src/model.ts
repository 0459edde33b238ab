/**
 * The page's picture of the system, rebuilt from protocol messages: definitions, the actor tree with each
 * actor's latest state, and the timeline. Live and replay feed it the same way.
 */
import type { ActorStatus, EdgeRef, InspectMessage, JsonValue, MachineDef, StateValue } from '../../src/inspect/protocol.ts';

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
  /** The edges taken by the latest transition, for the animation. */
  lastEdges: EdgeRef[];
  /** Counts transitions, so views can tell a new one from a repaint. */
  version: number;
  children: string[];
}

/** A row of the timeline: an event delivered, or an actor's state or status changing. */
export type TimelineEntry =
  | { kind: 'event'; at: number; target: string; source?: string; type: string; payload?: JsonValue }
  | { kind: 'state'; at: number; sessionId: string; from?: string; to: string; event: string };

/** Views register here and are told once per applied batch. */
export type ModelListener = (m: Model) => void;

// The page keeps more history than a late joiner gets, but not without bound.
const MAX_TIMELINE = 5_000;

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
  private readonly listeners = new Set<ModelListener>();

  subscribe(fn: ModelListener): void {
    this.listeners.add(fn);
  }

  /** Forgets everything (replay restarts from the beginning). */
  reset(): void {
    this.definitions.clear();
    this.actors.clear();
    this.roots.length = 0;
    this.timeline = [];
    this.origin = undefined;
    this.notify();
  }

  /** Applies messages in order, then tells the views once. */
  apply(messages: readonly InspectMessage[]): void {
    const before = this.timeline.length;
    for (const m of messages) this.applyOne(m);
    // A late joiner's picture lists events before the latest transitions; put the rows back in time order.
    const t = this.timeline;
    for (let i = Math.max(1, before); i < t.length; i++) {
      if (t[i]!.at < t[i - 1]!.at) {
        this.timeline = t.map((e, idx) => [e, idx] as const).sort((a, b) => a[0].at - b[0].at || a[1] - b[1]).map(([e]) => e);
        break;
      }
    }
    if (this.timeline.length > MAX_TIMELINE) this.timeline = this.timeline.slice(-MAX_TIMELINE);
    this.notify();
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

  private notify(): void {
    for (const fn of this.listeners) fn(this);
  }

  private applyOne(m: InspectMessage): void {
    if ('at' in m && this.origin === undefined) this.origin = m.at;
    switch (m.kind) {
      case 'definition':
        this.definitions.set(m.machineId, m.definition);
        return;
      case 'actor': {
        const existing = this.actors.get(m.sessionId);
        const view: ActorView = existing ?? {
          sessionId: m.sessionId, id: m.id, createdAt: m.at, status: 'active', activeNodeIds: [], lastEdges: [], version: 0, children: [],
        };
        Object.assign(view, { id: m.id, parentSessionId: m.parentSessionId, machineId: m.machineId, src: m.src });
        if (existing) return;
        this.actors.set(m.sessionId, view);
        const parent = m.parentSessionId ? this.actors.get(m.parentSessionId) : undefined;
        if (parent) parent.children.push(m.sessionId);
        else this.roots.push(m.sessionId);
        return;
      }
      case 'event':
        // A promise actor resolving tells itself so; its done/error event to the parent already says it.
        if (m.source === m.target) return;
        this.timeline.push({ kind: 'event', at: m.at, target: m.target, source: m.source, type: m.type, payload: m.payload });
        return;
      case 'transition': {
        const a = this.actors.get(m.sessionId);
        if (!a) return;
        const before = a.machineId ? valueText(a.value) : a.status;
        a.status = m.status;
        if (m.value !== undefined) a.value = m.value;
        if (m.activeNodeIds) a.activeNodeIds = m.activeNodeIds;
        if (m.context !== undefined) a.context = m.context;
        if (m.output !== undefined) a.output = m.output;
        if (m.error !== undefined) a.error = m.error;
        a.lastEdges = m.edges ?? [];
        a.version++;
        const after = a.machineId ? valueText(a.value) : a.status;
        const statusNote = a.machineId && m.status !== 'active' ? ` (${m.status})` : '';
        // Hook and driver calls finishing show up as done/error events at their parent; only failures get a row.
        const worthARow = a.machineId ? before !== after || statusNote !== '' : m.status === 'error';
        if (worthARow) {
          this.timeline.push({ kind: 'state', at: m.at, sessionId: m.sessionId, from: before || undefined, to: after + statusNote, event: m.event });
        }
        return;
      }
    }
  }
}
