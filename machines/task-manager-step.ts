/**
 * The task manager's `do` step as an actor that can be cancelled without being stopped. SwarmKit cancels an
 * operation's context when an update (or Close) arrives but still waits for the operation to return, and
 * stores whatever status it returned; a promise actor cannot do that (stopping it throws its result away),
 * so the step is a callback actor: CANCEL aborts the step's signal, and the outcome always comes back as
 * STEP_DONE or STEP_ERROR.
 */
import { fromCallback } from 'xstate';
import type { ManagedTask } from './task-manager.ts';

/** The `do` actor's input: the task to step, and whether the controller must see the new spec first. */
export interface TaskManagerStepInput {
  task: ManagedTask;
  updated: boolean;
}

/** What one step did: Do's nil (`progress`), ErrTaskNoop, ErrTaskRetry, or a failed controller update (`error`). */
export type TaskManagerOutcome = 'progress' | 'noop' | 'retry' | 'error';

/** The `do` actor's output: the new status (absent when the step did not reach Do) and the outcome. */
export interface TaskManagerStepOutput {
  outcome: TaskManagerOutcome;
  status?: unknown;
  /** Why an `error` step failed. */
  error?: string;
}

/** What the machine sends its step: cancel the operation (its result is still awaited and kept). */
export type TaskManagerStepCommand = { type: 'CANCEL' };

/** What a step sends back to the manager: its output, or why it threw. */
export type TaskManagerStepReport =
  | { type: 'STEP_DONE'; output: TaskManagerStepOutput }
  | { type: 'STEP_ERROR'; error: string };

/** One step as a function: resolves with the step's output; `signal` aborts on CANCEL or when the actor stops. */
export type TaskManagerStepFn = (input: TaskManagerStepInput, signal: AbortSignal) => Promise<TaskManagerStepOutput>;

/** Builds the manager's `do` actor from a step function. */
export function fromStep(run: TaskManagerStepFn) {
  return fromCallback<TaskManagerStepCommand, TaskManagerStepInput>(({ input, sendBack, receive }) => {
    const abort = new AbortController();
    receive((command) => {
      if (command.type === 'CANCEL') abort.abort();
    });
    // sendBack is a no-op once the actor is stopped, so a step that outlives its actor reports to nobody.
    // Started synchronously, as a promise actor would be; a synchronous throw is reported like a rejection.
    let step: Promise<TaskManagerStepOutput>;
    try {
      step = Promise.resolve(run(input, abort.signal));
    } catch (error) {
      step = Promise.reject(error);
    }
    step.then(
      (output) => sendBack({ type: 'STEP_DONE', output } satisfies TaskManagerStepReport),
      (error: unknown) =>
        sendBack({ type: 'STEP_ERROR', error: error instanceof Error ? error.message : String(error) } satisfies TaskManagerStepReport),
    );
    return () => abort.abort();
  });
}
