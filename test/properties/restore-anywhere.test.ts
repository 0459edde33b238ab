import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PROPERTY_RUNS, PROPERTY_SEED, PROPERTY_TIMEOUT, restorePlanArb } from './arbitraries.ts';
import { invariantBreaks, outcomeOf, runWorld, type Outcome } from './run-world.ts';

/** What must not differ between a run and the same run restored midway: states, events in order, starts. */
function comparable(o: Outcome) {
  return {
    top: o.top,
    clientStatus: o.state.clientStatus,
    tasks: Object.fromEntries(
      Object.entries(o.state.taskStates).map(([name, ts]) => [
        name,
        { state: ts.state, failed: ts.failed, restarts: ts.restarts, events: ts.events.map((e) => e.type) },
      ]),
    ),
    workloadsStarted: o.starts,
  };
}

describe('restore at any step', () => {
  it(`ends like the uninterrupted run when the alloc is persisted and restored at a random step (${PROPERTY_RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(restorePlanArb, async ({ plan, restoreAt }) => {
        const straight = await runWorld(plan);
        const restored = await runWorld(plan, restoreAt);
        expect(restored.restores).toBe(1);
        expect(invariantBreaks(restored)).toEqual([]);
        expect(comparable(outcomeOf(restored))).toEqual(comparable(outcomeOf(straight)));
      }),
      { numRuns: PROPERTY_RUNS, seed: PROPERTY_SEED },
    );
  }, PROPERTY_TIMEOUT);
});
