/**
 * How many allocations of a group a destructive update may replace now: Nomad's reconciler's `computeLimit`
 * on one node. A group with a deployment rolls out `max_parallel` at a time: each allocation of the deployment
 * that has no health verdict yet holds one slot, an unhealthy one (or a deployment marked failed) stops the
 * rollout, and the allocations not replaced keep running their version until a health change frees a slot (the
 * deployment watcher evaluates the job again then: `JobRegistry.watch`).
 */
import type { AllocSpec } from '../jobspec/types.ts';
import type { Json } from './job-json.ts';

/** What the limit reads of one allocation: whether it runs, in which deployment, and its health verdict. */
export interface RolloutAlloc {
  desired: 'run' | 'stop' | string;
  spec: Pick<AllocSpec, 'deploymentId'>;
  lastState: { clientStatus: string; deploymentStatus?: { healthy?: boolean } };
}

/** Nomad's MaxParallel for `group` of `job` (its API JSON): the group's update block over the job's, default 1. */
export function maxParallelOf(job: Json, group: string): number {
  const groups = (job['TaskGroups'] as Json[] | undefined) ?? [];
  const own = groups.find((g) => g['Name'] === group)?.['Update'] as Json | undefined;
  const jobs = job['Update'] as Json | undefined;
  const value = own?.['MaxParallel'] ?? jobs?.['MaxParallel'];
  return typeof value === 'number' ? value : 1;
}

/**
 * The destructive updates `group` may start now in `deployment`, given the allocations of the group that run
 * (desired `run`) and whether the deployment was marked failed. Placements of new instances are not limited.
 */
export function destructiveLimit(maxParallel: number, deployment: string, allocs: Iterable<RolloutAlloc>, markedFailed: boolean): number {
  if (markedFailed) return 0;
  let limit = maxParallel;
  for (const a of allocs) {
    if (a.desired !== 'run' || a.spec.deploymentId !== deployment) continue;
    const healthy = a.lastState.deploymentStatus?.healthy;
    // An unhealthy allocation fails the deployment: nothing more is replaced.
    if (healthy === false) return 0;
    if (healthy === undefined) limit--;
  }
  return Math.max(0, limit);
}
