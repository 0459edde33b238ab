/**
 * SwarmKit's task manager bound to a Controller: the machine's `do` step is the controller's update (when the
 * spec changed) followed by `Do`, as agent/task.go dispatches it.
 */
import { createActor, waitFor, type Actor, type InspectionEvent, type Observer } from 'xstate';
import {
  fromStep,
  taskManagerMachine,
  type TaskManagerBackoff,
  type TaskManagerStepInput,
  type TaskManagerStepOutput,
} from '../../machines/task-manager.ts';
import { realClock, type Clock } from '../drivers/clock.ts';
import type { Controller, LogOptions } from '../drivers/controller.ts';
import { Do } from '../drivers/do.ts';
import { ErrClosed, ErrTaskNoop, messageOf } from '../drivers/errors.ts';
import { publishLogs, type LogPublisher } from '../drivers/executor.ts';
import type { SwarmTask, SwarmTaskStatus } from '../drivers/task-status.ts';

/** How a task manager runs. */
export interface TaskManagerOptions {
  /** Times the retry backoff and the status timestamps; the wall clock when absent. */
  clock?: Clock;
  /** Default: SwarmKit's fixed 1 s. */
  backoff?: TaskManagerBackoff;
  /** Seed of the backoff jitter, for reproducible runs. */
  seed?: number;
  /** Hears every status a step returns, noops included (SwarmKit's reporter dedups downstream). */
  onStatus?: (status: SwarmTaskStatus, taskId: string) => void;
  /** Aborting it closes the manager, as cancelling SwarmKit's parent context does. */
  signal?: AbortSignal;
  inspect?: Observer<InspectionEvent> | ((ev: InspectionEvent) => void);
}

/** A started task manager. */
export interface TaskManager {
  readonly actor: Actor<typeof taskManagerMachine>;
  /** The manager's task, whose status is the authoritative one. */
  getTask(): SwarmTask;
  /** Hands over a new version of the task; throws ErrClosed once the manager is closing (the machine records it too). */
  update(task: SwarmTask): void;
  /** Cancels the step in flight, waits for it, and stops stepping; idempotent. The workload keeps running. */
  close(): Promise<void>;
  /** Streams the controller's logs to `publisher` until `signal` aborts; nothing if the controller has none. */
  logs(publisher: LogPublisher, options: LogOptions, signal: AbortSignal): Promise<void>;
}

/** The task-manager machine with its `do` step bound to `controller`: its update (when the spec changed), then Do. */
export function bindTaskManager(controller: Controller, clock: Clock = realClock) {
  async function step({ task, updated }: TaskManagerStepInput, signal: AbortSignal): Promise<TaskManagerStepOutput> {
    const swarmTask = task as SwarmTask;
    if (updated && controller.update) {
      try {
        // Always before Do, so the controller never runs a step against a stale spec.
        await controller.update(swarmTask.spec, signal);
      } catch (err) {
        return { outcome: 'error', error: `updating task controller failed: ${messageOf(err)}` };
      }
    }
    // A cancelled step still returns its status (a Wait that ended as the update came is COMPLETE); a
    // cancelled controller call becomes ErrTaskRetry inside Do.
    const { status, error } = await Do(swarmTask, controller, { signal, now: () => clock.now() });
    return { status, outcome: error === undefined ? 'progress' : error instanceof ErrTaskNoop ? 'noop' : 'retry' };
  }

  // The machine awaits every step it cancels before dispatching the next, so controller calls never overlap.
  return taskManagerMachine.provide({ actors: { do: fromStep(step) } });
}

/** Starts a manager for `task` on `controller`; like SwarmKit's, its first step runs at once. */
export function createTaskManager(task: SwarmTask, controller: Controller, opts: TaskManagerOptions = {}): TaskManager {
  const clock = opts.clock ?? realClock;
  const actor = createActor(bindTaskManager(controller, clock), {
    clock,
    inspect: opts.inspect,
    input: { task, backoff: opts.backoff, seed: opts.seed },
  });
  if (opts.onStatus) {
    const onStatus = opts.onStatus;
    actor.on('status', (ev) => onStatus(ev.status as SwarmTaskStatus, ev.taskId));
  }
  actor.start();

  const closing = () => {
    const snap = actor.getSnapshot();
    return snap.matches({ running: 'closing' }) || snap.matches('closed');
  };
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      actor.send({ type: 'CLOSE' });
      await waitFor(actor, (s) => s.matches('closed'));
    })();
    return closed;
  };
  // Nobody awaits a close the signal starts: a failed one must not surface as an unhandled rejection.
  const closeQuietly = () => void close().catch(() => undefined);
  opts.signal?.addEventListener('abort', closeQuietly, { once: true });
  if (opts.signal?.aborted) closeQuietly();

  return {
    actor,
    getTask: () => actor.getSnapshot().context.task as SwarmTask,
    update(next) {
      const rejected = closing();
      actor.send({ type: 'UPDATE', task: next });
      if (rejected) throw new ErrClosed();
    },
    close,
    logs: (publisher, options, signal) => publishLogs(controller, task.id, publisher, options, signal),
  };
}
