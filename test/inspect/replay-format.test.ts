/** The replay lines' pure helpers: TaskState deltas written and read back, errors kept, versions judged. */
import { describe, expect, it } from 'vitest';
import {
  encodeReplayValue, expandSteps, replayFormatProblem, reviveReplayValue, stepCompactor, type ReplayStepLine,
} from '../../src/inspect/replay-format.ts';

const step = (taskState: unknown): ReplayStepLine => ({ kind: 'replay-step', to: ['a', 'web'], event: 'E', value: 'x', status: 'active', taskState });

describe('TaskStates in a recording', () => {
  it('are written as deltas while events only grow, and read back whole', () => {
    const e1 = { type: 'Received', time: 1 };
    const e2 = { type: 'Started', time: 2 };
    const e3 = { type: 'Terminated', time: 3, exitCode: 1 };
    const states = [
      { state: 'pending', failed: false, restarts: 0, events: [e1] },
      { state: 'running', failed: false, restarts: 0, startedAt: 2, events: [e1, e2] },
      { state: 'dead', failed: true, restarts: 0, startedAt: 2, finishedAt: 3, events: [e1, e2, e3] },
      // Not an extension of the last (events replaced): written whole.
      { state: 'pending', failed: false, restarts: 1, events: [e3] },
      // A field dropped.
      { state: 'pending', failed: false, events: [e3, e1] },
    ];
    const compact = stepCompactor();
    const written = states.map((ts) => JSON.parse(JSON.stringify(compact(step(ts)), encodeReplayValue)) as ReplayStepLine);
    expect(written.map((l) => (l.taskState ? 'whole' : 'delta'))).toEqual(['whole', 'delta', 'delta', 'whole', 'delta']);
    expect(written[2]!.taskStateDelta).toEqual({ set: { state: 'dead', failed: true, finishedAt: 3 }, append: [e3] });
    expect(written[4]!.taskStateDelta).toEqual({ unset: ['restarts'], append: [e1] });
    expect((expandSteps(written) as ReplayStepLine[]).map((l) => l.taskState)).toEqual(states);
  });

  it('keep an error as an Error with its own fields', () => {
    const err = Object.assign(new Error('no such binary'), { recoverable: false, eventType: 'Failed Validation' });
    const back = JSON.parse(JSON.stringify({ error: err }, encodeReplayValue), reviveReplayValue) as { error: Error & { recoverable: boolean; eventType: string } };
    expect(back.error).toBeInstanceOf(Error);
    expect([back.error.message, back.error.recoverable, back.error.eventType]).toEqual(['no such binary', false, 'Failed Validation']);
  });
});

describe('replayFormatProblem', () => {
  it('accepts this version and refuses others, saying which allocrun to use', () => {
    expect(replayFormatProblem({ kind: 'recording', version: 4, startedAt: 0, replay: 1 })).toBeUndefined();
    expect(replayFormatProblem({ kind: 'recording', version: 4, startedAt: 0 })).toMatch(/no replay inputs \(made by an older allocrun, replay format version 0\).*record the run again/);
    expect(replayFormatProblem({ kind: 'recording', version: 4, startedAt: 0, replay: 2 })).toMatch(/version 2, by a newer allocrun.*with the allocrun that recorded it/);
    expect(replayFormatProblem({ kind: 'recording', version: 4, startedAt: 0, replay: '1' })).toMatch(/not a number/);
    expect(replayFormatProblem({ kind: 'actor' })).toMatch(/does not start with a recording header/);
  });
});
