/**
 * The driver contract: SwarmKit's task `Controller`, which is also what the Nomad-style task runner drives,
 * so every driver works under both. Every method is bounded by its AbortSignal and idempotent.
 */
import type { Readable, Writable } from 'node:stream';
import type { Observable } from 'rxjs';
import type { ExitResult, LogConfig, TaskDevice, TaskMount, TaskSpec } from '../jobspec/types.ts';
import type { Clock } from './clock.ts';

export type { ExitResult };

/** Enough to find a live workload again after the agent restarts (Nomad's TaskHandle). */
export interface DriverHandle {
  driver: string;
  taskName: string;
  pid?: number;
  /** Process start time in clock ticks since boot (`/proc/<pid>/stat` field 22), so a reused pid is not mistaken. */
  startTime?: number;
  /** Driver-specific JSON data. */
  state?: Record<string, unknown>;
}

export interface ShutdownOptions {
  /** The signal to send first, e.g. `SIGTERM`. */
  signal: string;
  /** Milliseconds to wait for exit before force-killing. */
  timeout: number;
  /**
   * Why the agent stops it: a kill (the default) or a restart. A driver that records its stops keeps this,
   * so an agent restored after a crash ends a restart it had begun as a restart, not as a kill.
   */
  reason?: 'kill' | 'restart';
}

/** CPU and memory of a live workload (Nomad's ResourceUsage, trimmed). */
export interface ResourceUsage {
  timestamp: number;
  cpu: { percent: number; userMs: number; systemMs: number; totalTicks?: number };
  memory: { rss: number; vms?: number; swap?: number };
  pids?: number[];
}

export interface LogLine {
  stream: 'stdout' | 'stderr';
  line: string;
  time: number;
}

export interface LogOptions {
  follow?: boolean;
  stream?: 'stdout' | 'stderr';
  /** Lines from the end to start with; all when absent. */
  tail?: number;
}

/** SwarmKit's runtime_status.container. */
export interface ContainerStatus {
  containerId?: string;
  pid?: number;
  exitCode?: number;
}

export interface PortConfig {
  name?: string;
  protocol: 'tcp' | 'udp' | 'sctp';
  targetPort: number;
  publishedPort?: number;
}

export interface PortStatus {
  ports: PortConfig[];
}

/** How a started workload is reached on the network (Nomad's DriverNetwork), for poststart hooks. */
export interface DriverNetwork {
  ip?: string;
  /** Port label to port, e.g. `{ http: 8080 }`. */
  portMap?: Record<string, number>;
  /** Whether services should advertise the driver's address rather than the host's. */
  autoAdvertise?: boolean;
}

/** What a command run inside a task's context produced (Nomad's DriverExec result). */
export interface ExecResult {
  /** stdout and stderr, interleaved as written. */
  output: string;
  exitCode: number;
}

/**
 * A command running in a task's context with its streams open (Nomad's ExecTaskStreaming, without a tty):
 * what `alloc exec` reads from and writes to. Ending `stdin` closes the command's input.
 */
export interface ExecSession {
  stdin: Writable;
  stdout: Readable;
  stderr: Readable;
  /** The command's exit code (128 + n for a signal n) once it and its streams have ended. */
  exited: Promise<number>;
}

/** Drives one task's workload. */
export interface Controller {
  /** Creates everything start needs; re-entrant (SwarmKit may answer ErrTaskPrepared). */
  prepare(signal: AbortSignal): Promise<void>;
  /** Returns once the workload runs (or ErrTaskStarted if it already does). */
  start(signal: AbortSignal): Promise<void>;
  /** Resolves when the workload exits; rejects with the signal's reason if aborted first (the workload keeps running). */
  wait(signal: AbortSignal): Promise<ExitResult>;
  /** Graceful stop: the signal, then a force kill after the timeout; succeeds if already stopped. */
  shutdown(opts: ShutdownOptions, signal: AbortSignal): Promise<void>;
  /** Force kill now. */
  terminate(signal: AbortSignal): Promise<void>;
  /** Frees everything the workload held. */
  remove(signal: AbortSignal): Promise<void>;
  /** Releases this controller's ephemeral handles; the workload is left alone. */
  close(): Promise<void>;
  /** Applies mutable fields, or rejects with ErrTaskUpdateRejected. */
  update?(task: TaskSpec, signal: AbortSignal): Promise<void>;
  /** Sends a signal (e.g. `SIGHUP`) to the workload. */
  signal?(sig: string, signal: AbortSignal): Promise<void>;
  /** How to find this workload again after a restart. */
  handle?(): DriverHandle | undefined;
  stats?(intervalMs: number): Observable<ResourceUsage>;
  logs?(opts: LogOptions): Observable<LogLine>;
  /** The started workload's network, if the driver gives it one. */
  network?(): DriverNetwork | undefined;
  /** Runs a command in the task's context (script checks); the timeout bounds it. */
  exec?(command: string, args: string[], opts: { timeout: number }, signal: AbortSignal): Promise<ExecResult>;
  /** Starts a command in the task's context with its streams open; aborting `signal` kills what it started. Throws when the task is not running. */
  execStreaming?(command: string, args: string[], signal: AbortSignal): ExecSession;
  containerStatus?(signal: AbortSignal): Promise<ContainerStatus | undefined>;
  portStatus?(signal: AbortSignal): Promise<PortStatus | undefined>;
}

/** What a driver gets to build a controller for one task. */
export interface DriverContext {
  allocId: string;
  /** The task's environment, already interpolated; immutable. */
  env: Readonly<Record<string, string>>;
  /** The task's working directory (`<alloc dir>/<task>`). */
  taskDir: string;
  /** The allocation directory (holds `alloc/logs`). */
  allocDir: string;
  logs?: LogConfig;
  clock: Clock;
  /**
   * Which start of the task this controller is for (Nomad's task ID suffix, the restart count). Stable
   * across an agent restart, so a start that is run again after a crash can find the process the first
   * one spawned instead of spawning another.
   */
  attempt?: number;
  /** Host paths prestart hooks asked to mount into the task, in hook order. */
  mounts?: readonly TaskMount[];
  /** Host devices prestart hooks asked to expose to the task. */
  devices?: readonly TaskDevice[];
}

/** A task driver (Nomad's driver plugin): a factory of controllers, one per task attempt. */
export interface Driver {
  readonly name: string;
  controller(task: TaskSpec, ctx: DriverContext): Controller;
  /** Reattaches to a workload started by an earlier agent; throws if it is gone. */
  recover?(handle: DriverHandle, task: TaskSpec, ctx: DriverContext): Controller;
  /**
   * The workload an earlier agent spawned for start `ctx.attempt` without recording a handle (it died
   * before saving the start), as a controller to stop it; undefined when that start spawned nothing. For
   * drivers that record each start before spawning (raw_exec's intent files), so a task killed after a
   * restore leaves no process behind.
   */
  findStarted?(task: TaskSpec, ctx: DriverContext, signal: AbortSignal): Promise<Controller | undefined>;
  /**
   * Whether an earlier agent had begun to stop the workload of `handle` (its stop marker, written before the
   * first signal), and why: a restart, or a kill. For drivers that keep such a record (raw_exec's `.stop`), so
   * a restore can find a kill the dead agent took but never saved (restored-kill.ts).
   */
  stopBegun?(handle: DriverHandle): 'kill' | 'restart' | undefined;
  /**
   * Whether a stop of `handle`'s workload leaves that marker (stopBegun) before its first signal, so the agent
   * may save the kill after its exit instead of before (restored-kill.ts, killSaveMayWait).
   */
  marksStop?(handle: DriverHandle): boolean;
}
