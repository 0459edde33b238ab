/**
 * The replay lines of a recording: besides the inspection stream (protocol.ts), a recording made with
 * `run --record` holds every input that crossed into the machines (commands, driver and hook results,
 * timer firings, each with the machine clock's time) and every machine step they caused, so
 * `allocrun replay --check` can re-drive today's machines with the same inputs and compare. Plain types
 * and pure helpers: the page reads `divergence` lines too.
 */

/**
 * The replay format, in the header's `replay` field. Bumped when a line changes meaning; a recording of
 * another version is refused with a clear error instead of being misread.
 */
export const REPLAY_FORMAT_VERSION = 1;

/** An actor's id path from its root: `['a1']`, `['a1', 'web']`, `['a1', 'web', 'driver:wait']`. */
export type ActorPath = string[];

/** A root machine actor was created (`createAllocRunner`, `createTaskRunner`): what it was created from. */
export interface ReplayRootLine {
  kind: 'replay-root';
  /** The machine clock when the actor was created (its initial context reads it). */
  at: number;
  id: string;
  /** The machine's id: `alloc` or `task`. */
  machine: string;
  /** The actor's input (encoded, see `encodeReplayValue`). */
  input?: unknown;
  /** The persisted snapshot it was restored from, when it was. */
  snapshot?: unknown;
  /**
   * False when the runner was not given the recording's `machineClock`: its clock readings were not
   * pinned to the inputs' times, so a replay may differ from it by a tick in the times it records.
   */
  pinnedClock?: false;
}

/**
 * One input: `command` (an event sent from outside the machines, the root's start `xstate.init` included),
 * `result` (an invoked promise's done or error event: a driver call, a hook, a sleep), `timer` (a delayed
 * event the clock fired, `due` when it was due).
 */
export interface ReplayInputLine {
  kind: 'replay-input';
  at: number;
  input: 'command' | 'result' | 'timer';
  /** The machine actor it was delivered to. */
  to: ActorPath;
  /** The event, encoded (errors as `{ $error }`). */
  event: { type: string; [key: string]: unknown };
  /** For results: the child whose result it is, and its implementation's name (`driverWait`, `hook`). */
  from?: ActorPath;
  src?: string;
  due?: number;
}

/**
 * One machine step (a macrostep's snapshot): the actor, the event that caused it, the state value and
 * status after it; `taskState` (task runners) and `clientStatus` (allocations) when they changed.
 */
export interface ReplayStepLine {
  kind: 'replay-step';
  to: ActorPath;
  event: string;
  value?: unknown;
  status: string;
  taskState?: unknown;
  /** In files: the TaskState as what changed since the actor's last one (see `compactStep`). */
  taskStateDelta?: TaskStateDelta;
  clientStatus?: string;
}

/** A TaskState as a change to the actor's previous one: top-level fields set or unset, events appended. */
export interface TaskStateDelta {
  set?: Record<string, unknown>;
  unset?: string[];
  append?: unknown[];
}

type TaskStateShape = Record<string, unknown> & { events?: unknown[] };

/**
 * For the writer: a step line whose TaskState only appended events and changed fields of the actor's
 * previous one is written as that delta (a TaskState's events only grow, so whole copies would make a long
 * run's file quadratic). Keeps the previous TaskState per actor.
 */
export function stepCompactor(): (line: ReplayLine) => ReplayLine {
  const last = new Map<string, TaskStateShape>();
  return (line) => {
    if (line.kind !== 'replay-step' || line.taskState === undefined) return line;
    const key = line.to.join('/');
    const next = line.taskState as TaskStateShape;
    const prev = last.get(key);
    last.set(key, next);
    const prevEvents = prev?.events ?? [];
    const nextEvents = next.events ?? [];
    if (!prev || nextEvents.length < prevEvents.length || prevEvents.some((e, i) => nextEvents[i] !== e)) return line;
    const delta: TaskStateDelta = {};
    for (const k of Object.keys(next)) if (k !== 'events' && next[k] !== prev[k]) (delta.set ??= {})[k] = next[k];
    for (const k of Object.keys(prev)) if (k !== 'events' && !(k in next)) (delta.unset ??= []).push(k);
    if (nextEvents.length > prevEvents.length) delta.append = nextEvents.slice(prevEvents.length);
    const { taskState: _whole, ...rest } = line;
    return { ...rest, taskStateDelta: delta };
  };
}

/** For readers: `lines` with every step's TaskState whole again (undoing `stepCompactor`); other lines as they are. */
export function expandSteps(lines: readonly unknown[]): unknown[] {
  const last = new Map<string, TaskStateShape>();
  return lines.map((l) => {
    const line = l as ReplayStepLine;
    if (line?.kind !== 'replay-step') return l;
    const key = line.to.join('/');
    if (line.taskState !== undefined) {
      last.set(key, line.taskState as TaskStateShape);
      return l;
    }
    if (!line.taskStateDelta) return l;
    const { taskStateDelta: d, ...rest } = line;
    const whole: TaskStateShape = { ...(last.get(key) ?? {}), ...(d.set ?? {}) };
    for (const k of d.unset ?? []) delete whole[k];
    whole.events = [...(last.get(key)?.events ?? []), ...(d.append ?? [])];
    last.set(key, whole);
    return { ...rest, taskState: whole };
  });
}

