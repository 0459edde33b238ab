/**
 * What `nomad alloc status` shows, read from an allocation actor's context: the alloc's client status and,
 * per task, its state, whether it failed, its restarts and its last event. Other root actors (a plain XState
 * machine inspected on its own) have none of it and are shown by their state value.
 */
import type { JsonValue } from '../../src/inspect/protocol.ts';
import type { ActorView } from './model.ts';

/** One of a task's events, as Nomad's Recent Events table shows it. */
export interface TaskEventLine {
  type: string;
  time?: number;
  message?: string;
}

/** One task's line, as Nomad's task table shows it. */
export interface TaskSummary {
  name: string;
  state: string;
  failed: boolean;
  restarts: number;
  lastEvent?: TaskEventLine;
  /** Oldest first, as the alloc context keeps them (Nomad keeps the last 10). */
  events: TaskEventLine[];
}

/** One service check's line in the Checks table (the alloc runner's `checks` context, by check ID). */
export interface CheckSummary {
  id: string;
  name: string;
  service: string;
  /** The task of a task-level service; absent for a group service. */
  task?: string;
  status: string;
  output: string;
  time?: number;
}

/** An allocation's line: its client status, its tasks and its service checks. */
export interface AllocSummary {
  clientStatus: string;
  tasks: TaskSummary[];
  checks: CheckSummary[];
}

const obj = (v: JsonValue | undefined): Record<string, JsonValue> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? v : undefined;

// Contexts are never changed in place (a patch copies what it changes), so a summary made from one holds
// for as long as the actor keeps that context: the list redraws 500 allocations without re-reading them.
const summaries = new WeakMap<object, AllocSummary | null>();
const names = new WeakMap<object, AllocNames>();

/** The Nomad view of an alloc actor, or undefined for actors that are not allocations. */
export function allocSummaryOf(a: ActorView): AllocSummary | undefined {
  const ctx = obj(a.context);
  if (!ctx) return undefined;
  let s = summaries.get(ctx);
  if (s === undefined) {
    s = summaryOf(ctx) ?? null;
    summaries.set(ctx, s);
  }
  return s ?? undefined;
}

function summaryOf(ctx: Record<string, JsonValue>): AllocSummary | undefined {
  const states = obj(ctx?.taskStates);
  if (!states || typeof ctx.clientStatus !== 'string') return undefined;
  const tasks: TaskSummary[] = [];
  for (const [name, raw] of Object.entries(states)) {
    const ts = obj(raw);
    if (!ts) continue;
    const events = (Array.isArray(ts.events) ? ts.events : []).map(obj).filter((e) => e !== undefined).map(eventLine);
    const last = events[events.length - 1];
    tasks.push({
      name,
      state: typeof ts.state === 'string' ? ts.state : '?',
      failed: ts.failed === true,
      restarts: typeof ts.restarts === 'number' ? ts.restarts : 0,
      ...(last ? { lastEvent: last } : {}),
      events,
    });
  }
  return { clientStatus: ctx.clientStatus, tasks, checks: checksOf(obj(ctx.checks)) };
}

const str = (v: JsonValue | undefined): string => (typeof v === 'string' ? v : '');

/** A task event's line: Nomad's UI shows its display message (the event's `message` only when there is none). */
function eventLine(e: Record<string, JsonValue>): TaskEventLine {
  const message = str(e.displayMessage) || str(e.message);
  return { type: String(e.type ?? ''), ...(typeof e.time === 'number' && { time: e.time }), ...(message && { message }) };
}

/** An allocation's names as Nomad shows them. */
export interface AllocNames {
  /** `job.group[index]`; `job.group` when the spec carries no index (the agent's allocations: see nameOf). */
  name: string;
  /** The first 8 characters of the ID (Nomad's short alloc ID). */
  shortId: string;
  id: string;
  job: string;
}

/**
 * The names of an alloc actor: from its context's spec (job, group, and `index` when the spec has one).
 * `allocrun run` names allocations `<job>-<group>-<index>`, which gives the index back.
 */
export function allocNamesOf(a: ActorView): AllocNames {
  const ctx = obj(a.context);
  const cached = ctx && names.get(ctx);
  if (cached && cached.id === a.id) return cached;
  const made = namesOf(a);
  if (ctx) names.set(ctx, made);
  return made;
}

function namesOf(a: ActorView): AllocNames {
  const spec = obj(obj(a.context)?.alloc);
  const job = str(spec?.job);
  const group = str(spec?.group);
  let index: number | undefined = typeof spec?.index === 'number' ? spec.index : undefined;
  if (index === undefined && job && group && a.id.startsWith(`${job}-${group}-`)) {
    const n = Number(a.id.slice(job.length + group.length + 2));
    if (Number.isInteger(n) && n >= 0) index = n;
  }
  const name = job && group ? `${job}.${group}${index === undefined ? '' : `[${index}]`}` : a.id;
  return { name, shortId: a.id.slice(0, 8), id: a.id, job };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** A task event's time as Nomad's UI prints it (`Nov 26, '26 09:40:01 +0000`); `+1.234s` on simulated clocks. */
export function eventTimeText(at: number | undefined, origin: number | undefined): string {
  if (at === undefined || at <= 1e11) return timeText(at, origin);
  const d = new Date(at);
  const two = (n: number) => (n < 10 ? `0${n}` : String(n));
  const off = -d.getTimezoneOffset();
  const zone = `${off < 0 ? '-' : '+'}${two(Math.floor(Math.abs(off) / 60))}${two(Math.abs(off) % 60)}`;
  return `${MONTHS[d.getMonth()]} ${two(d.getDate())}, '${two(d.getFullYear() % 100)} ${timeText(at, origin)} ${zone}`;
}

/** The checks an alloc context reports, ordered by task (group services first), service and name. */
function checksOf(raw: Record<string, JsonValue> | undefined): CheckSummary[] {
  const out: CheckSummary[] = [];
  for (const [id, v] of Object.entries(raw ?? {})) {
    const c = obj(v);
    if (!c) continue;
    out.push({
      id,
      name: str(c.name),
      service: str(c.service),
      ...(typeof c.task === 'string' && { task: c.task }),
      status: str(c.status) || '?',
      output: str(c.output),
      ...(typeof c.time === 'number' && { time: c.time }),
    });
  }
  const key = (c: CheckSummary) => `${c.task ?? ''}\u0000${c.service}\u0000${c.name}\u0000${c.id}`;
  return out.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** A timestamp as the page shows it: wall-clock time for real clocks, `+12.345s` for simulated ones. */
export function timeText(at: number | undefined, origin: number | undefined): string {
  if (at === undefined) return '';
  // Simulated clocks start near 0; real ones are epoch milliseconds.
  // Formatted by hand: toLocaleTimeString builds an Intl formatter per call, which costs more than the row.
  if (at > 1e11) {
    const d = new Date(at);
    const two = (n: number) => (n < 10 ? `0${n}` : String(n));
    return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
  }
  // A simulated clock's time against a wall-clock origin (the stream stamps real time): count from zero.
  const from = origin !== undefined && origin <= 1e11 ? origin : 0;
  return `+${((at - from) / 1000).toFixed(3)}s`;
}
