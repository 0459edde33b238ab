/**
 * SwarmKit's exec errors (agent/exec/errors.go) as classes with a `code`. Errors carry behaviour, never
 * strings to match: `temporary` means retry, `exitCode` means the workload exited, `containerStatus()`
 * tells what the container looked like, and an abort means the operation was cancelled.
 */
import type { ContainerStatus, ExitResult, PortStatus } from './controller.ts';

/** Every code an exec error can carry; callers branch on it (or on the class) instead of the message. */
export type ExecErrorCode =
  | 'ErrTaskPrepared'
  | 'ErrTaskStarted'
  | 'ErrTaskRetry'
  | 'ErrTaskNoop'
  | 'ErrTaskUpdateRejected'
  | 'ErrControllerClosed'
  | 'ErrRuntimeUnsupported'
  | 'ErrDependencyNotReady'
  | 'ErrClosed'
  | 'ErrInvalidTransition';

/** The base of the exec sentinels: a stable `code`, a message a user can act on, and `cause` for wrapping. */
export class ExecError extends Error {
  readonly code: ExecErrorCode;

  constructor(code: ExecErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.name = code;
  }
}

/** From `prepare`: the workload is already prepared; Do treats it as success. */
export class ErrTaskPrepared extends ExecError {
  declare readonly code: 'ErrTaskPrepared';
  constructor(message = 'exec: task already prepared', options?: ErrorOptions) {
    super('ErrTaskPrepared', message, options);
  }
}

/** From `start` (or any call that needs a not-yet-started task): it has started already; Do treats it as success. */
export class ErrTaskStarted extends ExecError {
  declare readonly code: 'ErrTaskStarted';
  constructor(message = 'exec: task already started', options?: ErrorOptions) {
    super('ErrTaskStarted', message, options);
  }
}

/** From Do: the step failed in a way worth retrying; the status is still to be reported. */
export class ErrTaskRetry extends ExecError {
  declare readonly code: 'ErrTaskRetry';
  constructor(message = 'exec: task retry', options?: ErrorOptions) {
    super('ErrTaskRetry', message, options);
  }
}

/** From Do: calling Do again changes nothing until the task is updated. */
export class ErrTaskNoop extends ExecError {
  declare readonly code: 'ErrTaskNoop';
  constructor(message = 'exec: task noop', options?: ErrorOptions) {
    super('ErrTaskNoop', message, options);
  }
}

/** From `update`: the new spec changes fields the controller cannot change in place. */
export class ErrTaskUpdateRejected extends ExecError {
  declare readonly code: 'ErrTaskUpdateRejected';
  constructor(message = 'exec: task update rejected', options?: ErrorOptions) {
    super('ErrTaskUpdateRejected', message, options);
  }
}

/** From any controller method after `close`; Do gives it no special meaning (the task fails). */
export class ErrControllerClosed extends ExecError {
  declare readonly code: 'ErrControllerClosed';
  constructor(message = 'exec: controller closed', options?: ErrorOptions) {
    super('ErrControllerClosed', message, options);
  }
}

/** From `Executor.controller`: no driver can run this task; Resolve turns it into REJECTED. */
export class ErrRuntimeUnsupported extends ExecError {
  declare readonly code: 'ErrRuntimeUnsupported';
  constructor(message = 'exec: unsupported runtime', options?: ErrorOptions) {
    super('ErrRuntimeUnsupported', message, options);
  }
}

/**
 * From a dependency getter (a volume not yet published). It is temporary by nature, so Do retries instead of
 * failing the task; SwarmKit asks callers to wrap it with MakeTemporary, which is easy to forget.
 */
export class ErrDependencyNotReady extends ExecError {
  declare readonly code: 'ErrDependencyNotReady';
  readonly temporary = true;
  constructor(message = 'dependency not ready', options?: ErrorOptions) {
    super('ErrDependencyNotReady', message, options);
  }
}

/** From a task manager that has been closed: updates are no longer accepted (SwarmKit's agent.ErrClosed). */
export class ErrClosed extends ExecError {
  declare readonly code: 'ErrClosed';
  constructor(message = 'agent: task manager closed', options?: ErrorOptions) {
    super('ErrClosed', message, options);
  }
}

/** A bug, not a task failure: something tried to move a task's state backwards (SwarmKit panics here). */
export class ErrInvalidTransition extends ExecError {
  declare readonly code: 'ErrInvalidTransition';
  constructor(from: number, to: number) {
    super('ErrInvalidTransition', `invalid state transition: ${from} -> ${to}; task states only move forward`);
  }
}

/** The error and everything it wraps through `cause`, outermost first; stops on a cycle. */
export function* causeChain(err: unknown): Generator<unknown> {
  const seen = new Set<unknown>();
  let current = err;
  while (current !== undefined && current !== null && !seen.has(current)) {
    seen.add(current);
    yield current;
    current = typeof current === 'object' && 'cause' in current ? current.cause : undefined;
  }
}

/** Whether `err` or anything it wraps is an instance of `type` (Go's `errors.Is` for the sentinels). */
export function errorIs(err: unknown, type: abstract new (...args: never[]) => unknown): boolean {
  for (const e of causeChain(err)) if (e instanceof type) return true;
  return false;
}

/** The text to report for any thrown value, the way Go reports `err.Error()`. */
export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'string') return err;
  try {
    return JSON.stringify(err) ?? String(err);
  } catch {
    return String(err);
  }
}

/** An error that knows whether retrying may help (SwarmKit's `Temporary`). */
export interface Temporary {
  readonly temporary: boolean;
}

