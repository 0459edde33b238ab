/**
 * The shape of a hook call as the machines see it: which phase, which hook, what goes in and comes out.
 * The runtime turns these into calls on real TaskHook / AllocRunnerHook objects.
 */
import type { AllocSpec, ExitResult, TaskDevice, TaskEvent, TaskMount, TaskSpec, TaskState } from './model.ts';

/** Nomad's task hook phases (interfaces/task_lifecycle.go). */
export type TaskHookPhase = 'prestart' | 'poststart' | 'preKilling' | 'exited' | 'update' | 'stop' | 'shutdown';

/** Names of the hooks implementing each phase, in call order. */
export type HookPlan = Partial<Record<TaskHookPhase, string[]>>;

/** What one task hook call gets: the phase, the hook, the task and what earlier hooks and the workload left. */
export interface HookCallInput {
  phase: TaskHookPhase;
  hook: string;
  allocId: string;
  task: TaskSpec;
  /** Env gathered from earlier prestart hooks. */
  hookEnv: Record<string, string>;
  /** The hook's own stored prestart data (Nomad's PreviousState / ExistingState). */
  previousState?: unknown;
  exit?: ExitResult;
  alloc?: AllocSpec;
  taskState: TaskState;
}

/** What a hook call returns; only prestart's env/state/done are kept by the machine. */
export interface HookCallOutput {
  env?: Record<string, string>;
  state?: unknown;
  done?: boolean;
  /** Prestart only: host paths and devices the driver must give the task (Nomad's hookResources). */
  mounts?: TaskMount[];
  devices?: TaskDevice[];
  /** Events the hook emits (e.g. Task Setup, Downloading). */
  events?: Omit<TaskEvent, 'time' | 'displayMessage'>[];
}

/** What the machine reads from a hook's or driver's error. */
export interface HookErrorInfo {
  message: string;
  /** Prestart and start errors go through the restart decision; unrecoverable ones end the task. */
  recoverable?: boolean;
  /** A task event type to record instead of `Task hook failed` (e.g. `Failed Validation`). */
  eventType?: string;
  /** Details for that event (e.g. Nomad's `download_error`). */
  details?: Record<string, string>;
}

/** The child actor id of one hook call, e.g. `prestart:task_dir`. */
export function hookActorId(phase: string, hook: string): string {
  return `${phase}:${hook}`;
}

/** Reads the error carried by an `xstate.error.actor.*` event into plain data. */
export function childErrorOf(event: unknown): HookErrorInfo {
  const err = (event as { error?: unknown }).error;
  if (err && typeof err === 'object') {
    const e = err as { message?: unknown; recoverable?: unknown; eventType?: unknown; details?: unknown };
    const details = stringMapOf(e.details);
    return {
      message: typeof e.message === 'string' ? e.message : String(err),
      recoverable: typeof e.recoverable === 'boolean' ? e.recoverable : undefined,
      eventType: typeof e.eventType === 'string' ? e.eventType : undefined,
      ...(details && { details }),
    };
  }
  return { message: String(err) };
}

/** A plain map of strings copied as data, or undefined when `v` is not one (an error's details stay JSON). */
function stringMapOf(v: unknown): Record<string, string> | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const entries = Object.entries(v).filter(([, x]) => typeof x === 'string') as [string, string][];
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}