/** Where a checked replay first differed from its recording (`replay --check`; shown by the page). */
export interface DivergenceLine {
  kind: 'divergence';
  /** The machine clock of the input after which it showed (the timeline's position). */
  at: number;
  actor: string;
  /** The step's index among all recorded steps, and among the actor's own. */
  step: number;
  actorStep: number;
  /** The input just fed, by index among the recording's inputs. */
  input?: { index: number; input: string; type: string; to: string };
  recorded?: string;
  now?: string;
  message: string;
  /** The machine source the replay's step went through, when known (`machines/task-runner.ts:313`). */
  location?: string;
}

/** Any replay line. */
export type ReplayLine = ReplayRootLine | ReplayInputLine | ReplayStepLine;

/** Whether a parsed line is a replay line. */
export function isReplayLine(m: unknown): m is ReplayLine {
  const kind = (m as { kind?: unknown } | null)?.kind;
  return kind === 'replay-root' || kind === 'replay-input' || kind === 'replay-step';
}

/**
 * JSON.stringify's replacer for replay lines: errors keep their name, message and own fields (a driver's
 * `recoverable`, `eventType`, `code`) as `{ $error: {...} }`, which `reviveReplayValue` turns back into an Error.
 */
export function encodeReplayValue(this: unknown, _key: string, value: unknown): unknown {
  if (value instanceof Error) {
    const fields: Record<string, unknown> = { ...(value as unknown as Record<string, unknown>), name: value.name, message: value.message };
    delete fields.stack;
    return { $error: fields };
  }
  return value;
}

/** JSON.parse's reviver undoing `encodeReplayValue`. */
export function reviveReplayValue(_key: string, value: unknown): unknown {
  if (value && typeof value === 'object' && '$error' in value && Object.keys(value).length === 1) {
    const fields = (value as { $error: Record<string, unknown> }).$error;
    const err = new Error(String(fields.message ?? ''));
    Object.assign(err, fields);
    return err;
  }
  return value;
}

/**
 * Why a recording whose header is `header` cannot be checked by this allocrun (undefined when it can): a
 * recording without replay lines (made before they existed) or of another replay format version.
 */
export function replayFormatProblem(header: unknown): string | undefined {
  const h = header as { kind?: unknown; replay?: unknown } | null;
  if (typeof h !== 'object' || h === null || h.kind !== 'recording') {
    return `it does not start with a recording header (record one with 'allocrun run <jobfile> --record FILE')`;
  }
  const ours = `this allocrun checks replay format version ${REPLAY_FORMAT_VERSION}`;
  if (h.replay === undefined) return `the recording has no replay inputs (made by an older allocrun, replay format version 0); ${ours}: record the run again`;
  if (typeof h.replay !== 'number') return `the recording's header has a replay format version that is not a number (${JSON.stringify(h.replay)}); ${ours}`;
  if (h.replay > REPLAY_FORMAT_VERSION) return `the recording was made with replay format version ${h.replay}, by a newer allocrun; ${ours}: check it with the allocrun that recorded it`;
  if (h.replay < REPLAY_FORMAT_VERSION) return `the recording was made with replay format version ${h.replay}, by an older allocrun; ${ours}: record the run again`;
  return undefined;
}

/** A state value as one line: `running`, `running.poststart.done`, `{a: x, b: y}` for parallel states. */
export function formatStateValue(value: unknown): string {
  if (value === undefined) return '(none)';
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 1) return `${entries[0]![0]}.${formatStateValue(entries[0]![1])}`;
  return `{${entries.map(([k, v]) => `${k}.${formatStateValue(v)}`).join(', ')}}`;
}

/** What a replay is judged on, per actor path (`a1/web`): its steps as `event → state`, its last TaskState, its last client status. */
export interface ReplaySummary {
  transitions: Record<string, string[]>;
  taskStates: Record<string, unknown>;
  clientStatuses: Record<string, string>;
}

/** The summary of a list of steps: what `--to-test` writes down and the generated test compares against. */
export function summarizeSteps(steps: readonly ReplayStepLine[]): ReplaySummary {
  const out: ReplaySummary = { transitions: {}, taskStates: {}, clientStatuses: {} };
  for (const s of steps) {
    const key = s.to.join('/');
    (out.transitions[key] ??= []).push(`${s.event} → ${formatStateValue(s.value)}${s.status === 'active' ? '' : ` (${s.status})`}`);
    if (s.taskState !== undefined) out.taskStates[key] = s.taskState;
    if (s.clientStatus !== undefined) out.clientStatuses[key] = s.clientStatus;
  }
  return out;
}

/** `value` with every `{ $error }` turned back into an Error (for lines parsed without the reviver, or written into a test). */
export function reviveDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reviveDeep);
  if (value && typeof value === 'object' && !(value instanceof Error)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = reviveDeep(v);
    return reviveReplayValue('', out);
  }
  return value;
}
