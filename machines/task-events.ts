/**
 * Nomad's task event type strings and their display messages, plus the reducer that appends an event to a
 * TaskState the way Nomad's `appendTaskEvent` does (FailsTask sets Failed, Restarting bumps Restarts).
 */
import { formatDuration, type TaskEvent, type TaskState, type TaskStatus } from './model.ts';

/** Nomad's event type strings (nomad/structs TaskEvent constants). */
export const TaskEventType = {
  Received: 'Received',
  Setup: 'Task Setup',
  Started: 'Started',
  Terminated: 'Terminated',
  Restarting: 'Restarting',
  NotRestarting: 'Not Restarting',
  Killing: 'Killing',
  Killed: 'Killed',
  RestartSignal: 'Restart Signaled',
  Signaling: 'Signaling',
  SiblingFailed: 'Sibling Task Failed',
  LeaderDead: 'Leader Task Dead',
  MainDead: 'Main Tasks Dead',
  SetupFailure: 'Setup Failure',
  DriverFailure: 'Driver Failure',
  FailedValidation: 'Failed Validation',
  HookFailed: 'Task hook failed',
  DownloadingArtifacts: 'Downloading Artifacts',
  ArtifactDownloadFailed: 'Failed Artifact Download',
  WaitingShutdownDelay: 'Waiting for shutdown delay',
  SkippingShutdownDelay: 'Skipping shutdown delay',
  FailedRestoring: 'Failed Restoring Task',
  Reconnected: 'Reconnected',
} as const;

type EventFields = Omit<TaskEvent, 'type' | 'time' | 'displayMessage'> & { displayMessage?: string };

function displayMessageOf(type: string, f: EventFields): string {
  switch (type) {
    case TaskEventType.Received:
      return 'Task received by client';
    case TaskEventType.Started:
      return 'Task started by client';
    case TaskEventType.Terminated: {
      let d = `Exit Code: ${f.exitCode ?? 0}`;
      if (f.signal) d += `, Signal: ${f.signal}`;
      if (f.message) d += `, Exit Message: ${JSON.stringify(f.message)}`;
      return d;
    }
    case TaskEventType.Restarting:
      return `Task restarting in ${formatDuration(f.startDelay ?? 0)}`;
    case TaskEventType.NotRestarting:
      return f.restartReason || 'Task exceeded restart policy';
    case TaskEventType.Killing:
      return `Sent interrupt. Waiting ${formatDuration(f.killTimeout ?? 0)} before force killing`;
    case TaskEventType.Killed:
      return f.message || 'Task successfully killed';
    case TaskEventType.RestartSignal:
      return f.restartReason || 'Task signaled to restart';
    case TaskEventType.Signaling:
      return f.details?.signal ? `Task being sent signal ${f.details.signal}` : 'Task being sent a signal';
    case TaskEventType.SiblingFailed:
      return `Task's sibling ${JSON.stringify(f.details?.failed_sibling ?? '')} failed`;
    case TaskEventType.LeaderDead:
      return 'Leader Task in Group dead';
    case TaskEventType.MainDead:
      return 'Main tasks in the group died';
    case TaskEventType.SetupFailure:
      return f.message || 'Task setup failed';
    case TaskEventType.DriverFailure:
      return f.message || 'Failed to start task';
    case TaskEventType.FailedValidation:
      return f.message || 'Validation of task failed';
    case TaskEventType.DownloadingArtifacts:
      return 'Client is downloading artifacts';
    case TaskEventType.ArtifactDownloadFailed:
      return f.details?.download_error || 'Failed to download artifacts';
    default:
      return f.message ?? '';
  }
}

/** Builds a TaskEvent with Nomad's display message derived from its type when none is given. */
export function taskEvent(type: string, time: number, fields: EventFields = {}): TaskEvent {
  // Field by field, leaving out undefined ones, in the same order as before (type, time, the fields, the
  // display message): deleting them afterwards turned most events into slow dictionary-mode objects, and
  // every snapshot copy and inspection message reads them again.
  const ev = { type, time } as TaskEvent & Record<string, unknown>;
  for (const k of Object.keys(fields)) {
    const v = (fields as Record<string, unknown>)[k];
    if (v !== undefined && k !== 'displayMessage') ev[k] = v;
  }
  const display = fields.displayMessage ?? displayMessageOf(type, fields);
  if (display !== undefined) ev.displayMessage = display;
  return ev;
}

/** A fresh TaskState: pending, with the Received event (Nomad appends it in the task runner's constructor). */
export function newTaskState(time: number): TaskState {
  return { state: 'pending', failed: false, restarts: 0, events: [taskEvent(TaskEventType.Received, time)] };
}

/**
 * Appends an event and applies Nomad's side effects; optionally moves the task to a new status, setting
 * StartedAt on each entry to running and FinishedAt once on death. Returns a new value (context is shared).
 */
export function appendEvent(state: TaskState, ev: TaskEvent | undefined, status?: TaskStatus): TaskState {
  // A copy into an empty literal, not a spread: the copy may gain startedAt, finishedAt, lastRestart (record-copy.ts).
  const next: TaskState = Object.assign({}, state);
  if (ev) next.events = [...state.events, ev];
  const time = ev?.time;
  if (ev?.failsTask) next.failed = true;
  if (ev?.type === TaskEventType.Restarting) {
    next.restarts = state.restarts + 1;
    next.lastRestart = ev.time;
  }
  if (status && status !== state.state) {
    next.state = status;
    if (status === 'running' && time !== undefined) {
      next.startedAt = time;
      delete next.finishedAt;
    }
    if (status === 'dead' && next.finishedAt === undefined && time !== undefined) next.finishedAt = time;
  }
  return next;
}

/** Moves a task to a status at `time` without an event. */
export function setStatus(state: TaskState, status: TaskStatus, time: number): TaskState {
  if (status === state.state) return state;
  const next: TaskState = Object.assign({}, state);
  next.state = status;
  if (status === 'running') {
    next.startedAt = time;
    delete next.finishedAt;
  }
  if (status === 'dead' && next.finishedAt === undefined) next.finishedAt = time;
  return next;
}
