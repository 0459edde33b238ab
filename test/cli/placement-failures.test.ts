/** `allocrun job run`'s report of allocations the scheduler could not place, in Nomad's monitor's words (rows). */
import { describe, expect, it } from 'vitest';
import { placementFailureLines, type EvaluationBody } from '../../src/cli/placement-failures.ts';

const ev = (failed: EvaluationBody['FailedTGAllocs'], blocked?: string): EvaluationBody => ({ ID: 'e1e2e3e4-0000', Status: 'complete', FailedTGAllocs: failed, ...(blocked && { BlockedEval: blocked }) });

describe('placementFailureLines', () => {
  it.each([
    ['everything placed', ev(undefined), []],
    ['everything placed (null, as Go encodes an empty map)', ev(null), []],
    ['one group out of memory, with its blocked evaluation', ev({ g: { NodesEvaluated: 1, NodesExhausted: 1, DimensionExhausted: { memory: 1 } } }, 'b1b2b3b4-0000'), [
      '==> Evaluation "e1e2e3e4" finished with status "complete" but failed to place all allocations:',
      '    Task Group "g" (failed to place 1 allocation):',
      '      * Resources exhausted on 1 nodes',
      '      * Dimension "memory" exhausted on 1 nodes',
      '    Evaluation "b1b2b3b4" waiting for additional capacity to place remainder',
    ]],
    ['coalesced failures counted, groups in name order, constraints named', ev({
      web: { NodesEvaluated: 1, NodesExhausted: 1, CoalescedFailures: 2, DimensionExhausted: { 'network: reserved port collision admin=9901': 1 } },
      api: { NodesEvaluated: 1, ConstraintFiltered: { '${attr.kernel.name} = windows': 1 } },
    }), [
      '==> Evaluation "e1e2e3e4" finished with status "complete" but failed to place all allocations:',
      '    Task Group "api" (failed to place 1 allocation):',
      '      * Constraint "${attr.kernel.name} = windows": 1 nodes excluded by filter',
      '    Task Group "web" (failed to place 3 allocations):',
      '      * Resources exhausted on 1 nodes',
      '      * Dimension "network: reserved port collision admin=9901" exhausted on 1 nodes',
    ]],
    // The rows below are Nomad's formatAllocMetrics (command/monitor.go) facts the report did not print before.
    ['no node evaluated: Nomad says none was eligible', ev({ g: { NodesEvaluated: 0 } }), [
      '==> Evaluation "e1e2e3e4" finished with status "complete" but failed to place all allocations:',
      '    Task Group "g" (failed to place 1 allocation):',
      '      * No nodes were eligible for evaluation',
    ]],
    ['a datacenter with no node available named, one with nodes not', ev({ g: { NodesEvaluated: 0, NodesAvailable: { dc2: 0, dc1: 1 } } }), [
      '==> Evaluation "e1e2e3e4" finished with status "complete" but failed to place all allocations:',
      '    Task Group "g" (failed to place 1 allocation):',
      '      * No nodes were eligible for evaluation',
      '      * No nodes are available in datacenter "dc2"',
    ]],
    ['node classes filtered and exhausted, and quota limits, in Nomad\'s order', ev({ g: {
      NodesEvaluated: 3, QuotaExhausted: ['memory'], DimensionExhausted: { cpu: 1 }, ClassExhausted: { big: 1 }, NodesExhausted: 1,
      ConstraintFiltered: { '${meta.rack} = r1': 1 }, ClassFiltered: { gpu: 1 }, CoalescedFailures: 1,
    } }), [
      '==> Evaluation "e1e2e3e4" finished with status "complete" but failed to place all allocations:',
      '    Task Group "g" (failed to place 2 allocations):',
      '      * Class "gpu": 1 nodes excluded by filter',
      '      * Constraint "${meta.rack} = r1": 1 nodes excluded by filter',
      '      * Resources exhausted on 1 nodes',
      '      * Class "big" exhausted on 1 nodes',
      '      * Dimension "cpu" exhausted on 1 nodes',
      '      * Quota limit hit "memory"',
    ]],
    ['names quoted as Go\'s %q quotes them', ev({ 'we"b': { NodesEvaluated: 1, NodesExhausted: 1, DimensionExhausted: { 'network: reserved port collision a"b=80': 1 } } }), [
      '==> Evaluation "e1e2e3e4" finished with status "complete" but failed to place all allocations:',
      '    Task Group "we\\"b" (failed to place 1 allocation):',
      '      * Resources exhausted on 1 nodes',
      '      * Dimension "network: reserved port collision a\\"b=80" exhausted on 1 nodes',
    ]],
  ] as const)('%s', (_name, evaluation, lines) => {
    expect(placementFailureLines(evaluation)).toEqual(lines);
  });
});
