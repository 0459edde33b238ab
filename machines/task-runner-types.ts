/**
 * The task runner's types: what it is started with (input), what it keeps (context), what it hears
 * (events) and the shapes of its driver calls. Data only; the machine is in task-runner.ts.
 */
import type { HookPlan, TaskHookPhase } from './hook-calls.ts';
import type { RestartDecisionKind, RestartTrackerState } from './restart-tracker.ts';
import type { AllocSpec, ExitResult, JobType, RestartPolicy, TaskDevice, TaskEvent, TaskMount, TaskSpec, TaskState } from './model.ts';

/** A driver's reattach handle, as JSON. */
export type DriverHandleData = Record<string, unknown>;

/** Per-hook prestart memory (Nomad's LocalState.Hooks): Done hooks are skipped but their env is re-applied. */
export interface PrestartHookState {
  done: boolean;
  data?: unknown;
  env?: Record<string, string>;
  /** What the hook asked the driver to mount and expose; kept for every later start. */
  mounts?: TaskMount[];
  devices?: TaskDevice[];
}

/** A command that did not apply, answered instead of dropped (Nomad returns ErrTaskNotRunning and the like). */
export interface CommandRejection {
  command: string;
  code: 'ErrTaskNotRunning' | 'ErrTaskKilling' | 'ErrTaskRunComplete' | 'ErrSignalFailed';
  message: string;
  time: number;
}

/** What a task runner is started with (`createActor(taskRunnerMachine, { input })`): plain data only. */
export interface TaskRunnerInput {
  allocId: string;
  task: TaskSpec;
  jobType: JobType;
  /** The group's restart policy; the task's own overrides it. */
  groupRestart?: RestartPolicy;
  hooks?: HookPlan;
  /** Whether the coordinator's gate is open at start (standalone tasks: true). */
  gateOpen?: boolean;
  /** The client's max_kill_timeout cap. */
  maxKillTimeout?: number;
  /** Seed of the restart jitter's random source, so runs are reproducible. */
  seed?: number;
  /** Restored TaskState (from a persisted alloc); a new pending one with Received otherwise. */
  taskState?: TaskState;
  /**
   * Whether a dead task waits for its alloc to force-restart or kill it (Nomad's ALLOC_RESTART). True under
   * an alloc runner; a standalone task has no alloc, so it goes straight to its stop hooks.
   */
  parkWhenDead?: boolean;
}

/** What a task runner was started with and keeps unchanged: its allocation and its policies. */
export interface TaskRunnerSettings {
  allocId: string;
  jobType: JobType;
  restartPolicy: RestartPolicy;
  maxKillTimeout: number;
  parkWhenDead: boolean;
}

/** The task's runs of its workload: the start count, the live workload's handle, and what ended the run. */
export interface TaskRun {
  /** How many times the driver was asked to start the task (Nomad's task ID suffix): names the attempt. */
  attempt: number;
  handle?: DriverHandleData;
  /** Why the workload is being stopped: a kill, or a restart (no shutdown delay, no Killing event). */
  stopReason?: 'kill' | 'restart';
  /** Restart-tracker flags gathered since the last decision. */
  restartRequest?: { failure: boolean };
  startError?: { recoverable: boolean; message: string };
  lastExit?: ExitResult;
  /**
   * Resumed from a snapshot while not starting or running: the dead agent may have begun the next start
   * (attempt + 1) after its last save, so a kill first asks the driver for that start's workload.
   * Cleared by the next start, which finds that workload itself.
   */
  restoredBeforeStart?: boolean;
}

/** The restart tracker's memory: its window, the jitter's seed and its last decision. */
export interface TaskRestarts {
  tracker: RestartTrackerState;
  seed: number;
  decision?: { kind: RestartDecisionKind; delay: number; reason: string };
}

/** Alloc updates the task has heard of. */
export interface TaskUpdates {
  /** Update hooks are due for the newest alloc. */
  queued: boolean;
  /** The newest alloc the task has heard of. */
  alloc?: AllocSpec;
  /** The alloc the current round of update hooks sees: one request per round, as in Nomad. */
  updating?: AllocSpec;
}

