/**
 * Driver names and driver configs in the job loader. The drivers own their config rules (src/drivers/);
 * whoever loads a job for a runtime passes the checks of the drivers that runtime has, so a job is refused
 * at validation for exactly what its driver would refuse at run time, with the field named.
 */
import type { PathSegment } from './spec-error.ts';

/** One problem in a task's config, `path` from the task (`['config', 'args', 0]`). */
export interface DriverConfigProblem {
  path: PathSegment[];
  message: string;
}

/** The task's fields besides `config` that a driver may need to judge (`user`: whether it can run the task as it). */
export interface DriverTaskFields {
  /** The task's `user`, as written (the schema checks its type). */
  user?: unknown;
}

/**
 * Checks one task for a driver: its `config`, and the task fields the driver acts on (`fields`); returns
 * every problem it finds (none: the task runs), each path from the task (`['user']`, `['config', 'args', 0]`).
 */
export type DriverConfigCheck = (config: Record<string, unknown>, task: string, fields?: DriverTaskFields) => DriverConfigProblem[];

/** The drivers a runtime has, by name, each with its config check. */
export type DriverChecks = Readonly<Record<string, DriverConfigCheck>>;

/** `config.args[0]` as path segments: `['config', 'args', 0]`. */
export function fieldPath(field: string): PathSegment[] {
  const out: PathSegment[] = [];
  for (const m of field.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) out.push(m[2] !== undefined ? Number(m[2]) : m[1]!);
  return out;
}
