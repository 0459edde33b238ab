import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PROPERTY_RUNS, PROPERTY_SEED, PROPERTY_TIMEOUT, worldPlanArb } from './arbitraries.ts';
import { invariantBreaks, runWorld } from './run-world.ts';

describe('alloc runner under random event storms', () => {
  it(`keeps Nomad's invariants over ${PROPERTY_RUNS} random allocations and command sequences`, async () => {
    await fc.assert(
      fc.asyncProperty(worldPlanArb, async (plan) => {
        const w = await runWorld(plan);
        expect(invariantBreaks(w)).toEqual([]);
      }),
      { numRuns: PROPERTY_RUNS, seed: PROPERTY_SEED },
    );
  }, PROPERTY_TIMEOUT);
});
