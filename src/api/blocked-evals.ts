/**
 * What an evaluation records when groups could not be placed, the way Nomad's generic scheduler does it:
 * the evaluation itself completes, with an AllocMetric per failed group in `FailedTGAllocs` and the counts
 * in `QueuedAllocations`, and a new evaluation is created `blocked` (TriggeredBy `queued-allocs`,
 * "created to place remaining allocations", `PreviousEval` → the one that failed, whose `BlockedEval`
 * points at it). When capacity frees, the blocked evaluation itself is processed again: it completes once
 * everything is placed, else it stays blocked with the new failures (Nomad's reblock). A job has at most
 * one open blocked evaluation: a newer one cancels the older ("existing blocked evaluation exists for job"),
 * and an evaluation that places everything cancels it too (Nomad stops tracking it; it is marked canceled
 * here so `nomad eval list` does not show it waiting for ever).
 */
import { randomUUID } from 'node:crypto';
import { failedGroupMetric, NODE_DATACENTER } from './alloc-metric.ts';
import type { Json } from './job-json.ts';
import type { EvalRecord, PlacementFailure } from './job-registry.ts';
import type { Infeasible } from '../jobspec/constraints.ts';

/** Nomad's StatusDescription of a blocked evaluation made because placements failed. */
export const BLOCKED_DESCRIPTION = 'created to place remaining allocations';

/** Nomad's StatusDescription of a blocked evaluation made because the plan could not be applied. */
export const MAX_PLAN_DESCRIPTION = 'created due to placement conflicts';

/** How many times Nomad's generic scheduler submits an evaluation's plan before it fails it. */
export const planAttempts = (type: string): number => (type === 'batch' ? 2 : 5);

/**
 * An evaluation whose plan could not be applied (here: written to the store) `limit` times, as Nomad's
 * scheduler leaves it: `failed` ("maximum attempts reached (N)"), with a new blocked evaluation
 * (TriggeredBy `max-plan-attempts`, "created due to placement conflicts") to try again when capacity frees.
 */
export function failedAfterAttempts(e: EvalRecord, limit: number, index: number, now: number): [failed: EvalRecord, blocked: EvalRecord] {
  const blocked: EvalRecord = {
    ID: randomUUID(), Namespace: e.Namespace, Priority: e.Priority, Type: e.Type, TriggeredBy: 'max-plan-attempts', JobID: e.JobID,
    JobModifyIndex: e.JobModifyIndex, Status: 'blocked', StatusDescription: MAX_PLAN_DESCRIPTION, PreviousEval: e.ID,
    ...(e.FailedTGAllocs && { FailedTGAllocs: e.FailedTGAllocs }), ...(e.QueuedAllocations && { QueuedAllocations: e.QueuedAllocations }),
    CreateIndex: index, ModifyIndex: index, CreateTime: now, ModifyTime: now,
  };
  return [{ ...e, Status: 'failed', StatusDescription: `maximum attempts reached (${limit})`, BlockedEval: blocked.ID, ModifyIndex: index, ModifyTime: now }, blocked];
}

function byGroup(failed: readonly PlacementFailure[]): Map<string, PlacementFailure[]> {
  const groups = new Map<string, PlacementFailure[]>();
  for (const f of failed) groups.set(f.group, [...(groups.get(f.group) ?? []), f]);
  return groups;
}

/**
 * Nomad's FailedTGAllocs: per group that failed, the first failed placement's AllocMetric with the others
 * coalesced into it (see alloc-metric.ts); undefined when none failed.
 */
export function failedTGAllocs(failed: readonly PlacementFailure[]): Record<string, Json> | undefined {
  if (failed.length === 0) return undefined;
  return Object.fromEntries([...byGroup(failed)].map(([g, fs]) => [g, fs[0]!.filter ? filteredMetric(fs[0]!.filter, fs.length, fs[0]!.datacenter ?? NODE_DATACENTER) : failedGroupMetric(fs)]));
}

/**
 * The AllocMetric of a group the node was filtered out for, as Nomad's scheduler records it: a node pool or a
 * datacenter the job does not put the node in leaves no node to evaluate (no node in the pool: `NodesInPool` 0,
 * `NodesAvailable` empty); a constraint evaluates the node and filters it (`ConstraintFiltered`). None exhausts anything.
 */
