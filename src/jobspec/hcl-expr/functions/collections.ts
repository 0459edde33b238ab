/** go-cty's collection functions, as Nomad's jobspec2 registers them. */
import { asNumber, asString, equal, formatNumber, isObject, show, sortedKeys, type Value } from '../values.ts';
import { fn, FunctionError, type HclFunction } from './types.ts';

const distinct = (items: Value[]): Value[] => items.filter((x, i) => items.findIndex((y) => equal(x, y)) === i);

/** cty unifies mixed primitive types to string (coalesce(1, "a") is "1"). */
function unified(values: Value[]): Value[] {
  const kinds = new Set(values.filter((v) => v !== null).map((v) => (typeof v === 'object' ? 'collection' : typeof v)));
  if (kinds.size > 1 && !kinds.has('collection')) return values.map((v) => (v === null ? v : asString(v)));
  return values;
}

function flatten(items: Value[]): Value[] {
  return items.flatMap((x) => (Array.isArray(x) ? flatten(x) : [x]));
}

export const COLLECTION_FUNCTIONS: Record<string, HclFunction> = {
  concat: fn([], (lists) => (lists as Value[][]).flat(), 'seqs:list'),
  contains: fn(['list:list', 'value:any'], ([l, v]) => (l as Value[]).some((x) => equal(x, v))),
  coalesce: fn([], (vals) => {
    const found = unified(vals).find((v) => v !== null && v !== '');
    if (found === undefined) throw new FunctionError('no non-null, non-empty-string arguments');
    return found;
  }, 'vals:any'),
  coalescelist: fn([], (lists) => {
    for (const l of lists) {
      if (l !== null && !Array.isArray(l)) throw new FunctionError(`coalescelist() takes lists, got ${show(l)}`);
      if (Array.isArray(l) && l.length > 0) return l;
    }
    throw new FunctionError('no non-null arguments');
  }, 'vals:any'),
  compact: fn(['list:list(string)'], ([l]) => (l as Value[]).filter((x) => x !== null && x !== '')),
  distinct: fn(['list:list'], ([l]) => distinct(l as Value[])),
  element: fn(['list:list', 'index:number'], ([l, i]) => {
    const list = l as Value[];
    const n = i as number;
    if (list.length === 0) throw new FunctionError('cannot use element function with an empty list');
    if (n < 0) throw new FunctionError('cannot use element function with a negative index');
    return list[Math.floor(n) % list.length];
  }),
  flatten: fn(['list:list'], ([l]) => flatten(l as Value[])),
  index: fn(['list:list', 'value:any'], ([l, v]) => {
    const i = (l as Value[]).findIndex((x) => equal(x, v));
    if (i < 0) throw new FunctionError(`item ${show(v)} not found`);
    return i;
  }),
  keys: fn(['inputMap:map'], ([m]) => sortedKeys(m as Record<string, Value>)),
  values: fn(['mapping:map'], ([m]) => sortedKeys(m as Record<string, Value>).map((k) => (m as Record<string, Value>)[k])),
  length: fn(['value:any'], ([v]) => {
    if (typeof v === 'string') return Array.from(new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(v)).length;
    if (Array.isArray(v)) return v.length;
    if (isObject(v)) return Object.keys(v).length;
    throw new FunctionError(`length() takes a string, list, map or object, got ${show(v)}`);
  }),
  lookup: fn(['inputMap:map', 'key:string'], ([m, k, ...rest]) => {
    if (rest.length > 1) throw new FunctionError(`lookup() takes at most 3 arguments, got ${rest.length + 2}`);
    const map = m as Record<string, Value>;
    if (Object.hasOwn(map, k as string)) return map[k as string];
    if (rest.length === 1) return rest[0];
    throw new FunctionError(`the key ${JSON.stringify(k)} is not in the map, and no default was given`);
  }, 'default:any'),
  merge: fn([], (maps) => {
    const out: Record<string, Value> = {};
    for (const [i, m] of maps.entries()) {
      if (m === null) continue;
      if (!isObject(m)) throw new FunctionError(`argument ${i + 1} is ${show(m)}: merge() takes maps or objects`);
      Object.assign(out, m);
    }
    return out;
  }, 'maps:any'),
  range: fn([], (args) => {
    const nums = args.map((a, i) => {
      const n = asNumber(a);
      if (n === undefined) throw new FunctionError(`argument ${i + 1} must be a number, got ${show(a)}`);
      return n;
    });
    if (nums.length < 1 || nums.length > 3) throw new FunctionError('range() takes 1 to 3 arguments (start, limit, step)');
    const [start, limit, step] = nums.length === 1 ? [0, nums[0]!, 1] : [nums[0]!, nums[1]!, nums[2] ?? (nums[1]! >= nums[0]! ? 1 : -1)];
    if (step === 0) throw new FunctionError('step must not be zero');
    if ((step > 0 && limit < start) || (step < 0 && limit > start)) throw new FunctionError(`the step ${formatNumber(step)} goes away from the limit ${formatNumber(limit)}`);
    const out: number[] = [];
    for (let v = start; step > 0 ? v < limit : v > limit; v += step) {
      if (out.length >= 1024) throw new FunctionError('more than 1024 values were generated; either decrease the difference between start and limit or use a smaller step');
      out.push(v);
    }
    return out;
  }, 'params:number'),
  slice: fn(['list:list', 'start_index:number', 'end_index:number'], ([l, s, e]) => {
    const list = l as Value[];
    const [a, b] = [s as number, e as number];
    if (a < 0 || b > list.length || a > b || !Number.isInteger(a) || !Number.isInteger(b)) throw new FunctionError(`indexes ${formatNumber(a)}..${formatNumber(b)} are out of range for a list of ${list.length} item(s)`);
    return list.slice(a, b);
  }),
  sort: fn(['list:list(string)'], ([l]) => {
    if ((l as Value[]).some((x) => x === null)) throw new FunctionError('given list element is null; a null value cannot be sorted');
    return [...(l as string[])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }),
  zipmap: fn(['keys:list(string)', 'values:list'], ([k, v]) => {
    const keys = k as string[];
    const vals = v as Value[];
    if (keys.length !== vals.length) throw new FunctionError(`number of keys (${keys.length}) does not match number of values (${vals.length})`);
    return Object.fromEntries(keys.map((key, i) => [key, vals[i]]));
  }),
  chunklist: fn(['list:list', 'size:number'], ([l, s]) => {
    const size = s as number;
    if (size < 0) throw new FunctionError('the size argument must be positive');
    const list = l as Value[];
    if (size === 0) return [list];
    const out: Value[][] = [];
    for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
    return out;
  }),
  setunion: fn([], (sets) => distinct((sets as Value[][]).flat()), 'sets:list'),
  setintersection: fn(['first_set:list'], ([first, ...rest]) => distinct((first as Value[]).filter((x) => (rest as Value[][]).every((s) => s.some((y) => equal(x, y))))), 'other_sets:list'),
  setproduct: fn([], (sets) => {
    if (sets.length < 2) throw new FunctionError('at least two arguments are required');
    return (sets as Value[][]).reduce<Value[][]>((acc, s) => acc.flatMap((prefix) => distinct(s).map((x) => [...prefix, x])), [[]]);
  }, 'sets:list'),
};
