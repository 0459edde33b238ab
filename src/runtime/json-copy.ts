/**
 * `JSON.parse(JSON.stringify(value))` for the driver handles a start returns (they go into the task's persisted
 * context as plain data), without the text in between: that round trip was three-quarters of the start's own
 * time in the runtime (P3's profile). Plain data (strings, finite numbers but -0, booleans, null, arrays, objects
 * of Object's prototype or none) is copied by hand; at the first value of any other kind (undefined, a function,
 * a Date or anything with toJSON, a class instance, a bigint, -0, NaN, a `__proto__` key, a cycle) the whole
 * value goes through the JSON round trip instead, so the answer, and any error, is always the round trip's.
 */

/** Returned by `plainCopy` at the first value it does not copy by hand. */
const NOT_PLAIN: unique symbol = Symbol('not plain');

/** Deeper than this, the round trip decides (and reports a cycle as JSON does). */
const MAX_DEPTH = 64;

function plainCopy(v: unknown, depth: number): unknown {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      return Number.isFinite(v) && !Object.is(v, -0) ? v : NOT_PLAIN;
    case 'object': {
      if (v === null) return null;
      if (depth > MAX_DEPTH) return NOT_PLAIN;
      if (Array.isArray(v)) {
        if (Object.getPrototypeOf(v) !== Array.prototype) return NOT_PLAIN;
        const out: unknown[] = new Array(v.length);
        for (let i = 0; i < v.length; i++) {
          const c = plainCopy(v[i], depth + 1);
          if (c === NOT_PLAIN) return NOT_PLAIN;
          out[i] = c;
        }
        return out;
      }
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) return NOT_PLAIN;
      if ('toJSON' in v) return NOT_PLAIN;
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v)) {
        if (k === '__proto__') return NOT_PLAIN;
        const c = plainCopy((v as Record<string, unknown>)[k], depth + 1);
        if (c === NOT_PLAIN) return NOT_PLAIN;
        out[k] = c;
      }
      return out;
    }
    default:
      return NOT_PLAIN;
  }
}

/** What `JSON.parse(JSON.stringify(value))` gives (or throws), for a value that is not undefined. */
export function jsonCopy<T>(value: T): T {
  const c = plainCopy(value, 0);
  return (c === NOT_PLAIN ? JSON.parse(JSON.stringify(value)) : c) as T;
}
