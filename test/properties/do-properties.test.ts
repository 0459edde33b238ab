import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  Do,
  ErrTaskNoop,
  ErrTaskPrepared,
  ErrTaskRetry,
  ErrTaskStarted,
  ExitError,
  ContainerStatusError,
  Resolve,
  SwarmTaskState,
  makeTemporary,
  type Controller,
  type SwarmTask,
  type SwarmTaskState as State,
} from '../../src/index.ts';
import { StubController } from '../../src/testing/index.ts';
import { PROPERTY_RUNS, PROPERTY_SEED, PROPERTY_TIMEOUT } from './arbitraries.ts';

const { NEW, PENDING, ASSIGNED, ACCEPTED, PREPARING, READY, STARTING, RUNNING, COMPLETE, SHUTDOWN, FAILED, REJECTED, REMOVE, ORPHANED } =
  SwarmTaskState;
const STATES: State[] = [NEW, PENDING, ASSIGNED, ACCEPTED, PREPARING, READY, STARTING, RUNNING, COMPLETE, SHUTDOWN, FAILED, REJECTED];
const DESIRED: State[] = [ACCEPTED, READY, RUNNING, SHUTDOWN, REMOVE, ORPHANED];

/** What one controller call does. */
type Behaviour = 'ok' | 'temporary' | 'fatal' | 'cancel' | 'already' | 'exit1' | 'exitError' | 'statusError' | 'string' | 'null';
const behaviourArb = fc.constantFrom<Behaviour>('ok', 'ok', 'ok', 'temporary', 'fatal', 'cancel', 'already', 'exit1', 'exitError', 'statusError', 'string', 'null');

type Step = { kind: 'do' } | { kind: 'raise'; desired: State };
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ kind: 'do' as const }) },
  { weight: 1, arbitrary: fc.constantFrom(...DESIRED).map((desired) => ({ kind: 'raise' as const, desired })) },
);

const runArb = fc.record({
  state: fc.constantFrom(...STATES),
  desired: fc.constantFrom(...DESIRED),
  behaviours: fc.array(behaviourArb, { maxLength: 30 }),
  statuser: fc.boolean(),
  portStatuser: fc.boolean(),
  steps: fc.array(stepArb, { minLength: 1, maxLength: 30 }),
});

function throwFor(b: Behaviour, method: string): unknown {
  switch (b) {
    case 'temporary':
      return makeTemporary(new Error(`${method}: engine busy`));
    case 'fatal':
      return new Error(`${method}: no such image`);
    case 'cancel':
      return new DOMException('The operation was aborted.', 'AbortError');
    case 'already':
      return method === 'prepare' ? new ErrTaskPrepared() : method === 'start' ? new ErrTaskStarted() : new Error(`${method}: odd`);
    case 'exitError':
      return new ExitError({ exitCode: 3, containerStatus: { containerId: 'c1', pid: 7, exitCode: 3 } });
    case 'statusError':
      return new ContainerStatusError(`${method}: no such container`, { containerId: 'c1' });
    case 'string':
      return `${method} threw a string`;
    case 'null':
      return null;
    default:
      return undefined;
  }
}

/** A stub whose every progression call takes the next scripted behaviour ('ok' once the script runs out). */
function scriptedController(behaviours: Behaviour[], statuser: boolean, portStatuser: boolean): StubController {
  const queue = [...behaviours];
  const act = async (method: string) => {
    const b = queue.shift() ?? 'ok';
    if (b === 'ok' || (b === 'exit1' && method !== 'wait')) return;
    if (b === 'exit1') return;
    throw throwFor(b, method);
  };
  return new StubController({
    prepare: () => act('prepare'),
    start: () => act('start'),
    shutdown: () => act('shutdown'),
    wait: async () => {
      const next = queue[0];
      await act('wait');
      return next === 'exit1' ? { exitCode: 1, signal: 0 } : { exitCode: 0, signal: 0 };
    },
    ...(statuser ? { containerStatus: async () => ({ containerId: 'c1', pid: 7 }) } : {}),
    ...(portStatuser ? { portStatus: async () => ({ ports: [] }) } : {}),
  });
}

const PROGRESSION = ['prepare', 'start', 'wait', 'shutdown'] as const;
const progressionCalls = (c: StubController) => PROGRESSION.reduce((n, m) => n + c.callCount(m), 0);

describe("SwarmKit's Do under random controllers", () => {
  it("never moves a task backwards, never lets a task error escape, never reports above SHUTDOWN, never moves time back", async () => {
    await fc.assert(
      fc.asyncProperty(runArb, async (run) => {
        const ctrl = scriptedController(run.behaviours, run.statuser, run.portStatuser);
        let task: SwarmTask = {
          id: 't',
          desiredState: run.desired,
          status: { timestamp: 100, state: run.state, message: '' },
          spec: { name: 'web', driver: 'mock', config: {} },
        };
        let clock = 1_000;
        for (const step of run.steps) {
          if (step.kind === 'raise') {
            // Only the manager writes the desired state, and only ever raises it.
            task = { ...task, desiredState: Math.max(task.desiredState, step.desired) as State };
            continue;
          }
          const before = task.status;
          const callsBefore = progressionCalls(ctrl);
          clock += 10;
          const result = await Do(task, ctrl, { now: () => clock }).then(
            (r) => r,
            (err: unknown) => ({ escaped: err }),
          );
          if ('escaped' in result) throw new Error(`Do let an error escape from ${before.state}: ${String(result.escaped)}`);
          const { status, error } = result;
          if (error !== undefined) expect(error instanceof ErrTaskNoop || error instanceof ErrTaskRetry).toBe(true);
          expect(status.state).toBeGreaterThanOrEqual(before.state);
          expect(status.timestamp).toBeGreaterThanOrEqual(before.timestamp);
          expect([REMOVE, ORPHANED]).not.toContain(status.state);
          // A desired SHUTDOWN/REMOVE/ORPHANED ends at SHUTDOWN, or at FAILED/REJECTED when the shutdown failed.
          if (task.desiredState >= SHUTDOWN && status.state !== before.state) expect([SHUTDOWN, FAILED, REJECTED]).toContain(status.state);
          // At most one controller call per step (status queries aside).
          expect(progressionCalls(ctrl) - callsBefore).toBeLessThanOrEqual(1);
          if (status.state === FAILED || status.state === REJECTED) {
            if (status.state !== before.state) expect(typeof status.err).toBe('string');
          }
          task = { ...task, status };
        }
      }),
      { numRuns: PROPERTY_RUNS * 5, seed: PROPERTY_SEED },
    );
  }, PROPERTY_TIMEOUT);

  it('Resolve never throws, never moves a task backwards and never touches the timestamp', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...STATES), behaviourArb, async (state, b) => {
        const task: SwarmTask = {
          id: 't',
          desiredState: RUNNING,
          status: { timestamp: 100, state, message: 'before' },
          spec: { name: 'web', driver: 'mock', config: {} },
        };
        const executor = {
          controller: async (): Promise<Controller> => {
            if (b !== 'ok') throw throwFor(b, 'controller');
            return new StubController();
          },
        };
        const result = await Resolve(task, executor);
        expect(result.status.state).toBeGreaterThanOrEqual(state);
        expect(result.status.timestamp).toBe(100);
        expect(result.controller === undefined).toBe(b !== 'ok');
      }),
      { numRuns: PROPERTY_RUNS * 5, seed: PROPERTY_SEED },
    );
  }, PROPERTY_TIMEOUT);
});
