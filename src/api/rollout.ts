/**
 * How many allocations of a group a destructive update may replace now: Nomad's reconciler's `computeLimit`
 * on one node. A group with a deployment rolls out `max_parallel` at a time: each allocation of the deployment
 * that has no health verdict yet holds one slot, an unhealthy one (or a deployment marked failed) stops the
 * rollout, and the allocations not replaced keep running their version until a health change frees a slot (the
 * deployment watcher evaluates the job again then: `JobRegistry.watch`).
 */
import type { AllocSpec } from '../jobspec/types.ts';
import { taskGroupsOf, type Json } from './job-json.ts';

/** What the limit reads of one allocation: whether it runs, in which deployment, and its health verdict. */
export interface RolloutAlloc {
  desired: 'run' | 'stop' | string;
  spec: Pick<AllocSpec, 'deploymentId'>;
  lastState: { clientStatus: string; deploymentStatus?: { healthy?: boolean } };
}

/** A field of `group`'s update block in `job` (its API JSON): the group's over the job's. */
function updateField(job: Json, group: string, field: string): unknown {
  const own = taskGroupsOf(job).find((g) => g['Name'] === group)?.['Update'] as Json | undefined;
  return own?.[field] ?? (job['Update'] as Json | undefined)?.[field];
}

/** Nomad's MaxParallel for `group` of `job`: the group's update block over the job's, default 1. */
export function maxParallelOf(job: Json, group: string): number {
  const value = updateField(job, group, 'MaxParallel');
  return typeof value === 'number' ? value : 1;
}

/** Nomad's Canary count for `group` of `job`: the group's update block over the job's, default 0. */
export function canaryCountOf(job: Json, group: string): number {
  const value = updateField(job, group, 'Canary');
  return typeof value === 'number' ? value : 0;
}

/** Nomad's AutoPromote for `group` of `job`: the group's update block over the job's, default false. */
export function autoPromoteOf(job: Json, group: string): boolean {
  return updateField(job, group, 'AutoPromote') === true;
}

/** Nomad's AutoRevert for `group` of `job`: the group's update block over the job's, default false. */
export function autoRevertOf(job: Json, group: string): boolean {
  return updateField(job, group, 'AutoRevert') === true;
}

/** Nomad's ProgressDeadline for `group` of `job`, in ms: the group's update block over the job's, default 10m; 0 turns it off. */
export function progressDeadlineOf(job: Json, group: string): number {
  const value = updateField(job, group, 'ProgressDeadline');
  return typeof value === 'number' ? value / 1e6 : 600_000;
}

/**
 * Whether the deployment of `version` succeeded: as many of its allocations healthy as the version wants in its
 * groups with a deployment (`wanted`: the version's instances), as the deployment routes count them.
 */
export function deploymentSucceeded(wanted: readonly Pick<AllocSpec, 'update' | 'type'>[], version: number, allocs: Iterable<RolloutAlloc & { jobVersion: number; spec: Pick<AllocSpec, 'update'> }>): boolean {
  const total = wanted.filter((s) => s.update && s.type === 'service').length;
  let healthy = 0;
  for (const a of allocs) if (a.jobVersion === version && a.spec.update && a.lastState.deploymentStatus?.healthy === true) healthy++;
  return total > 0 && healthy >= total;
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
