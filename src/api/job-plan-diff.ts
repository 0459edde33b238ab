/**
 * Nomad's job diff, as `POST /v1/job/:id/plan` answers it and `nomad job plan` prints it: the job, its groups
 * (matched by name) and their tasks (by name), each `Added`, `Deleted`, `Edited` or `None`, with the fields
 * that changed (`Type`, `Name`, `Old`, `New`, values as strings) and nested blocks as object diffs. Both
 * jobs are compared canonical (Nomad's defaults filled), so a default written out is no change.
 */
import { canonicalJob, SERVER_FIELDS } from './job-canonical.ts';
import type { Json } from './job-json.ts';

type DiffType = 'Added' | 'Deleted' | 'Edited' | 'None';

/** One changed value (`FieldDiff`). */
export interface FieldDiff {
  Type: DiffType;
  Name: string;
  Old: string;
  New: string;
  Annotations: string[] | null;
}

/** A changed block (`ObjectDiff`). */
export interface ObjectDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
}

/** What the plan found for one group's allocations. */
export interface GroupPlan {
  place: number;
  stop: number;
  inPlace: number;
  destructive: number;
  ignore: number;
  /** Canaries placed beside the allocations they will replace (a deployment whose update block asks for them). */
  canary?: number;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: unknown) => v === null || v === undefined || typeof v !== 'object';
/** Maps written as fields `Name[key]` (Nomad flattens these), not as blocks. */
const FLAT_MAPS = new Set(['Meta', 'Env']);
/** Lists Nomad compares as sets (its stringSetDiff): one block of added and deleted values, order ignored. */
const STRING_SETS = new Set(['Datacenters', 'Tags', 'CanaryTags']);