/** Marks a wrapped error as worth retrying; its message stays the wrapped one, since that is what users see. */
export class TemporaryError extends Error implements Temporary {
  readonly temporary = true;
  constructor(cause: unknown) {
    super(messageOf(cause), { cause });
    this.name = 'TemporaryError';
  }
}

/** Marks `err` temporary, so Do retries instead of failing the task; an already temporary error is returned as is. */
export function makeTemporary<E>(err: E): E | TemporaryError {
  return isTemporary(err) ? err : new TemporaryError(err);
}

/**
 * Whether retrying may help: the first error in the `cause` chain that says either way decides, so a
 * wrapper can also declare a temporary cause permanent.
 */
export function isTemporary(err: unknown): boolean {
  for (const e of causeChain(err)) {
    if (typeof e === 'object' && e !== null && 'temporary' in e && typeof e.temporary === 'boolean') return e.temporary;
  }
  return false;
}

/** An error with an exit code (SwarmKit's `ExitCoder`); the code ends up in the task's container status. */
export interface ExitCoder {
  readonly exitCode: number;
}

/** Reports a container's status; implemented by controllers (async) and by errors (usually sync). */
export interface ContainerStatuser {
  containerStatus(signal?: AbortSignal): ContainerStatus | undefined | Promise<ContainerStatus | undefined>;
}

/** Whether `err` itself (no unwrapping, as in SwarmKit) carries an exit code. */
export function isExitCoder(err: unknown): err is ExitCoder {
  return typeof err === 'object' && err !== null && 'exitCode' in err && typeof err.exitCode === 'number';
}

/** Whether `value` itself (no unwrapping) can report a container status. */
export function isContainerStatuser(value: unknown): value is ContainerStatuser {
  return typeof value === 'object' && value !== null && 'containerStatus' in value && typeof value.containerStatus === 'function';
}

/**
 * Whether `err` means the operation was cancelled rather than failed: an AbortError or TimeoutError (what
 * `AbortSignal.abort()` and `AbortSignal.timeout()` throw), or the reason the given signal was aborted with,
 * anywhere in the `cause` chain (Go's `errors.Is(err, context.Canceled)`).
 */
export function isCancellation(err: unknown, signal?: AbortSignal): boolean {
  for (const e of causeChain(err)) {
    if (signal?.aborted && e === signal.reason) return true;
    if (typeof e === 'object' && e !== null && 'name' in e && (e.name === 'AbortError' || e.name === 'TimeoutError')) return true;
  }
  return false;
}

/** How an ExitError is built: an exit code, and what else is known about the exit. */
export interface ExitErrorInit {
  exitCode: number;
  /** The signal number that ended the process, 0 if none. */
  signal?: number;
  oomKilled?: boolean;
  /** The container's status at exit, if the driver knows it. */
  containerStatus?: ContainerStatus;
  message?: string;
}

/** A workload that exited unsuccessfully: an ExitCoder and a ContainerStatuser, so Do records both. */
export class ExitError extends Error implements ExitCoder, ContainerStatuser {
  readonly exitCode: number;
  readonly signal: number;
  readonly oomKilled: boolean;
  readonly #containerStatus?: ContainerStatus;

  constructor(init: ExitErrorInit, options?: ErrorOptions) {
    super(init.message ?? exitMessage(init), options);
    this.name = 'ExitError';
    this.exitCode = init.exitCode;
    this.signal = init.signal ?? 0;
    this.oomKilled = init.oomKilled ?? false;
    this.#containerStatus = init.containerStatus;
  }

  /** The container status given at construction; undefined lets Do ask the controller instead. */
  containerStatus(): ContainerStatus | undefined {
    return this.#containerStatus;
  }

  /** The error for a driver's exit result, or undefined when it is a clean exit (code 0, no signal, no error). */
  static fromExit(exit: ExitResult, containerStatus?: ContainerStatus): ExitError | undefined {
    if (exit.exitCode === 0 && exit.signal === 0 && !exit.err && !exit.oomKilled) return undefined;
    return new ExitError({
      exitCode: exit.exitCode,
      signal: exit.signal,
      oomKilled: exit.oomKilled,
      containerStatus,
      message: exit.err || undefined,
    });
  }
}

function exitMessage(init: ExitErrorInit): string {
  if (init.oomKilled) return `task: out of memory (exit code ${init.exitCode})`;
  if (init.signal) return `task: killed by signal ${init.signal} (exit code ${init.exitCode})`;
  // Docker's wording, which users of SwarmKit already recognise.
  return `task: non-zero exit (${init.exitCode})`;
}

/** A failure that knows the container's status (for example "no such container" with the last known pid). */
export class ContainerStatusError extends Error implements ContainerStatuser {
  readonly #containerStatus?: ContainerStatus;

  constructor(message: string, containerStatus: ContainerStatus | undefined, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ContainerStatusError';
    this.#containerStatus = containerStatus;
  }

  /** The status given at construction. */
  containerStatus(): ContainerStatus | undefined {
    return this.#containerStatus;
  }
}

/** Reports the ports a controller allocated on the host (SwarmKit's PortStatuser). */
export interface PortStatuser {
  portStatus(signal?: AbortSignal): PortStatus | undefined | Promise<PortStatus | undefined>;
}

/** Whether `value` can report port status. */
export function isPortStatuser(value: unknown): value is PortStatuser {
  return typeof value === 'object' && value !== null && 'portStatus' in value && typeof value.portStatus === 'function';
}
