/**
 * `alloc exec`'s reach into a task: its live controller, if the driver runs commands in tasks. Nomad answers
 * a task without an exec handler with `task "<name>" is not running.`; a driver that cannot exec at all is
 * named, so the user knows no later attempt will work either.
 */
import type { Controller, ExecSession } from '../drivers/controller.ts';

/** A command `alloc exec` could not start in the task, with why in Nomad's words (the API answers 404). */
export class ExecRefusedError extends Error {
  readonly code = 'ErrExecRefused';
  constructor(message: string) {
    super(message);
    this.name = 'ExecRefusedError';
  }
}

/** Starts the command through the task's controller; refuses when there is none or it cannot exec. */
export function execInRunningTask(ctrl: Controller | undefined, task: string, command: string, args: string[], signal: AbortSignal): ExecSession {
  if (!ctrl) throw new ExecRefusedError(`task ${JSON.stringify(task)} is not running.`);
  if (!ctrl.execStreaming) throw new ExecRefusedError(`task ${JSON.stringify(task)}: its driver cannot run commands in it (alloc exec needs a driver with streaming exec, e.g. raw_exec)`);
  try {
    return ctrl.execStreaming(command, args, signal);
  } catch (err) {
    // The driver's TaskNotRunningError: its workload has exited.
    if ((err as { code?: string }).code === 'ErrTaskNotRunning') throw new ExecRefusedError(`task ${JSON.stringify(task)} is not running.`);
    throw err;
  }
}
