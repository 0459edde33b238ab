/**
 * How Nomad's scheduler applies a changed task group to a running allocation (its `tasksUpdated`): a
 * change to what the workload is (tasks, driver, config, env, meta, resources, log config, lifecycle, user,
 * artifacts, templates) needs a new allocation; anything else (restart policy, kill timeout and signal, shutdown
 * delay, leader, blocks allocrun does not model) is applied to the running allocation in place.
 */
import { isDeepStrictEqual } from 'node:util';
import type { AllocSpec, TaskSpec } from '../jobspec/types.ts';

/** What an allocation needs when its group changed. */
export type GroupUpdate = 'ignore' | 'inplace' | 'destructive';

/** The fields of a task whose change replaces the allocation. */
const DESTRUCTIVE_TASK_FIELDS = ['driver', 'config', 'env', 'resources', 'logs', 'lifecycle', 'user', 'artifacts', 'templates'] as const satisfies readonly (keyof TaskSpec)[];

/** A task's meta as its environment sees it: job, then group (the alloc's meta), then task. */
function combinedMeta(alloc: AllocSpec, task: TaskSpec): Record<string, string> {
  return { ...alloc.meta, ...task.meta };
}

/** Why `next` cannot be applied to an allocation running `prev` in place; undefined when it can. */
export function destructiveChange(prev: AllocSpec, next: AllocSpec): string | undefined {
  // Nomad's networkUpdated: other ports are other host resources, so a new allocation is placed.
  if (!isDeepStrictEqual(prev.network ?? null, next.network ?? null)) return 'the network block changed';
  if (prev.tasks.length !== next.tasks.length) return 'the number of tasks changed';
  for (const a of prev.tasks) {
    const b = next.tasks.find((t) => t.name === a.name);
    if (!b) return `task ${JSON.stringify(a.name)} was removed`;
    for (const field of DESTRUCTIVE_TASK_FIELDS) {
      if (!isDeepStrictEqual(a[field] ?? null, b[field] ?? null)) return `task ${JSON.stringify(a.name)}: ${field} changed`;
    }
    if (!isDeepStrictEqual(combinedMeta(prev, a), combinedMeta(next, b))) return `task ${JSON.stringify(a.name)}: meta changed`;
  }
  return undefined;
}

/** The allocation's spec without what differs between instances and updates (id, desired status, index, ports, deployment, canary). */
function template(spec: AllocSpec): Omit<AllocSpec, 'id' | 'desiredStatus' | 'modifyIndex' | 'ports' | 'index' | 'deploymentId' | 'canary'> {
  // The ports, the name's index, the deployment and the canary flag are the placement's, not the group's: a template never has them.
  const { id: _id, desiredStatus: _d, modifyIndex: _m, ports: _p, index: _i, deploymentId: _dep, canary: _c, ...rest } = spec;
  return rest;
}

/** The update an allocation running `prev` needs to run `next`. */
export function groupUpdate(prev: AllocSpec, next: AllocSpec): GroupUpdate {
  if (destructiveChange(prev, next) !== undefined) return 'destructive';
  return isDeepStrictEqual(template(prev), template(next)) ? 'ignore' : 'inplace';
}
