/**
 * Nomad's hook interfaces (client/allocrunner/interfaces), TypeScript-shaped. Every method is optional and
 * async; its last argument is an AbortSignal that fires on kill or shutdown. Environments passed in are
 * immutable values built for that call: a hook must not keep one.
 */
import type { Observable } from 'rxjs';
import type { DriverNetwork, ExecResult, ResourceUsage } from '../drivers/controller.ts';
import type { AllocSpec, TaskDevice, TaskMount, TaskSpec, TaskState } from '../jobspec/types.ts';

/** The environment a hook sees: interpolated variables, frozen. */
export type HookEnv = Readonly<Record<string, string>>;

export interface TaskPrestartRequest {
  task: TaskSpec;
  taskDir: string;
  env: HookEnv;
  /** What this hook stored last time it ran (its `res.state`); hooks copy it forward themselves. */
  previousState?: unknown;
  /** The task's resources (Nomad's TaskResources): `cpu` (MHz), `cores`, `memoryMB`, `memoryMaxMB`; empty when unset. */
  resources: Readonly<Record<string, unknown>>;
  /**
   * The task's workload runs (Nomad's TaskLifecycle.IsRunning): a restored runner re-runs its prestart hooks
   * beside the workload it reattached to. What a hook finds changed is then acted on in the running task
   * (a template restarts it); otherwise the task has yet to start, and starts with it.
   */
  running?: boolean;
  /**
   * Records a task event now, while the hook still runs (Nomad's EventEmitter), so it is kept even if the
   * hook then fails (`Downloading Artifacts` before a failed download); absent outside a task runner.
   */
  emitEvent?(event: HookEvent): void;
}

/** A task event a hook records: Nomad's type string, with an optional message and details. */
export interface HookEvent {
  type: string;
  message?: string;
  details?: Record<string, string>;
}

/** Filled in by a prestart hook. `done` skips the hook on later starts while keeping its `env`. */
export interface TaskPrestartResponse {
  env?: Record<string, string>;
  /** Host paths the driver must mount into the task; kept for every later start. */
  mounts?: TaskMount[];
  /** Host devices the driver must expose to the task. */
  devices?: TaskDevice[];
  state?: unknown;
  done?: boolean;
  /** Task events to record, e.g. `{ type: 'Task Setup', message: 'Building Task Directory' }`. */
  events?: HookEvent[];
}

/** Runs commands inside a running task (Nomad's DriverExec); absent when the driver cannot. */
export interface DriverExec {
  exec(command: string, args: string[], opts: { timeout: number }, signal: AbortSignal): Promise<ExecResult>;
}

export interface TaskPoststartRequest {
  env: HookEnv;
  /** The started workload's network, when the driver reports one. */
  driverNetwork?: DriverNetwork;
  /** Exec into the running task (script checks); present only when the driver supports it. */
  driverExec?: DriverExec;
  task: TaskSpec;
  /** The driver's resource usage stream, when the driver reports stats. */
  stats?: (intervalMs: number) => Observable<ResourceUsage>;
  /**
   * The workload was spawned by an agent that died before saving the start, and this start found it instead
   * of spawning another: it predates what the prestart hooks made in this process (a template's new file).
   */
  adopted?: boolean;
}

export interface TaskExitedRequest {
  exitCode?: number;
  signal?: number;
  error?: string;
  task: TaskSpec;
}

export interface TaskUpdateRequest {
  alloc: AllocSpec;
  env: HookEnv;
  task: TaskSpec;
}

export interface TaskStopRequest {
  /** The state this hook stored during prestart, if prestart ever ran. Read-only. */
  existingState?: unknown;
  task: TaskSpec;
  taskState: TaskState;
}

/**
 * Where the stats hook hands a running task's usage stream (Nomad's AllocStatsReporter side of the
 * stats hook). The sink samples from `track` to `untrack`, as Nomad's reporter does, so the figures are
 * there when first read; it picks the interval (the hook's own when it passes none).
 */
export interface StatsSink {
  /** The task runs and `open(intervalMs?)` streams its resource usage; replaces an earlier stream of that task. */
  track(task: string, open: (intervalMs?: number) => Observable<ResourceUsage>): void;
  /** The task no longer runs: close its stream and forget its figures. */
  untrack(task: string): void;
}

/**
 * What a hook may ask of its task's runner while the task runs (Nomad's TaskLifecycle): given to hooks
 * when they are built (`taskHooks(task, lifecycle)`), since the asking happens outside any hook call
 * (a check that keeps failing, a template re-rendered). Each request becomes an event to the machines.
 */
export interface TaskLifecycle {
  /** Restarts the task through its restart path; `failure` counts it against the restart policy. */
  restart(req: { reason: string; failure: boolean }): void;
  /** Sends the task a signal (e.g. `SIGHUP`); `reason` is its Signaling event's message (Nomad's DisplayMessage). */
  signal(signal: string, reason?: string): void;
  /** Records a task event, e.g. `{ type: 'Template', message: 'Missing: nomadVar "x"' }`. */
  emit(event: { type: string; message?: string; details?: Record<string, string> }): void;
}

/** A task runner hook. Stop hooks run once when the task will never run again and must be idempotent. */
export interface TaskHook {
  readonly name: string;
  prestart?(req: TaskPrestartRequest, res: TaskPrestartResponse, abort: AbortSignal): Promise<void>;
  poststart?(req: TaskPoststartRequest, abort: AbortSignal): Promise<void>;
  preKilling?(req: { task: TaskSpec }, abort: AbortSignal): Promise<void>;
  exited?(req: TaskExitedRequest, abort: AbortSignal): Promise<void>;
  update?(req: TaskUpdateRequest, abort: AbortSignal): Promise<void>;
  stop?(req: TaskStopRequest, abort: AbortSignal): Promise<void>;
  shutdown?(req: { task: TaskSpec }, abort: AbortSignal): Promise<void>;
}

/** An alloc runner hook. Update hooks are serialized in order; preKill/shutdown/preTaskRestart are fire-and-forget. */
export interface AllocRunnerHook {
  readonly name: string;
  prerun?(allocEnv: HookEnv, abort: AbortSignal): Promise<void>;
  preKill?(abort: AbortSignal): Promise<void>;
  postrun?(abort: AbortSignal): Promise<void>;
  destroy?(abort: AbortSignal): Promise<void>;
  update?(req: { alloc: AllocSpec; allocEnv: HookEnv }, abort: AbortSignal): Promise<void>;
  preTaskRestart?(abort: AbortSignal): Promise<void>;
  shutdown?(abort: AbortSignal): Promise<void>;
}

/** A hook error that says how the task runner should treat it. */
export class HookError extends Error {
  readonly code = 'ErrHookFailed';
  constructor(
    message: string,
    /** Prestart only: whether the restart policy may retry the task. */
    readonly recoverable = true,
    /** The task event type to record instead of `Task hook failed`. */
    readonly eventType?: string,
    /** Details of that event (Nomad's `download_error` of a failed artifact download). */
    readonly details?: Record<string, string>,
  ) {
    super(message);
    this.name = 'HookError';
  }
}
