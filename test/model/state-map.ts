/**
 * The one place the model and property tests name the machines' states. Everything else asserts through the
 * public API (getState(), events$, persist()) and these top-level names; if the machines are reshaped, only
 * this table changes.
 */

/** The top-level state of a snapshot value (`{ running: {...} }` → `running`). */
export function topState(value: unknown): string {
  if (typeof value === 'string') return value;
  return Object.keys(value as Record<string, unknown>)[0]!;
}

/** The task runner's top-level states the model states stand for. */
export const TASK_STATES = {
  /** Waiting on its gate, its prestart hooks, the driver's start, or a restart delay. */
  pending: 'pending',
  running: 'running',
  killing: 'killing',
  exited: 'exited',
  /** Dead for good (parked, stop hooks, stopped). */
  terminal: 'terminal',
  /** Agent shutdown: the workload was left running. */
  detached: 'detached',
} as const;

/** The alloc runner's top-level states. */
export const ALLOC_STATES = {
  prerun: 'prerun',
  running: 'running',
  postrun: 'postrun',
  terminal: 'terminal',
  destroyed: 'destroyed',
  detached: 'detached',
} as const;
