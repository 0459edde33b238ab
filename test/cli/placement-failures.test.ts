/** `allocrun job run`'s report of allocations the scheduler could not place, in Nomad's monitor's words (rows). */
import { describe, expect, it } from 'vitest';
import { placementFailureLines, type EvaluationBody } from '../../src/cli/placement-failures.ts';

const ev = (failed: EvaluationBody['FailedTGAllocs'], blocked?: string): EvaluationBody => ({ ID: 'e1e2e3e4-0000', Status: 'complete', FailedTGAllocs: failed, ...(blocked && { BlockedEval: blocked }) });

describe('placementFailureLines', () => {
  it.each([
    ['everything placed', ev(undefined), []],
    ['everything placed (null, as Go encodes an empty map)', ev(null), []],
    ['one group out of memory, with its blocked evaluation', ev({ g: { NodesExhausted: 1, DimensionExhausted: { memory: 1 } } }, 'b1b2b3b4-0000'), [
      '==> Evaluation "e1e2e3e4" finished with status "complete" but failed to place all allocations:',
      '    Task Group "g" (failed to place 1 allocation):',
      '      * Resources exhausted on 1 nodes',
      '      * Dimension "memory" exhausted on 1 nodes',
      '    Evaluation "b1b2b3b4" waiting for additional capacity to place remainder',
    ]],
    ['coalesced failures counted, groups in name order, constraints named', ev({
      web: { NodesExhausted: 1, CoalescedFailures: 2, DimensionExhausted: { 'network: reserved port collision admin=9901': 1 } },
      api: { ConstraintFiltered: { '${attr.kernel.name} = windows': 1 } },
    }), [
      '==> Evaluation "e1e2e3e4" finished with status "complete" but failed to place all allocations:',
      '    Task Group "api" (failed to place 1 allocation):',
      '      * Constraint "${attr.kernel.name} = windows": 1 nodes excluded by filter',
      '    Task Group "web" (failed to place 3 allocations):',
      '      * Resources exhausted on 1 nodes',
      '      * Dimension "network: reserved port collision admin=9901" exhausted on 1 nodes',
    ]],
    ['a datacenter the node is not in: no node evaluated', ev({ g: { NodesEvaluated: 0, NodesExhausted: 0 } }), [
      '==> Evaluation "e1e2e3e4" finished with status "complete" but failed to place all allocations:',
      '    Task Group "g" (failed to place 1 allocation):',
      '      * No nodes were eligible for evaluation',
    ]],
  ] as const)('%s', (_name, evaluation, lines) => {
    expect(placementFailureLines(evaluation)).toEqual(lines);
  });
});
