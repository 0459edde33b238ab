/**
 * The lifecycle data model (Nomad's structs, TypeScript-shaped). Plain JSON data only: these values live in
 * machine context, are persisted and are shown by the inspector.
 */

export type JobType = 'service' | 'batch' | 'system' | 'sysbatch';

/** Nomad's restart block. Durations are milliseconds. */
export interface RestartPolicy {
  attempts: number;
  interval: number;
  delay: number;
  mode: 'fail' | 'delay';
}

export type LifecycleHookName = 'prestart' | 'poststart' | 'poststop';

/** A task's `lifecycle` block; absent means a main task. */
export interface TaskLifecycle {
  hook: LifecycleHookName;
  sidecar?: boolean;
}

export interface LogConfig {
  maxFiles: number;
  maxFileSize: number;
}

/** One task of an allocation, as the runner needs it. Durations are milliseconds. */
export interface TaskSpec {
  name: string;
  driver: string;
  config: Record<string, unknown>;
  env?: Record<string, string>;
  meta?: Record<string, string>;
  leader?: boolean;
  lifecycle?: TaskLifecycle;
  restart?: RestartPolicy;
  killTimeout?: number;
  killSignal?: string;
  shutdownDelay?: number;
  logs?: LogConfig;
  resources?: Record<string, unknown>;
}

/** One instance of a task group: what an alloc runner runs. */
export interface AllocSpec {
  id: string;
  job: string;
  group: string;
  type: JobType;
  namespace?: string;
  meta?: Record<string, string>;
  restart?: RestartPolicy;
  shutdownDelay?: number;
  tasks: TaskSpec[];
  desiredStatus?: 'run' | 'stop';
  /** Nomad's AllocModifyIndex: an older update never displaces a newer one. */
  modifyIndex?: number;
}

/** A task event with Nomad's type strings; `time` is milliseconds on the runner's clock. */
export interface TaskEvent {
  type: string;
  time: number;
  message?: string;
  displayMessage: string;
  details?: Record<string, string>;
  failsTask?: boolean;
  exitCode?: number;
  signal?: number;
  restartReason?: string;
  startDelay?: number;
  killTimeout?: number;
}

export type TaskStatus = 'pending' | 'running' | 'dead';

/** Nomad's TaskState. Every event is kept (no ring of 10); views may truncate. */
export interface TaskState {
  state: TaskStatus;
  failed: boolean;
  restarts: number;
  lastRestart?: number;
  startedAt?: number;
  finishedAt?: number;
  events: TaskEvent[];
}

/** How a workload ended, as a driver reports it. */
export interface ExitResult {
  exitCode: number;
  /** Signal number that ended the process, 0 if none. */
  signal: number;
  oomKilled?: boolean;
  /** A driver-level error message, if the exit was not a plain process exit. */
  err?: string;
}

export type ClientStatus = 'pending' | 'running' | 'complete' | 'failed';

/** What an alloc runner reports: Nomad's client status and every task's state. */
export interface AllocState {
  clientStatus: ClientStatus;
  taskStates: Record<string, TaskState>;
}
