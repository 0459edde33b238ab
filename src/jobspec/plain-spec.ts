/**
 * A quick yes for the plainest AllocSpecs before the zod schema (validate.ts) looks at them. The schema's parse
 * of a three-task spec costs ~20 µs, as much as a tenth of what the runtime itself does per allocation; most specs
 * built in code (the benches', the tests', an embedder's simple ones) use a handful of fields, which plain loops
 * check in about a microsecond. `plainlyValid` answers true only for a spec it is sure the schema accepts: any
 * field outside that handful, any object that is not a plain one, any doubt at all is a `false`, after which the
 * schema runs as before and reports every problem in its own words. So it can only skip work, never change an
 * answer (test/jobspec/plain-spec.test.ts compares the two over generated specs).
 */
import { envKeyProblem } from './env-names.ts';
import { JOB_TYPES, LIFECYCLE_HOOKS } from './jobspec-schema.ts';
import { unsafeNameReason, type NameKind } from './names.ts';

const ALLOC_KEYS = new Set(['id', 'job', 'group', 'type', 'namespace', 'meta', 'tasks']);
const TASK_KEYS = new Set(['name', 'driver', 'config', 'env', 'meta', 'leader', 'lifecycle', 'killTimeout']);
const LIFECYCLE_KEYS = new Set(['hook', 'sidecar']);
const JOB_TYPE_SET: ReadonlySet<unknown> = new Set(JOB_TYPES);
const HOOK_SET: ReadonlySet<unknown> = new Set(LIFECYCLE_HOOKS);

/** An object literal's kind of object: Object's prototype, no key outside `allowed`, none set to undefined. */
function plainWith(v: unknown, allowed: ReadonlySet<string>): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Object.getPrototypeOf(v) !== Object.prototype) return false;
  for (const k in v) if (!allowed.has(k) || (v as Record<string, unknown>)[k] === undefined) return false;
  return true;
}

/**
 * A record as zod's sees one without a doubt: Object's prototype, only string keys (own, enumerable or not),
 * none of the two zod treats apart (`__proto__`, `constructor`), each value passing `value`.
 */
function plainRecord(v: unknown, value: (key: string, x: unknown) => boolean): boolean {
  if (typeof v !== 'object' || v === null || Object.getPrototypeOf(v) !== Object.prototype) return false;
  for (const k of Reflect.ownKeys(v)) {
    if (typeof k !== 'string' || k === '__proto__' || k === 'constructor') return false;
    if (!value(k, (v as Record<string, unknown>)[k])) return false;
  }
  return true;
}

const anyValue = (): boolean => true;
const stringValue = (_: string, x: unknown): boolean => typeof x === 'string';
const envEntry = (k: string, x: unknown): boolean => typeof x === 'string' && envKeyProblem(k) === undefined;

function safeName(v: unknown, kind: NameKind): boolean {
  return typeof v === 'string' && v !== '' && unsafeNameReason(v, kind) === undefined;
}

/** An optional field: absent, or passing `ok` (a field set to undefined was refused by `plainWith` already). */
function optional(o: Record<string, unknown>, key: string, ok: (x: unknown) => boolean): boolean {
  return !(key in o) || ok(o[key]);
}

function plainTask(t: unknown): boolean {
  if (!plainWith(t, TASK_KEYS)) return false;
  return (
    safeName(t['name'], 'task') &&
    typeof t['driver'] === 'string' && t['driver'] !== '' &&
    plainRecord(t['config'], anyValue) &&
    optional(t, 'env', (x) => plainRecord(x, envEntry)) &&
    optional(t, 'meta', (x) => plainRecord(x, stringValue)) &&
    optional(t, 'leader', (x) => typeof x === 'boolean') &&
    optional(t, 'lifecycle', (x) => plainWith(x, LIFECYCLE_KEYS) && HOOK_SET.has(x['hook']) && optional(x, 'sidecar', (s) => typeof s === 'boolean')) &&
    optional(t, 'killTimeout', (x) => typeof x === 'number' && Number.isFinite(x) && x >= 0)
  );
}

/** True only for a spec the schema and the cross-task rules of validate.ts are sure to accept. */
export function plainlyValid(value: unknown): boolean {
  if (!plainWith(value, ALLOC_KEYS)) return false;
  if (!safeName(value['id'], 'alloc id') || !safeName(value['job'], 'job id') || !safeName(value['group'], 'group')) return false;
  if (!JOB_TYPE_SET.has(value['type'])) return false;
  if (!optional(value, 'namespace', (x) => typeof x === 'string') || !optional(value, 'meta', (x) => plainRecord(x, stringValue))) return false;
  const tasks = value['tasks'];
  if (!Array.isArray(tasks) || tasks.length === 0) return false;
  // The cross-task rules: unique names, at most one leader.
  let leaders = 0;
  const names = new Set<unknown>();
  for (const t of tasks as Record<string, unknown>[]) {
    if (!plainTask(t)) return false;
    if (t['leader'] === true && ++leaders > 1) return false;
    if (names.has(t['name'])) return false;
    names.add(t['name']);
  }
  return true;
}
