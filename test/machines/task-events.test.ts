/**
 * Nomad's task events as data (machines/task-events.ts): the display message each type gets when none is
 * given (Nomad's TaskEvent.PopulateEventDisplayMessage), and appendTaskEvent's side effects on a TaskState.
 */
import { describe, expect, it } from 'vitest';
import { TaskEventType, appendEvent, newTaskState, setStatus, taskEvent } from '../../machines/task-events.ts';
import type { TaskEvent, TaskState } from '../../machines/model.ts';

type Fields = Parameters<typeof taskEvent>[2];

describe("Nomad's PopulateEventDisplayMessage: the display message of each event type", () => {
  const cases: [string, Fields, string][] = [
    [TaskEventType.Received, {}, 'Task received by client'],
    [TaskEventType.Started, {}, 'Task started by client'],
    [TaskEventType.Terminated, {}, 'Exit Code: 0'],
    [TaskEventType.Terminated, { exitCode: 2, signal: 9 }, 'Exit Code: 2, Signal: 9'],
    [TaskEventType.Terminated, { exitCode: 1, message: 'oom "killed"' }, 'Exit Code: 1, Exit Message: "oom \\"killed\\""'],
    [TaskEventType.Terminated, { exitCode: 137, signal: 9, message: 'x' }, 'Exit Code: 137, Signal: 9, Exit Message: "x"'],
    [TaskEventType.Restarting, {}, 'Task restarting in 0s'],
    [TaskEventType.Restarting, { startDelay: 16_500 }, 'Task restarting in 16.5s'],
    [TaskEventType.NotRestarting, {}, 'Task exceeded restart policy'],
    [TaskEventType.NotRestarting, { restartReason: 'Error was unrecoverable' }, 'Error was unrecoverable'],
    [TaskEventType.Killing, {}, 'Sent interrupt. Waiting 0s before force killing'],
    [TaskEventType.Killing, { killTimeout: 5_000 }, 'Sent interrupt. Waiting 5s before force killing'],
    [TaskEventType.Killed, {}, 'Task successfully killed'],
    [TaskEventType.Killed, { message: 'could not kill' }, 'could not kill'],
    [TaskEventType.RestartSignal, {}, 'Task signaled to restart'],
    [TaskEventType.RestartSignal, { restartReason: 'User requested restart' }, 'User requested restart'],
    [TaskEventType.Signaling, {}, 'Task being sent a signal'],
    [TaskEventType.Signaling, { details: { signal: 'SIGHUP' } }, 'Task being sent signal SIGHUP'],
    [TaskEventType.SiblingFailed, {}, 'Task\'s sibling "" failed'],
    [TaskEventType.SiblingFailed, { details: { failed_sibling: 'db' } }, 'Task\'s sibling "db" failed'],
    [TaskEventType.LeaderDead, {}, 'Leader Task in Group dead'],
    [TaskEventType.MainDead, {}, 'Main tasks in the group died'],
    [TaskEventType.SetupFailure, {}, 'Task setup failed'],
    [TaskEventType.SetupFailure, { message: 'no alloc dir' }, 'no alloc dir'],
    [TaskEventType.DriverFailure, {}, 'Failed to start task'],
    [TaskEventType.DriverFailure, { message: 'no such binary' }, 'no such binary'],
    [TaskEventType.FailedValidation, {}, 'Validation of task failed'],
    [TaskEventType.FailedValidation, { message: 'bad config' }, 'bad config'],
    // Any other type shows its message (Task Setup's "Building Task Directory", a hook's own event), or nothing.
    [TaskEventType.Setup, { message: 'Building Task Directory' }, 'Building Task Directory'],
    [TaskEventType.HookFailed, {}, ''],
    ['Custom Hook Event', { message: 'hello' }, 'hello'],
  ];
  it.each(cases)('%s with %j reads %j', (type, fields, display) => {
    expect(taskEvent(type, 10, fields).displayMessage).toBe(display);
  });

  it('keeps a display message it is given instead of deriving one', () => {
    expect(taskEvent(TaskEventType.Started, 0, { displayMessage: 'as the hook said' }).displayMessage).toBe('as the hook said');
  });

  it('holds the type, the time and the fields given, and no key for a field left undefined', () => {
    const ev = taskEvent(TaskEventType.Killing, 7, { killTimeout: 1_000, message: undefined, failsTask: undefined });
    expect(ev).toEqual({ type: 'Killing', time: 7, killTimeout: 1_000, displayMessage: 'Sent interrupt. Waiting 1s before force killing' });
    expect(Object.keys(ev).sort()).toEqual(['displayMessage', 'killTimeout', 'time', 'type']);
  });

  it('keeps its keys in one order: type, time, the fields as given, then the display message', () => {
    const ev = taskEvent(TaskEventType.Terminated, 3, { exitCode: 1, message: undefined, signal: 0, details: { a: 'b' } });
    expect(Object.keys(ev)).toEqual(['type', 'time', 'exitCode', 'signal', 'details', 'displayMessage']);
    expect(JSON.stringify(ev)).toBe('{"type":"Terminated","time":3,"exitCode":1,"signal":0,"details":{"a":"b"},"displayMessage":"Exit Code: 1"}');
  });
});

