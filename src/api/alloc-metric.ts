/**
 * Nomad's AllocMetric for a task group that could not be placed, as its generic scheduler fills
 * `FailedTGAllocs` (scheduler/generic_sched.go, computePlacements): the metric is the first failed placement's
 * own (each placement starts from a fresh metric: scheduler/stack.go, Select), so its node counters and
 * `DimensionExhausted` say what that one attempt met; every further failure of the same group in the
 * evaluation is not evaluated again, it only adds one to `CoalescedFailures` and its tasks' asks to
 * `ResourcesExhausted` (nomad/structs, AllocMetric.ExhaustResources: memory when the first failure exhausted
 * memory, CPU when it exhausted CPU). This agent is one node, in datacenter `dc1` unless the agent is given another
 * (`allocrun agent --dc`).
 */
import { DEFAULT_DATACENTER as NODE_DATACENTER } from '../env/node-info.ts';
import type { Json } from './job-json.ts';

/** The datacenter of the agent's one node (its `GET /v1/node/:id`) when the agent is given none: the same default tasks see. */
export { NODE_DATACENTER };

/** What one task of a group that failed to place asked for, as the node's capacity counts it. */
export interface TaskAsk {
  name: string;
  cpu: number;
  memoryMB: number;
}

/**
 * One placement that failed: Nomad's exhausted dimension, the node's datacenter (where it was available), what
 * its tasks asked for, how long the attempt took (ns).
 */
export interface FailedPlacement {
  dimension: string;
  datacenter?: string;
  tasks: readonly TaskAsk[];
  allocationTime?: number;
}

/** Nomad's `Resources` with only what ExhaustResources adds (CPU, MemoryMB) set. */
function exhaustedResources(cpu: number, memoryMB: number): Json {
  return { CPU: cpu, Cores: 0, MemoryMB: memoryMB, MemoryMaxMB: 0, DiskMB: 0, IOPS: 0, Networks: null, Devices: null, NUMA: null, SecretsMB: 0 };
}

/** The AllocMetric of a group whose placements `failures` (in the order tried, at least one) all failed. */
export function failedGroupMetric(failures: readonly FailedPlacement[]): Json {
  const first = failures[0];
  if (!first) throw new Error('failedGroupMetric: a failed group has at least one failed placement');
  // ExhaustResources, once for the first failure and once per coalesced one, each with that placement's group: every
  // task gets an entry, since a failed placement always has an exhausted dimension here.
  const exhausted = new Map<string, { cpu: number; memoryMB: number }>();
  for (const f of failures) {
    for (const t of f.tasks) {
      const r = exhausted.get(t.name) ?? { cpu: 0, memoryMB: 0 };
      if (first.dimension === 'memory') r.memoryMB += t.memoryMB;
      if (first.dimension === 'cpu') r.cpu += t.cpu;
      exhausted.set(t.name, r);
    }
  }
  return {
    NodesEvaluated: 1, NodesFiltered: 0, NodesInPool: 1, NodesAvailable: { [first.datacenter ?? NODE_DATACENTER]: 1 }, ClassFiltered: null, ConstraintFiltered: null,
    NodesExhausted: 1, ClassExhausted: null, DimensionExhausted: { [first.dimension]: 1 }, QuotaExhausted: null,
    ResourcesExhausted: Object.fromEntries([...exhausted].map(([task, r]) => [task, exhaustedResources(r.cpu, r.memoryMB)])),
    Scores: null, ScoreMetaData: null, AllocationTime: first.allocationTime ?? 0, CoalescedFailures: failures.length - 1,
  };
}
