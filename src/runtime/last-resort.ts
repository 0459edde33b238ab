/**
 * The last resort against an error nobody handled. A hook or driver implementation that throws from a
 * timer or event of its own, or leaves a promise to reject unwatched, escapes every caller: Node then ends
 * the process, and with it every allocation the agent runs (issue 24). Once `installLastResort()` has run,
 * each hook and driver call runs attributed to the task it serves (an AsyncLocalStorage context, which
 * follows the call's timers, promises and events), so such an error is recorded on that task as Nomad
 * records a failing hook or driver ('Task hook failed', 'Driver Failure'), logged on stderr, and the
 * process lives on. Errors from anywhere else are logged on stderr only.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { TaskEventType, taskEvent } from '../../machines/task-events.ts';
import type { TaskEvent } from '../jobspec/types.ts';

/** The hook or driver call an error came from, and how to record it on its task. */
export interface ErrorSource {
  allocId: string;
  /** The task; absent for an alloc hook, whose error is recorded on every task of its allocation. */
  task?: string;
  kind: 'hook' | 'driver';
  /** The hook's name, or the driver's. */
  name: string;
  /** The hook's phase (prestart, stop, ...) or the driver call (start, wait, shutdown, ...). */
  call: string;
  /** The task runner's clock, for the event's time. */
  now(): number;
  /** Appends `event` to the task's events (a no-op once its runner has stopped). */
  record(event: TaskEvent): void;
}

/** The error an unhandled rejection carries when its reason is not an Error (`Promise.reject('x')`). */
export class UnexpectedRejectionError extends Error {
  readonly code = 'ErrUnexpectedRejection';
  constructor(readonly reason: unknown) {
    super(`a promise was rejected with ${describe(reason)} and nothing handled it`);
    this.name = 'UnexpectedRejectionError';
  }
}

function describe(value: unknown): string {
  try {
    return typeof value === 'string' ? JSON.stringify(value) : String(value);
  } catch {
    return 'a value that cannot be printed';
  }
}

const attribution = new AsyncLocalStorage<ErrorSource>();
/** How many installs are in force: attribution costs a context per call, paid only while someone listens. */
let installs = 0;

/** Runs `fn` attributed to the source `sourceOf` makes while the last resort is installed; else just runs it. */
export function attributeTo<T>(sourceOf: () => ErrorSource, fn: () => T): T {
  if (installs === 0) return fn();
  let source: ErrorSource;
  try {
    source = sourceOf();
  } catch {
    // No source to name (a call outside any runner): `fn` reports that itself.
    return fn();
  }
  return attribution.run(source, fn);
}

/** The task event that records an unexpected error of `source`: what failed, where, and its message. */
export function unexpectedErrorEvent(source: ErrorSource, err: Error, time: number): TaskEvent {
  const where = `${source.call} ${source.kind} ${JSON.stringify(source.name)}`;
  return taskEvent(source.kind === 'hook' ? TaskEventType.HookFailed : TaskEventType.DriverFailure, time, {
    message: `${where} failed unexpectedly (nothing handled the error): ${err.message}`,
    details: { [source.kind]: source.name, [source.kind === 'hook' ? 'phase' : 'call']: source.call, unexpected: 'true' },
  });
}

/** What `installLastResort` writes to; default: the process's stderr. */
export interface LastResortOptions {
  write?: (text: string) => void;
}

/**
 * Deals with one error nobody handled: logs it (with the task it is attributed to, if any) and records it
 * on that task. Never throws: it runs where a throw would end the process.
 */
export function handleUnexpected(error: unknown, origin: string, source: ErrorSource | undefined, write: (text: string) => void): void {
  const err = error instanceof Error ? error : new UnexpectedRejectionError(error);
  const owner = source?.task !== undefined ? `task ${JSON.stringify(source.task)} of allocation ${source.allocId}` : `allocation ${source?.allocId}`;
  const where = source ? ` in ${source.call} ${source.kind} ${JSON.stringify(source.name)} of ${owner}` : '';
  try {
    write(`allocrun: ${origin}${where}, the agent carries on: ${err.stack ?? err.message}\n`);
  } catch {
    // Nowhere left to say it (stderr closed): recording it on the task is all that is left.
  }
  if (!source) return;
  try {
    source.record(unexpectedErrorEvent(source, err, source.now()));
  } catch (recordErr) {
    try {
      write(`allocrun: could not record it on the task: ${(recordErr as Error).message}\n`);
    } catch {
      // as above
    }
  }
}

/**
 * Installs process-wide handlers for unhandled rejections and uncaught exceptions that log on stderr,
 * record the error on the task it came from, and keep the process alive; turns on the attribution of hook
 * and driver calls. Returns a function that removes them. For the agent: an embedding app may prefer its
 * own handlers.
 */
export function installLastResort(opts: LastResortOptions = {}): () => void {
  const write = opts.write ?? ((text: string) => void process.stderr.write(text));
  // Node calls both handlers in the async context of the failing code: attribution.getStore() is its source.
  const onRejection = (reason: unknown) => handleUnexpected(reason, 'unhandled rejection', attribution.getStore(), write);
  const onException = (err: unknown) => handleUnexpected(err, 'uncaught exception', attribution.getStore(), write);
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  installs += 1;
  let removed = false;
  return () => {
    if (removed) return;
    removed = true;
    installs -= 1;
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
  };
}