/**
 * What a task runner keeps: JSON data, persisted with the alloc and shown by the inspector. Its top level
 * stays small (under 20 keys): XState copies the context with Object.assign on every assign, and V8 turns
 * an object built that way with 20 or more properties into a slow dictionary (20 times slower to copy).
 */
export interface TaskRunnerContext {
  settings: TaskRunnerSettings;
  task: TaskSpec;
  hooks: HookPlan;
  taskState: TaskState;
  restarts: TaskRestarts;
  run: TaskRun;
  updates: TaskUpdates;
  gateOpen: boolean;
  /** Nomad's killCtx: once cancelled the task never runs again. */
  killRequested: boolean;
  hookStates: Record<string, PrestartHookState>;
  /** Env merged from prestart responses (last writer wins). Interpolated values, never an env builder. */
  hookEnv: Record<string, string>;
  /** Which hook each phase is at. */
  cursor: Partial<Record<TaskHookPhase, number>>;
  /** The absolute clock time the current durable delay ends. */
  deadline?: number;
  setupDone: boolean;
  runComplete: boolean;
  signalSeq: number;
  rejections: CommandRejection[];
}

/** The events a task runner hears: the public commands (CONTRACT.md), its alloc's, and its children's answers. */
export type TaskRunnerEvent =
  /** `quiet`: no Killing event (a task of a server-terminal alloc that never starts, as Nomad's shouldShutdown). */
  | { type: 'KILL'; event?: TaskEvent; quiet?: boolean }
  | { type: 'RESTART'; failure?: boolean; force?: boolean; event?: TaskEvent }
  | { type: 'UPDATE'; alloc: AllocSpec }
  /** `event`: the Signaling event to record (a template's "Template re-rendered"); else one naming the signal. */
  | { type: 'SIGNAL'; signal: string; event?: TaskEvent }
  | { type: 'SHUTDOWN' }
  /** From the alloc runner: the coordinator's gate for this task (level-triggered). */
  | { type: 'GATE'; open: boolean }
  /** From the alloc runner: append an event (Nomad's EmitEvent), e.g. Sibling Task Failed. */
  | { type: 'EMIT_EVENT'; event: TaskEvent }
  /** From the alloc runner: setup failed; the task fails and never runs (Nomad's MarkFailedKill). */
  | { type: 'FAIL_SETUP'; reason: string }
  /**
   * From the runtime, once after resuming from a persisted snapshot: a running task re-runs its prestart
   * hooks that are not Done and its poststart hooks, as Nomad's task runner does on restore.
   */
  | { type: 'RESTORED' }
  /** Completion of a spawned child (hook calls, signals), matched by the `xstate.*.actor.*` wildcards. */
  | { type: `xstate.done.actor.${string}`; output?: unknown }
  | { type: `xstate.error.actor.${string}`; error?: unknown };

/** What `driver:start` reports: the reattach handle of the started workload. */
export interface DriverStartOutput {
  handle?: DriverHandleData;
}

/** What every driver call gets: which task of which alloc, its prestart env and its reattach handle. */
export interface DriverCallInput {
  allocId: string;
  task: TaskSpec;
  hookEnv: Record<string, string>;
  handle?: DriverHandleData;
  /** Which start this is (`startAttempt`): the same number when a start runs again after a crash. */
  attempt?: number;
  /** Mounts and devices from the prestart hooks, in hook order (driver:start only). */
  mounts?: TaskMount[];
  devices?: TaskDevice[];
}

/** `driver:shutdown`: the kill signal, and how long the driver may wait before it escalates. */
export interface DriverShutdownInput extends DriverCallInput {
  signal: string;
  timeout: number;
  /** Why: a restart the runner was asked for, or a kill. */
  reason?: 'kill' | 'restart';
}

/** What `driver:reap` reports: the exit of the unrecorded start's workload it stopped, if there was one. */
export interface DriverReapOutput {
  exit?: ExitResult;
}

/** Emitted when a command does not apply, so callers hear about it. */
export type TaskRunnerEmitted = { type: 'command.rejected'; rejection: CommandRejection };
