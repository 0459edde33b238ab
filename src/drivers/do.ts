/**
 * SwarmKit's `Do` and `Resolve` (agent/exec/controller.go): one step of a task's progression, decided by a
 * transition table over (observed state, desired state), with at most one controller call. Task errors never
 * escape: they become REJECTED/FAILED, or a retry. Pure except for the controller (or executor) calls.
 */
import { DEFAULT_KILL_SIGNAL, DEFAULT_KILL_TIMEOUT } from '../../machines/model.ts';
import type { ContainerStatus, Controller, ExitResult, ShutdownOptions } from './controller.ts';
import {
  ErrInvalidTransition,
  ErrTaskNoop,
  ErrTaskPrepared,
  ErrTaskRetry,
  ErrTaskStarted,
  ExitError,
  errorIs,
  isCancellation,
  isContainerStatuser,
  isExitCoder,
  isPortStatuser,
  isTemporary,
  messageOf,
} from './errors.ts';
import type { Executor } from './executor.ts';
import { SwarmTaskState, type SwarmTask, type SwarmTaskStatus } from './task-status.ts';

const {
  NEW, PENDING, ASSIGNED, ACCEPTED, PREPARING, READY, STARTING, RUNNING, COMPLETE, SHUTDOWN, FAILED, REJECTED,
} = SwarmTaskState;

/** Nomad's defaults for a task without kill_signal / kill_timeout: the model's, which the task runner uses too. */
const DEFAULT_SHUTDOWN: ShutdownOptions = { signal: DEFAULT_KILL_SIGNAL, timeout: DEFAULT_KILL_TIMEOUT };

/** How one Do step runs. */
export interface DoOptions {
  /** Bounds the controller call; an abort makes the step a retry, never a failure. */
  signal?: AbortSignal;
  /** The clock for the status timestamp (ms); the wall clock when absent. */
  now?: () => number;
  /** How `shutdown` stops the workload; from the spec's killSignal/killTimeout (Nomad's defaults) when absent. */
  shutdown?: ShutdownOptions;
}

/** The step's status (always to be reported and stored) and whether the caller should pause or retry. */
export interface DoResult {
  status: SwarmTaskStatus;
  /** Absent: the state changed, call Do again at once. Noop: wait for an update. Retry: call again after a backoff. */
  error?: ErrTaskNoop | ErrTaskRetry;
}

/** Moves `status` to `state` with `message`, clearing `err`; throws ErrInvalidTransition for a lower state. */
export function transitionStatus(status: SwarmTaskStatus, state: SwarmTaskState, message: string): SwarmTaskStatus {
  if (state < status.state) throw new ErrInvalidTransition(status.state, state);
  const next: SwarmTaskStatus = { ...status, state, message };
  delete next.err;
  return next;
}

/** Whether two statuses are equal when timestamps are ignored (SwarmKit's TaskStatusesEqualStable). */
export function statusesEqualStable(a: SwarmTaskStatus, b: SwarmTaskStatus): boolean {
  return deepEqual({ ...a, timestamp: 0 }, { ...b, timestamp: 0 });
}

/**
 * Runs one step of the §1 table for `task` through `controller`. The returned status is the task's new
 * status; its timestamp moves (forward only) when anything else about it changed.
 */
