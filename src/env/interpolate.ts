/**
 * Nomad's `${...}` interpolation (helper/args.ReplaceEnv): each `${key}` is replaced by its value; a key
 * nothing defines is left as written, so a typo stays visible instead of silently becoming empty.
 */

/** The `${key}` pattern Nomad accepts: letters, digits, `_`, `-` and `.`. */
const REFERENCE = /\$\{([A-Za-z0-9_.-]+)\}/g;

/** Resolves one key (without `${}`), or undefined when unknown. */
export type Lookup = (key: string) => string | undefined;

/** Replaces every `${key}` in `text` that `lookup` knows. */
export function interpolateString(text: string, lookup: Lookup): string {
  if (!text.includes('${')) return text;
  return text.replace(REFERENCE, (whole, key: string) => lookup(key) ?? whole);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Interpolates every string inside arrays and plain objects; returns new containers, never mutates `value`. */
export function interpolateValue<T>(value: T, lookup: Lookup): T {
  if (typeof value === 'string') return interpolateString(value, lookup) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => interpolateValue(v, lookup)) as T;
  if (isPlainObject(value)) {
    // fromEntries defines own properties, so a `__proto__` key stays data instead of changing the prototype.
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolateValue(v, lookup)])) as T;
  }
  return value;
}