function filteredMetric(filter: Infeasible, failures: number, datacenter: string): Json {
  const dc = 'datacenter' in filter || 'pool' in filter;
  return {
    NodesEvaluated: dc ? 0 : 1, NodesFiltered: dc ? 0 : 1, NodesInPool: dc ? 0 : 1, NodesAvailable: dc ? {} : { [datacenter]: 1 }, ClassFiltered: null,
    ConstraintFiltered: dc ? null : { [filter.constraint]: 1 }, NodesExhausted: 0, ClassExhausted: null, DimensionExhausted: null,
    QuotaExhausted: null, ResourcesExhausted: null, Scores: null, ScoreMetaData: null, AllocationTime: 0, CoalescedFailures: failures - 1,
  };
}

/** The sentence for people: per group, how many could not be placed and the first reason. */
export function failureSummary(failed: readonly PlacementFailure[]): string {
  return [...byGroup(failed)].map(([g, fs]) => `failed to place ${fs.length} allocation${fs.length === 1 ? '' : 's'} of group ${JSON.stringify(g)}: ${fs[0]!.reason}`).join('; ');
}

/** What settling a write's evaluations adds: evaluations to write besides them (new blocked ones, canceled old ones). */
export interface Settled {
  /** Every evaluation to write, the write's own first. */
  evals: EvalRecord[];
  /** The job's open blocked evaluation after the write, per job touched (undefined: none). */
  blocked: Map<string, string | undefined>;
}

/**
 * Gives each of a write's evaluations its outcome from the placements that failed under it, at `index` and
 * `now` (ns). `open` is each job's open blocked evaluation before the write. The records passed in are the
 * write's own drafts and are changed; open evaluations are copied before they change.
 */
export function settleEvaluations(evals: readonly EvalRecord[], failed: readonly PlacementFailure[], open: (jobId: string) => EvalRecord | undefined, index: number, now: number): Settled {
  const out: EvalRecord[] = [...evals];
  const blocked = new Map<string, string | undefined>();
  const cancel = (e: EvalRecord | undefined, why: string) => {
    if (!e || e.Status !== 'blocked' || evals.some((w) => w.ID === e.ID)) return;
    out.push({ ...e, Status: 'canceled', StatusDescription: why, ModifyIndex: index, ModifyTime: now });
  };
  for (const e of evals) {
    // A follow-up waiting for its time (reschedule-timer.ts) has placed nothing yet and settles nothing.
    if (e.Status === 'pending') continue;
    const mine = failed.filter((f) => f.evalId === e.ID);
    const queued = Object.fromEntries([...byGroup(mine)].map(([g, fs]) => [g, fs.length]));
    if (e.Status === 'blocked') {
      // The blocked evaluation processed again: it completes once everything is placed, else stays blocked.
      if (mine.length > 0) {
        Object.assign(e, { FailedTGAllocs: failedTGAllocs(mine), QueuedAllocations: queued });
        blocked.set(e.JobID, e.ID);
      } else {
        Object.assign(e, { Status: 'complete', StatusDescription: '', FailedTGAllocs: undefined, QueuedAllocations: {} });
        blocked.set(e.JobID, undefined);
      }
      continue;
    }
    if (mine.length === 0) {
      cancel(open(e.JobID), `canceled: evaluation ${e.ID} placed every allocation of job ${JSON.stringify(e.JobID)}`);
      blocked.set(e.JobID, undefined);
      continue;
    }
    const b: EvalRecord = {
      ID: randomUUID(), Namespace: e.Namespace, Priority: e.Priority, Type: e.Type, TriggeredBy: 'queued-allocs', JobID: e.JobID,
      JobModifyIndex: e.JobModifyIndex, Status: 'blocked', StatusDescription: BLOCKED_DESCRIPTION, PreviousEval: e.ID,
      FailedTGAllocs: failedTGAllocs(mine), QueuedAllocations: queued, CreateIndex: index, ModifyIndex: index, CreateTime: now, ModifyTime: now,
    };
    Object.assign(e, { FailedTGAllocs: failedTGAllocs(mine), QueuedAllocations: queued, BlockedEval: b.ID });
    cancel(open(e.JobID), `existing blocked evaluation exists for job ${JSON.stringify(e.JobID)}`);
    out.push(b);
    blocked.set(e.JobID, b.ID);
  }
  return { evals: out, blocked };
}