export async function Do(task: SwarmTask, controller: Controller, opts: DoOptions = {}): Promise<DoResult> {
  const signal = opts.signal ?? new AbortController().signal;
  const now = opts.now ?? Date.now;
  const before = task.status;
  let status: SwarmTaskStatus = structuredClone(before);
  // What a failing call told us, kept for the post-processing below like SwarmKit's closure variables.
  let errorContainer: ContainerStatus | undefined;
  let exitCode = 0;

  const transition = (state: SwarmTaskState, message: string): undefined => {
    status = transitionStatus(status, state, message);
    return undefined;
  };

  // The fatal-error order of §1: container status, exit code, cancellation, err text, temporary, terminal.
  const fatal = async (err: unknown): Promise<ErrTaskRetry | undefined> => {
    if (isContainerStatuser(err)) errorContainer = await quietly(() => err.containerStatus(signal));
    if (isExitCoder(err)) exitCode = err.exitCode;
    // A cancelled call says nothing about the task, so not even `err` changes.
    if (isCancellation(err, signal)) return new ErrTaskRetry(undefined, { cause: err });
    status.err = messageOf(err);
    if (isTemporary(err)) return new ErrTaskRetry(undefined, { cause: err });
    // Before STARTING nothing ran, so the task was rejected; from STARTING on it failed. The message is kept.
    status.state = status.state < STARTING ? REJECTED : FAILED;
    return undefined;
  };

  const step = async (): Promise<ErrTaskNoop | ErrTaskRetry | undefined> => {
    const state = status.state;
    const desired = task.desiredState;

    // Rows 1a/1b: a desired SHUTDOWN, REMOVE or ORPHANED caps the agent at SHUTDOWN.
    if (desired >= SHUTDOWN) {
      if (state >= COMPLETE) return new ErrTaskNoop();
      try {
        await controller.shutdown(opts.shutdown ?? shutdownOptionsOf(task), signal);
      } catch (err) {
        return fatal(err);
      }
      return transition(SHUTDOWN, 'shutdown');
    }

    // Row 2: already beyond what is desired.
    if (state > desired) return new ErrTaskNoop();

    // Rows 3-5 run even when state = desired, so a task may overshoot its desired state.
    switch (state) {
      case PREPARING:
        try {
          await controller.prepare(signal);
        } catch (err) {
          if (!errorIs(err, ErrTaskPrepared)) return fatal(err);
        }
        return transition(READY, 'prepared');
      case STARTING:
        try {
          await controller.start(signal);
        } catch (err) {
          if (!errorIs(err, ErrTaskStarted)) return fatal(err);
        }
        return transition(RUNNING, 'started');
      case RUNNING: {
        let exit: ExitResult;
        try {
          exit = await controller.wait(signal);
        } catch (err) {
          return fatal(err);
        }
        // The contract resolves every exit; SwarmKit's Wait fails with an ExitCoder for an unclean one.
        const failure = ExitError.fromExit(exit);
        return failure ? fatal(failure) : transition(COMPLETE, 'finished');
      }
    }

    // Row 6: the remaining states are pauses that wait for the desired state to move past them.
    if (state >= desired) return new ErrTaskNoop();

    switch (state) {
      case NEW:
      case PENDING:
      case ASSIGNED:
        return transition(ACCEPTED, 'accepted');
      case ACCEPTED:
        return transition(PREPARING, 'preparing');
      case READY:
        return transition(STARTING, 'starting');
      default:
        return new ErrTaskNoop();
    }
  };

  const error = await step();

  // Deferred post-processing: the runtime status, only once the task has (or had) a workload.
  if (status.state >= STARTING) await collectRuntimeStatus();

  if (!statusesEqualStable(status, before)) status.timestamp = Math.max(now(), before.timestamp);
  return error ? { status, error } : { status };

  async function collectRuntimeStatus(): Promise<void> {
    let container = errorContainer;
    if (container === undefined) {
      if (!isContainerStatuser(controller)) return;
      container = (await quietly(() => controller.containerStatus(signal))) ?? { ...before.runtimeStatus?.container };
    }
    container = { ...container };
    if (exitCode !== 0) container.exitCode = exitCode;
    status.runtimeStatus = { container };

    if (isPortStatuser(controller)) {
      const ports = await quietly(() => controller.portStatus(signal));
      // A PortStatuser is authoritative: no ports now means none, so the old value is dropped.
      if (ports) status.portStatus = ports;
      else delete status.portStatus;
    }
  }
}

/** What Resolve found: the controller (absent on error), the status to report either way, and the error. */
export interface ResolveResult {
  controller?: Controller;
  status: SwarmTaskStatus;
  error?: unknown;
}

/**
 * Gets the task's controller from the executor and the status that goes with it. The status is reported
 * even on error; Resolve never touches the timestamp.
 */
export async function Resolve(task: SwarmTask, executor: Pick<Executor, 'controller'>): Promise<ResolveResult> {
  const status = structuredClone(task.status);
  let controller: Controller;
  try {
    controller = await executor.controller(task);
  } catch (error) {
    status.message = 'resolving controller failed';
    status.err = messageOf(error);
    // Before STARTING nothing ran: a rejection. Started but not finished: a failure. Finished: left as it was.
    if (task.status.state < STARTING) status.state = REJECTED;
    else if (task.status.state <= RUNNING) status.state = FAILED;
    return { status, error };
  }
  if (task.status.state < ACCEPTED) {
    status.state = ACCEPTED;
    status.message = 'accepted';
    delete status.err;
  }
  return { controller, status };
}

function shutdownOptionsOf(task: SwarmTask): ShutdownOptions {
  return {
    signal: task.spec.killSignal ?? DEFAULT_SHUTDOWN.signal,
    timeout: task.spec.killTimeout ?? DEFAULT_SHUTDOWN.timeout,
  };
}

/** A status query never fails the step: SwarmKit logs the error and carries on without the answer. */
async function quietly<T>(query: () => T | Promise<T>): Promise<T | undefined> {
  try {
    return await query();
  } catch {
    return undefined;
  }
}

/** Structural equality of JSON-like data; a key holding `undefined` counts as absent. */
function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ra), ...Object.keys(rb)]);
  for (const key of keys) if (!deepEqual(ra[key], rb[key])) return false;
  return true;
}