/** A value as Go's `fmt` prints it in a diff. */
function show(v: unknown): string {
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** `value` as `name → string` leaves: lists as `name[i]`, maps as `name[key]`. */
function flatten(name: string, value: unknown, out: Map<string, string>): void {
  if (Array.isArray(value)) value.forEach((v, i) => flatten(`${name}[${i}]`, v, out));
  else if (isObject(value)) for (const [k, v] of Object.entries(value)) flatten(`${name}[${k}]`, v, out);
  else if (value !== undefined && value !== null) out.set(name, show(value));
}

function typeOf(old: unknown, next: unknown, changed: boolean): DiffType {
  if (old === undefined) return next === undefined ? 'None' : 'Added';
  if (next === undefined) return 'Deleted';
  return changed ? 'Edited' : 'None';
}

/** The field and object diffs between two objects' own keys, leaving out `skip`. */
function diffFields(old: Json | undefined, next: Json | undefined, skip: readonly string[]): { fields: FieldDiff[]; objects: ObjectDiff[] } {
  const fields: FieldDiff[] = [];
  const objects: ObjectDiff[] = [];
  const keys = [...new Set([...Object.keys(old ?? {}), ...Object.keys(next ?? {})])].filter((k) => !skip.includes(k)).sort();
  for (const key of keys) {
    const a = old?.[key];
    const b = next?.[key];
    if (STRING_SETS.has(key) && (Array.isArray(a) || Array.isArray(b))) {
      const o = setDiff(key, a, b);
      if (o) objects.push(o);
      continue;
    }
    if ((Array.isArray(a) && a.some(isObject)) || (Array.isArray(b) && b.some(isObject))) {
      // A list of blocks (Services, Checks, Constraints): one object diff per block, as Nomad's diff has one per service.
      objects.push(...listDiffs(key, a, b));
      continue;
    }
    const block = (isObject(a) || isObject(b)) && !FLAT_MAPS.has(key);
    if (block) {
      const o = objectDiff(key, isObject(a) ? a : a === undefined ? undefined : { [key]: a }, isObject(b) ? b : b === undefined ? undefined : { [key]: b });
      if (o.Type !== 'None') objects.push(o);
      continue;
    }
    const before = new Map<string, string>();
    const after = new Map<string, string>();
    if (isScalar(a) || Array.isArray(a) || FLAT_MAPS.has(key)) flatten(key, a, before);
    if (isScalar(b) || Array.isArray(b) || FLAT_MAPS.has(key)) flatten(key, b, after);
    for (const name of [...new Set([...before.keys(), ...after.keys()])].sort()) {
      const o = before.get(name);
      const n = after.get(name);
      if (o === n) continue;
      fields.push({ Type: o === undefined ? 'Added' : n === undefined ? 'Deleted' : 'Edited', Name: name, Old: o ?? '', New: n ?? '', Annotations: null });
    }
  }
  return { fields, objects };
}

/**
 * Two lists of strings as sets: a block named `key` with a field per value added or deleted (each named `key`),
 * in Nomad's field order (name, then old, then new value); undefined when they hold the same values.
 */
function setDiff(key: string, a: unknown, b: unknown): ObjectDiff | undefined {
  const before = new Set((Array.isArray(a) ? a : []).map(show));
  const after = new Set((Array.isArray(b) ? b : []).map(show));
  const deleted = [...before].filter((v) => !after.has(v));
  const added = [...after].filter((v) => !before.has(v));
  if (deleted.length + added.length === 0) return undefined;
  const fields: FieldDiff[] = [
    ...deleted.map((v): FieldDiff => ({ Type: 'Deleted', Name: key, Old: v, New: '', Annotations: null })),
    ...added.map((v): FieldDiff => ({ Type: 'Added', Name: key, Old: '', New: v, Annotations: null })),
  ].sort((x, y) => (x.Old !== y.Old ? (x.Old < y.Old ? -1 : 1) : x.New < y.New ? -1 : x.New > y.New ? 1 : 0));
  const type: DiffType = added.length > 0 && deleted.length > 0 ? 'Edited' : added.length > 0 ? 'Added' : 'Deleted';
  return { Type: type, Name: key, Fields: fields, Objects: null };
}

/** `Services` → `Service`, `Affinities` → `Affinity`: the name Nomad gives one block of a list. */
function singular(key: string): string {
  return key.endsWith('ies') ? `${key.slice(0, -3)}y` : key.endsWith('s') ? key.slice(0, -1) : key;
}

/**
 * The changed blocks of two lists of blocks: matched by `Name` when every block has one (a renamed service is
 * one deleted and one added), else by position.
 */
function listDiffs(key: string, a: unknown, b: unknown): ObjectDiff[] {
  const before = Array.isArray(a) ? a : [];
  const after = Array.isArray(b) ? b : [];
  const named = [...before, ...after].every((x) => isObject(x) && typeof x['Name'] === 'string');
  const keyOf = (x: unknown, i: number) => (named ? String((x as Json)['Name']) : String(i));
  const olds = new Map(before.map((x, i) => [keyOf(x, i), x]));
  const news = new Map(after.map((x, i) => [keyOf(x, i), x]));
  const asBlock = (x: unknown): Json | undefined => (x === undefined ? undefined : isObject(x) ? x : { [singular(key)]: x });
  return [...new Set([...olds.keys(), ...news.keys()])]
    .map((k) => objectDiff(singular(key), asBlock(olds.get(k)), asBlock(news.get(k))))
    .filter((o) => o.Type !== 'None');
}

function objectDiff(name: string, old: Json | undefined, next: Json | undefined): ObjectDiff {
  const { fields, objects } = diffFields(old, next, []);
  return { Type: typeOf(old, next, fields.length + objects.length > 0), Name: name, Fields: fields.length ? fields : null, Objects: objects.length ? objects : null };
}

const byName = (list: unknown): Map<string, Json> => new Map((Array.isArray(list) ? list : []).filter(isObject).map((x) => [String(x['Name']), x]));

/** The update names a group's `Updates` uses, Nomad's words. */
function updatesOf(plan: GroupPlan | undefined): Record<string, number> {
  if (!plan) return {};
  const all: [string, number][] = [['create', plan.place], ['destroy', plan.stop], ['in-place update', plan.inPlace], ['create/destroy update', plan.destructive], ['canary', plan.canary ?? 0], ['ignore', plan.ignore]];
  return Object.fromEntries(all.filter(([, n]) => n > 0));
}

/** A count that grows forces creates, one that shrinks destroys (Nomad's annotateCountChange); an absent count is 0. */
function countAnnotations(f: FieldDiff): string[] | null {
  const before = f.Old === '' ? 0 : Number(f.Old);
  const after = f.New === '' ? 0 : Number(f.New);
  return before < after ? ['forces create'] : after < before ? ['forces destroy'] : null;
}

/**
 * Nomad's `JobDiff` from the job as it is (`old`, undefined for a new job) to `next`; `plans` says per group
 * what the scheduler would do, for the groups' `Updates` and the tasks' annotations.
 */
export function jobDiff(old: Json | undefined, next: Json, plans: Record<string, GroupPlan>): Json {
  const a = old && canonicalJob(old);
  const b = canonicalJob(next);
  const { fields, objects } = diffFields(a, b, [...SERVER_FIELDS, 'TaskGroups']);
  const oldGroups = byName(a?.['TaskGroups']);
  const newGroups = byName(b['TaskGroups']);
  const groups = [...new Set([...oldGroups.keys(), ...newGroups.keys()])].sort().map((name) => {
    const og = oldGroups.get(name);
    const ng = newGroups.get(name);
    const gd = diffFields(og, ng, ['Name', 'Tasks']);
    const plan = plans[name];
    const annotation = plan && plan.destructive + plan.place > 0 ? 'forces create/destroy update' : plan && plan.inPlace > 0 ? 'forces in-place update' : undefined;
    const oldTasks = byName(og?.['Tasks']);
    const newTasks = byName(ng?.['Tasks']);
    const tasks = [...new Set([...oldTasks.keys(), ...newTasks.keys()])].sort().map((t) => {
      const ot = oldTasks.get(t);
      const nt = newTasks.get(t);
      const td = diffFields(ot, nt, ['Name']);
      const type = typeOf(ot, nt, td.fields.length + td.objects.length > 0);
      // A task of a group added or deleted as a whole is created or destroyed with it (Nomad's annotateTask).
      const whole = !og || !ng ? (type === 'Added' ? 'forces create' : type === 'Deleted' ? 'forces destroy' : undefined) : undefined;
      return {
        Type: type, Name: t, Fields: td.fields.length ? td.fields : null, Objects: td.objects.length ? td.objects : null,
        Annotations: type === 'None' ? null : whole ? [whole] : type === 'Edited' ? (annotation ? [annotation] : null) : ['forces create/destroy update'],
      };
    });
    for (const f of gd.fields) if (f.Name === 'Count') f.Annotations = countAnnotations(f);
    const changed = gd.fields.length + gd.objects.length > 0 || tasks.some((t) => t.Type !== 'None');
    return { Type: typeOf(og, ng, changed), Name: name, Fields: gd.fields.length ? gd.fields : null, Objects: gd.objects.length ? gd.objects : null, Tasks: tasks, Updates: updatesOf(plan) };
  });
  const changed = fields.length + objects.length > 0 || groups.some((g) => g.Type !== 'None');
  return { Type: typeOf(a, b, changed), ID: String(next['ID']), Fields: fields.length ? fields : null, Objects: objects.length ? objects : null, TaskGroups: groups };
}