describe("Nomad's task state: a new task runner's state and appendTaskEvent", () => {
  const at = (time: number, type: string = TaskEventType.Started, fields: Fields = {}): TaskEvent => taskEvent(type, time, fields);

  it('starts pending, not failed, with no restarts and the Received event (NewTaskRunner appends it)', () => {
    expect(newTaskState(5)).toEqual({
      state: 'pending',
      failed: false,
      restarts: 0,
      events: [{ type: 'Received', time: 5, displayMessage: 'Task received by client' }],
    });
  });

  it('appends the event and returns a new state, leaving the old one as it was', () => {
    const before = newTaskState(0);
    const after = appendEvent(before, at(1));
    expect(after.events.map((e) => e.type)).toEqual(['Received', 'Started']);
    expect(before.events.map((e) => e.type)).toEqual(['Received']);
    expect(after).not.toBe(before);
  });

  it('with no event, keeps the events as they were', () => {
    const before = newTaskState(0);
    expect(appendEvent(before, undefined).events).toBe(before.events);
  });

  it('marks the task failed for an event that fails it, and only for such an event', () => {
    expect(appendEvent(newTaskState(0), at(1, TaskEventType.DriverFailure, { failsTask: true })).failed).toBe(true);
    expect(appendEvent(newTaskState(0), at(1, TaskEventType.DriverFailure, { failsTask: false })).failed).toBe(false);
  });

  it('counts a Restarting event as a restart and records when it happened; other events do not', () => {
    const once = appendEvent(newTaskState(0), at(30, TaskEventType.Restarting));
    expect(once).toMatchObject({ restarts: 1, lastRestart: 30 });
    const twice = appendEvent(once, at(45, TaskEventType.Restarting));
    expect(twice).toMatchObject({ restarts: 2, lastRestart: 45 });
    const other = appendEvent(twice, at(50, TaskEventType.Terminated));
    expect(other).toMatchObject({ restarts: 2, lastRestart: 45 });
  });

  it('sets StartedAt at each move to running and clears FinishedAt', () => {
    const first = appendEvent(newTaskState(0), at(10), 'running');
    expect(first).toMatchObject({ state: 'running', startedAt: 10 });
    const dead = appendEvent(first, at(20, TaskEventType.Terminated), 'dead');
    expect(dead).toMatchObject({ state: 'dead', startedAt: 10, finishedAt: 20 });
    const again = appendEvent(dead, at(30), 'running');
    expect(again.startedAt).toBe(30);
    expect('finishedAt' in again).toBe(false);
  });

  it('sets FinishedAt once, at the first move to dead', () => {
    const dead: TaskState = { ...newTaskState(0), state: 'pending', finishedAt: 20 };
    expect(appendEvent(dead, at(40, TaskEventType.Killed), 'dead').finishedAt).toBe(20);
  });

  it('does not touch the times for a status the task already has, or a status without an event', () => {
    const running = appendEvent(newTaskState(0), at(10), 'running');
    expect(appendEvent(running, at(20), 'running').startedAt).toBe(10);
    const moved = appendEvent(newTaskState(0), undefined, 'running');
    expect(moved.state).toBe('running');
    expect('startedAt' in moved).toBe(false);
    const died = appendEvent(newTaskState(0), undefined, 'dead');
    expect(died.state).toBe('dead');
    expect('finishedAt' in died).toBe(false);
  });

  it('setStatus moves the task without an event, with the same StartedAt and FinishedAt rules', () => {
    const start = newTaskState(0);
    expect(setStatus(start, 'pending', 5)).toBe(start);
    const running = setStatus(start, 'running', 10);
    expect(running).toMatchObject({ state: 'running', startedAt: 10 });
    expect(running.events).toBe(start.events);
    const dead = setStatus(running, 'dead', 20);
    expect(dead).toMatchObject({ state: 'dead', startedAt: 10, finishedAt: 20 });
    const pending = setStatus(dead, 'pending', 25);
    expect(pending.finishedAt).toBe(20);
    expect(setStatus(pending, 'dead', 30).finishedAt).toBe(20);
    const rerun = setStatus(pending, 'running', 40);
    expect(rerun.startedAt).toBe(40);
    expect('finishedAt' in rerun).toBe(false);
  });
});
