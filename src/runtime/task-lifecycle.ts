/**
 * What a built-in hook may ask of its task's runner once the task runs (Nomad's TaskLifecycle, handed to
 * the template and service hooks when they are built): a restart through the task runner's own restart
 * path, a signal, a task event. Each is an event to the allocation's actor, so the machines decide, the
 * visualizer shows it, and a restart that counts as a failure meets the restart policy (check_restart).
 */
import { TaskEventType, taskEvent } from '../../machines/task-events.ts';
import type { Clock } from '../drivers/clock.ts';
import type { TaskLifecycle } from '../hooks/types.ts';

/** The part of the allocation's actor the lifecycle needs: events in, the task runner children out. */
export interface LifecycleTarget {
  send(event: { type: 'RESTART'; task: string; failure: boolean; event: ReturnType<typeof taskEvent> } | { type: 'SIGNAL'; task: string; signal: string }): void;
  /** The task's runner, to record an event on it; undefined once it is gone. */
  taskRunner(task: string): { send(event: { type: 'EMIT_EVENT'; event: ReturnType<typeof taskEvent> }): void } | undefined;
}

/**
 * The lifecycle of one task. `target` is read at each call, not at build time: hooks are built before the
 * allocation's actor exists.
 */
export function taskLifecycle(task: string, clock: Clock, target: () => LifecycleTarget | undefined): TaskLifecycle {
  return {
    restart({ reason, failure }) {
      target()?.send({ type: 'RESTART', task, failure, event: taskEvent(TaskEventType.RestartSignal, clock.now(), { restartReason: reason }) });
    },
    signal(signal, reason) {
      const event = reason === undefined ? undefined : taskEvent(TaskEventType.Signaling, clock.now(), { details: { signal }, displayMessage: reason });
      target()?.send({ type: 'SIGNAL', task, signal, ...(event && { event }) });
    },
    emit({ type, message, details }) {
      target()?.taskRunner(task)?.send({ type: 'EMIT_EVENT', event: taskEvent(type, clock.now(), { ...(message !== undefined && { message }), ...(details && { details }) }) });
    },
  };
}
