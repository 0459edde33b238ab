/**
 * Edges of the pure units the task and alloc runners lean on: the restart tracker's empty decision, the
 * jitter source's exact Mulberry32 sequence (so a seeded run replays the same restart delays as before),
 * and the alloc's task-state reducer, which kills siblings only for a failed task that is dead and reports
 * only the gates that changed.
 */
import { describe, expect, it } from 'vitest';
import { decideRestart, mulberry32, newRestartTracker } from '../../machines/restart-tracker.ts';
import { reduceTaskStates, type ReducerInput } from '../../machines/task-state-reducer.ts';
import type { TaskSpec, TaskState, TaskStatus } from '../../machines/model.ts';

describe('restart tracker edges', () => {
  it('gives no decision, no delay and no reason when nothing flagged the run', () => {
    const d = decideRestart({
      policy: { attempts: 2, interval: 60_000, delay: 1_000, mode: 'fail' },
      jobType: 'service',
      tracker: newRestartTracker(0),
      trigger: { kind: 'none' },
      now: 10,
      random: () => 0.5,
    });
    expect(d).toEqual({ decision: 'none', delay: 0, reason: '', tracker: { count: 1, windowStart: 0 } });
  });

  it('draws the reference Mulberry32 sequence, so seeded restart jitter is the same on every version', () => {
    // Values of the reference implementation (bryc's mulberry32) for seeds 0, 1 and 42.
    const first3 = (seed: number) => {
      const r = mulberry32(seed);
      return [r.next(), r.next(), r.next()];
    };
    expect(first3(0)).toEqual([0.26642920868471265, 0.0003297457005828619, 0.2232720274478197]);
    expect(first3(1)).toEqual([0.6270739405881613, 0.002735721180215478, 0.5274470399599522]);
    expect(first3(42)).toEqual([0.6011037519201636, 0.44829055899754167, 0.8524657934904099]);
  });
});

const ts = (state: TaskStatus, failed = false): TaskState => ({ state, failed, restarts: 0, events: [] });
const main: TaskSpec = { name: 'main', driver: 'mock', config: {} };
const other: TaskSpec = { name: 'other', driver: 'mock', config: {} };
const side: TaskSpec = { name: 'side', driver: 'mock', config: {}, lifecycle: { hook: 'prestart', sidecar: true } };

function input(tasks: TaskSpec[], states: Record<string, TaskState>): ReducerInput {
  return {
    tasks, taskStates: states, runComplete: {}, restartPending: {}, killEventSent: false, killing: false,
    coordinator: 'main', open: ['preSide', 'main'], now: 5,
  };
}

describe('task-state reducer edges', () => {
  it('does not kill the siblings of a task that is marked failed but still runs (it is not dead yet)', () => {
    const fx = reduceTaskStates(input([main, other], { main: ts('running', true), other: ts('running') }));
    expect(fx.killEvent).toBeUndefined();
    expect(fx.startKill).toBe(false);
  });

  it('reports only gates that changed: a stage opening that no task waits on reports none', () => {
    const fx = reduceTaskStates(input([side, main], { side: ts('running'), main: ts('running') }));
    expect(fx.open).toEqual(['preSide', 'main', 'postSide']);
    expect(fx.gates).toEqual([]);
  });
});
