/**
 * A failed group's AllocMetric as Nomad's generic scheduler reports it (rows): the first failed placement's
 * own metric, the group's further failures coalesced into it (scheduler/generic_sched.go, computePlacements;
 * nomad/structs AllocMetric.ExhaustResources; scheduler/stack.go Select resets the metric per placement).
 */
import { describe, expect, it } from 'vitest';
import { failedGroupMetric } from '../../src/api/alloc-metric.ts';
import { failedTGAllocs } from '../../src/api/blocked-evals.ts';
import type { PlacementFailure } from '../../src/api/job-registry.ts';

const PORT = 'network: reserved port collision http=8080';
const fail = (dimension: string, tasks: PlacementFailure['tasks'] = [{ name: 't', cpu: 0, memoryMB: 0 }], allocationTime = 1000): PlacementFailure => ({
  evalId: 'e1', group: 'g', dimension, reason: `${dimension} is short`, tasks, allocationTime,
});
const zero = { CPU: 0, Cores: 0, MemoryMB: 0, MemoryMaxMB: 0, DiskMB: 0, IOPS: 0, Networks: null, Devices: null, NUMA: null, SecretsMB: 0 };
const metricOf = (failures: PlacementFailure[]) => failedTGAllocs(failures)!['g'];

describe('a failed group\'s AllocMetric', () => {
  it.each([
    ['two placements colliding on a static port: the node exhausted once, the second coalesced',
      [fail(PORT), fail(PORT)], { NodesExhausted: 1, DimensionExhausted: { [PORT]: 1 }, CoalescedFailures: 1 }],
    ['a later failure on another dimension is coalesced, not counted as exhausted',
      [fail('memory'), fail('cpu'), fail('cpu')], { DimensionExhausted: { memory: 1 }, CoalescedFailures: 2 }],
    ['the node\'s datacenter counted as available, as the scheduler\'s ready nodes per datacenter',
      [fail('memory')], { NodesAvailable: { dc1: 1 }, NodesInPool: 1, NodesEvaluated: 1 }],
    ['memory exhausted first: every failure\'s memory ask added per task, tasks asking nothing listed at zero',
      [fail('memory', [{ name: 'a', cpu: 50, memoryMB: 600 }, { name: 'b', cpu: 0, memoryMB: 0 }]), fail('memory', [{ name: 'a', cpu: 50, memoryMB: 600 }, { name: 'b', cpu: 0, memoryMB: 0 }])],
      { ResourcesExhausted: { a: { ...zero, MemoryMB: 1200 }, b: zero } }],
    ['cpu exhausted first: CPU asks added, memory not, even for a coalesced failure on memory',
      [fail('cpu', [{ name: 't', cpu: 500, memoryMB: 100 }]), fail('memory', [{ name: 't', cpu: 500, memoryMB: 100 }])],
      { ResourcesExhausted: { t: { ...zero, CPU: 1000 } } }],
    ['a port or cores failure lists every task with nothing added',
      [fail(PORT, [{ name: 'x', cpu: 10, memoryMB: 10 }, { name: 'y', cpu: 10, memoryMB: 10 }])], { ResourcesExhausted: { x: zero, y: zero } }],
    ['the allocation time is the first attempt\'s',
      [fail('cores', undefined, 1500), fail('cores', undefined, 99)], { AllocationTime: 1500, DimensionExhausted: { cores: 1 }, ResourcesExhausted: { t: zero } }],
  ] as const)('%s', (_name, failures, expected) => {
    const metric = metricOf([...failures]);
    expect(metric).toMatchObject(expected);
    // The maps hold exactly what is expected (toMatchObject alone would let a summed-up key through).
    for (const key of ['DimensionExhausted', 'ResourcesExhausted', 'NodesAvailable'] as const) {
      if (key in expected) expect((metric as Record<string, unknown>)[key]).toEqual((expected as Record<string, unknown>)[key]);
    }
  });

  it('is made only for a group that failed at least once', () => {
    expect(() => failedGroupMetric([])).toThrow('failedGroupMetric: a failed group has at least one failed placement');
  });

  it('has every field of Nomad\'s AllocationMetric, the ones a one-node agent never fills null', () => {
    expect(metricOf([fail('memory', [{ name: 't', cpu: 0, memoryMB: 300 }], 2500), fail('memory', [{ name: 't', cpu: 0, memoryMB: 300 }])])).toEqual({
      NodesEvaluated: 1, NodesFiltered: 0, NodesInPool: 1, NodesAvailable: { dc1: 1 }, ClassFiltered: null, ConstraintFiltered: null,
      NodesExhausted: 1, ClassExhausted: null, DimensionExhausted: { memory: 1 }, QuotaExhausted: null,
      ResourcesExhausted: { t: { ...zero, MemoryMB: 600 } }, Scores: null, ScoreMetaData: null, AllocationTime: 2500, CoalescedFailures: 1,
    });
  });
});
