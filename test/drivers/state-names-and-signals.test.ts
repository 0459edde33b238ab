/**
 * SwarmKit's task states are shown by name (`STATE(n)` for a number it does not define), a fresh status
 * has no message unless given one, and a signal name that Linux does not know is refused by name.
 */
import { describe, expect, it } from 'vitest';
import { newSwarmTaskStatus, swarmTaskStateName, SwarmTaskState } from '../../src/drivers/task-status.ts';
import { killedBy, signalNumber } from '../../src/drivers/signals.ts';

describe('task state names', () => {
  it.each(Object.entries(SwarmTaskState))('%s is shown by its name', (name, value) => {
    expect(swarmTaskStateName(value)).toBe(name);
  });

  it('a number SwarmKit does not define is STATE(n)', () => {
    expect(swarmTaskStateName(65)).toBe('STATE(65)');
  });

  it('a fresh status is NEW with no message and no time, unless given them', () => {
    expect(newSwarmTaskStatus()).toEqual({ timestamp: 0, state: SwarmTaskState.NEW, message: '' });
    expect(newSwarmTaskStatus(SwarmTaskState.READY, 'prepared')).toEqual({ timestamp: 0, state: SwarmTaskState.READY, message: 'prepared' });
  });
});

describe('signals', () => {
  it('a name Linux does not know is refused, naming it', () => {
    expect(() => signalNumber('NOPE')).toThrow('unknown signal "NOPE": use a name like SIGTERM, SIGINT or SIGHUP');
    expect(() => killedBy('SIGNOPE')).toThrow(/unknown signal "SIGNOPE"/);
  });
});
