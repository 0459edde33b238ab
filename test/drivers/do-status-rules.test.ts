/**
 * The status rules under SwarmKit's Do and Resolve (src/drivers/do.ts): a transition to the state the task
 * is already in is allowed (only a lower one is refused); statuses are compared as data, timestamps aside,
 * where null, a string or a list is never taken for an object; Resolve accepts only a task below ACCEPTED
 * and leaves an accepted task's message and error as they were.
 */
import { describe, expect, it } from 'vitest';
import { Resolve, statusesEqualStable, transitionStatus } from '../../src/drivers/do.ts';
import { SwarmTaskState, type SwarmTask, type SwarmTaskStatus } from '../../src/drivers/task-status.ts';

const status = (extra: Record<string, unknown> = {}): SwarmTaskStatus => ({ timestamp: 5, state: SwarmTaskState.RUNNING, message: 'started', ...extra }) as SwarmTaskStatus;

describe('transitionStatus', () => {
  it('allows a transition to the state the task is in, with the new message', () => {
    expect(transitionStatus(status({ err: 'old' }), SwarmTaskState.RUNNING, 'still running')).toEqual({ timestamp: 5, state: SwarmTaskState.RUNNING, message: 'still running' });
  });
});

describe('statusesEqualStable', () => {
  it.each<[string, unknown, unknown, boolean]>([
    ['equal data, whatever the timestamps', { exitCode: 1 }, { exitCode: 1 }, true],
    ['null is not an empty object', null, {}, false],
    ['an empty object is not null', {}, null, false],
    ['a string is not an object with its characters', 'ab', { 0: 'a', 1: 'b' }, false],
    ['an object with characters is not a string', { 0: 'a', 1: 'b' }, 'ab', false],
    ['a list is not an object', [], {}, false],
  ])('%s', (_what, a, b, equal) => {
    expect(statusesEqualStable(status({ timestamp: 1, portStatus: a }), status({ timestamp: 2, portStatus: b }))).toBe(equal);
  });
});

describe('Resolve', () => {
  const task = (state: SwarmTaskState): SwarmTask => ({
    id: 't1',
    desiredState: SwarmTaskState.RUNNING,
    status: { timestamp: 3, state, message: 'as it was', err: 'earlier error' },
    spec: { name: 't', driver: 'mock', config: {} },
  });
  const executor = { controller: async () => ({}) as never };

  it('accepts a task below ACCEPTED, clearing its error', async () => {
    expect((await Resolve(task(SwarmTaskState.ASSIGNED), executor)).status).toEqual({ timestamp: 3, state: SwarmTaskState.ACCEPTED, message: 'accepted' });
  });

  it('leaves a task already ACCEPTED as it was', async () => {
    expect((await Resolve(task(SwarmTaskState.ACCEPTED), executor)).status).toEqual({ timestamp: 3, state: SwarmTaskState.ACCEPTED, message: 'as it was', err: 'earlier error' });
  });
});
