/**
 * HCL values as plain JSON (string, number, bool, null, arrays for lists and tuples, objects for maps and
 * objects) and go-cty's rules for them: how a number is written (`3`, never `3.0` or `1e+21`), which
 * conversions between string, number and bool exist, and equality (type and value, no conversion).
 */

export type Value = unknown;

/** The type of a value as HCL's messages name it. */
export function typeOf(v: Value): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'list';
  if (typeof v === 'object') return 'object';
  return typeof v === 'boolean' ? 'bool' : typeof v;
}

export const isObject = (v: Value): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A number as cty writes it: plain decimal digits, shortest form that reads back the same. */
export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';
  const s = String(n);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const digits = m[2]! + (m[3] ?? '');
  const exp = Number(m[4]);
  if (exp >= 0) return m[1]! + digits.padEnd(exp + 1, '0').slice(0, Math.max(exp + 1, digits.length)) + (digits.length > exp + 1 ? '.' + digits.slice(exp + 1) : '');
  return `${m[1]}0.${'0'.repeat(-exp - 1)}${digits}`;
}

const NUMBER = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;

/** A value converted to a string, or undefined when HCL has no such conversion (collections, null). */
export function asString(v: Value): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return formatNumber(v);
  if (typeof v === 'boolean') return String(v);
  return undefined;
}

/** A value converted to a number (a string of digits converts), or undefined. */
export function asNumber(v: Value): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && NUMBER.test(v)) return Number(v);
  return undefined;
}

/** A value converted to a bool (`"true"` and `"false"` convert), or undefined. */
export function asBool(v: Value): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 'false') return v === 'true';
  return undefined;
}

/** HCL's `==`: same type and same value; a number and the string of it are not equal. */
export function equal(a: Value, b: Value): boolean {
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => equal(x, b[i]));
  if (isObject(a) || isObject(b)) {
    if (!isObject(a) || !isObject(b)) return false;
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && equal(a[k], b[k]));
  }
  return a === b;
}

/** A value as a message shows it: `"x"`, `3`, `true`, `null`, or `a list of 2` / `an object with keys a, b`. */
export function show(v: Value): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return JSON.stringify(v.length > 60 ? `${v.slice(0, 57)}...` : v);
  if (typeof v === 'number') return formatNumber(v);
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `a list of ${v.length} item(s)`;
  const keys = Object.keys(v as object);
  return keys.length === 0 ? 'an empty object' : `an object with keys ${keys.slice(0, 5).join(', ')}${keys.length > 5 ? ', ...' : ''}`;
}

/** Keys in the order cty iterates maps and objects: lexical. */
export const sortedKeys = (o: Record<string, unknown>): string[] => Object.keys(o).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
