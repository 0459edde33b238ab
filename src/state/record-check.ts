/**
 * Checks a parsed state file before anyone reads it: a record damaged on disk (truncated, edited, written
 * by something else) must fail here with a message naming what is wrong, never later as a TypeError deep
 * in the CLI or the runtime.
 */
import { validateAllocSpec } from '../jobspec/validate.ts';
import { SpecError } from '../jobspec/spec-error.ts';
import type { AllocRecord } from './store.ts';

const CLIENT_STATUSES = new Set(['pending', 'running', 'complete', 'failed']);
const TASK_STATES = new Set(['pending', 'running', 'dead']);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isTime = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);

/** The problems of `value` as an allocation record stored for `allocId`; empty when it is sound. */
export function recordProblems(value: unknown, allocId: string): string[] {
  if (!isObject(value)) return [`expected a JSON object, got ${Array.isArray(value) ? 'a list' : value === null ? 'null' : typeof value}`];
  const problems: string[] = [];
  try {
    validateAllocSpec(value.spec);
    const id = (value.spec as { id: string }).id;
    if (id !== allocId) problems.push(`spec.id is ${JSON.stringify(id)} but the record is stored for allocation ${JSON.stringify(allocId)}`);
  } catch (err) {
    const detail = err instanceof SpecError ? err.problems.map((p) => `spec${p.path ? `.${p.path}` : ''}: ${p.message}`).join('; ') : String(err);
    problems.push(detail);
  }
  const state = value.state;
  if (!isObject(state)) problems.push('state: expected an object');
  else {
    if (!CLIENT_STATUSES.has(state.clientStatus as string)) problems.push(`state.clientStatus: expected one of ${[...CLIENT_STATUSES].join(', ')}`);
    if (!isObject(state.taskStates)) problems.push('state.taskStates: expected an object');
    else {
      for (const [name, ts] of Object.entries(state.taskStates)) {
        const where = `state.taskStates[${JSON.stringify(name)}]`;
        if (!isObject(ts)) problems.push(`${where}: expected an object`);
        else if (!TASK_STATES.has(ts.state as string) || !Array.isArray(ts.events) || typeof ts.failed !== 'boolean') {
          problems.push(`${where}: expected { state: pending|running|dead, failed, events: [...] }`);
        }
      }
    }
  }
  if (!isTime(value.updatedAt)) problems.push('updatedAt: expected a time in milliseconds');
  if (value.createdAt !== undefined && !isTime(value.createdAt)) problems.push('createdAt: expected a time in milliseconds');
  const snap = value.snapshot;
  if (snap !== undefined && (!isObject(snap) || snap.__allocrun !== 'alloc-runner' || !isObject(snap.snapshot))) {
    problems.push('snapshot: expected a runner snapshot written by allocrun');
  }
  return problems;
}

/** `value` as an AllocRecord, or an Error listing its problems. */
export function checkRecord(value: unknown, allocId: string): AllocRecord {
  const problems = recordProblems(value, allocId);
  if (problems.length > 0) throw new Error(problems.join('; '));
  return value as AllocRecord;
}
