/** The raw_exec driver's errors. Each has a `code` so callers branch on behaviour, not on message text. */

/** The task's `config` block is not a valid raw_exec config; the message names the offending field. */
export class RawExecConfigError extends Error {
  readonly code = 'ErrRawExecConfig';
  constructor(
    readonly task: string,
    readonly path: string,
    /** What is wrong with the field, without the task and field (`must be a non-empty string (got nothing)`). */
    readonly problem: string,
  ) {
    super(`task ${JSON.stringify(task)}: ${path} ${problem}`);
    this.name = 'RawExecConfigError';
  }
}

/** `config.command` names no executable file (ENOENT/EACCES at spawn, or nothing found on PATH). */
export class CommandNotFoundError extends Error {
  readonly code = 'ErrCommandNotFound';
  constructor(
    readonly task: string,
    readonly command: string,
    detail: string,
  ) {
    super(`task ${JSON.stringify(task)}: cannot run config.command ${JSON.stringify(command)}: ${detail}`);
    this.name = 'CommandNotFoundError';
  }
}

/** The process could not be spawned for another reason (e.g. the task dir is missing). */
export class SpawnError extends Error {
  readonly code = 'ErrSpawnFailed';
  constructor(
    readonly task: string,
    message: string,
    cause?: unknown,
  ) {
    super(`task ${JSON.stringify(task)}: ${message}`, { cause });
    this.name = 'SpawnError';
  }
}

/** A call that needs a started task came before start (or after the workload was lost). */
export class TaskNotRunningError extends Error {
  readonly code = 'ErrTaskNotRunning';
  constructor(
    readonly task: string,
    what: string,
  ) {
    super(`task ${JSON.stringify(task)} is not running: ${what}`);
    this.name = 'TaskNotRunningError';
  }
}

/** A signal name the platform does not know. */
export class InvalidSignalError extends Error {
  readonly code = 'ErrInvalidSignal';
  constructor(readonly signalName: string) {
    super(`unknown signal ${JSON.stringify(signalName)}: use a name like SIGTERM, SIGINT or SIGHUP`);
    this.name = 'InvalidSignalError';
  }
}

/** Why a handle could not be recovered. */
export type RecoverFailure = 'invalid-handle' | 'gone' | 'pid-reused';

/** `recover()` found no live process matching the handle: the task must be restarted, not reattached. */
export class RecoverError extends Error {
  readonly code = 'ErrRecoverFailed';
  constructor(
    readonly task: string,
    readonly reason: RecoverFailure,
    detail: string,
  ) {
    super(`cannot recover task ${JSON.stringify(task)}: ${detail}`);
    this.name = 'RecoverError';
  }
}

/**
 * The workload ended while no agent watched it and its exit status was not recorded (its supervisor was
 * killed too): what it did is unknown. Nomad's "Failed Restoring Task".
 */
export class WorkloadLostError extends Error {
  readonly code = 'ErrWorkloadLost';
  constructor(
    readonly task: string,
    detail: string,
  ) {
    super(`task ${JSON.stringify(task)}: the workload was lost: ${detail}`);
    this.name = 'WorkloadLostError';
  }
}
