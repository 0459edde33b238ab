/**
 * Reduces any value to JSON: context, event payloads and outputs may hold actor refs, errors, functions or
 * cycles (they should not, but the inspector must never be the thing that crashes or keeps them alive).
 */
import type { JsonValue } from './protocol.ts';

/** Limits that keep one snapshot from flooding the socket. */
export interface SanitizeLimits {
  depth: number;
  /** Items kept per array and keys per object. */
  items: number;
  /** Characters kept per string. */
  chars: number;
}

/** Generous enough for an alloc's context (every task event kept), small enough to bound a runaway value. */
export const DEFAULT_LIMITS: SanitizeLimits = { depth: 12, items: 500, chars: 4_000 };

function isActorRef(v: object): v is { sessionId: string; id: string } {
  return typeof (v as { sessionId?: unknown }).sessionId === 'string' && typeof (v as { send?: unknown }).send === 'function';
}

/**
 * Remembers the sanitized form of plain objects and arrays by identity. XState replaces context rather
 * than mutating it, so successive snapshots share most of their structure; with a cache only the changed
 * parts are walked again. Do not use one for values that are mutated in place.
 */
export type SanitizeCache = WeakMap<object, JsonValue>;

/** A JSON-safe copy of `value`: actor refs become `{ $actor, id }`, errors `{ name, message, code? }`, cycles `'[Circular]'`. */
export function sanitize(value: unknown, limits: SanitizeLimits = DEFAULT_LIMITS, cache?: SanitizeCache): JsonValue {
  const path = new Set<object>();
  // Counts cut-offs that depend on where a value sits (cycles, depth); subtrees with none are cacheable.
  let positional = 0;
  const walk = (v: unknown, depth: number): JsonValue => {
    switch (typeof v) {
      case 'string':
        return v.length > limits.chars ? `${v.slice(0, limits.chars)}…` : v;
      case 'number':
        return Number.isFinite(v) ? v : String(v);
      case 'boolean':
        return v;
      case 'bigint':
        return v.toString();
      case 'function':
        return `[Function ${v.name || 'anonymous'}]`;
      case 'symbol':
        return v.toString();
      case 'undefined':
        return null;
    }
    if (v === null) return null;
    const obj = v as object;
    if (path.has(obj)) {
      positional++;
      return '[Circular]';
    }
    const cached = cache?.get(obj);
    if (cached !== undefined) return cached;
    if (isActorRef(obj)) return { $actor: obj.sessionId, id: obj.id };
    if (obj instanceof Error) {
      const code = (obj as { code?: unknown }).code;
      return { name: obj.name, message: obj.message, ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}) };
    }
    if (obj instanceof Date) return obj.toISOString();
    // Honour toJSON the way JSON.stringify does: machine snapshots drop their machine and internals there.
    const toJSON = (obj as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') {
      path.add(obj);
      try {
        const plain: unknown = toJSON.call(obj);
        return plain === obj ? '[…]' : walk(plain, depth + 1);
      } finally {
        path.delete(obj);
      }
    }
    if (depth >= limits.depth) {
      positional++;
      return '[…]';
    }
    const before = positional;
    const plain = Array.isArray(obj) || Object.getPrototypeOf(obj) === Object.prototype;
    path.add(obj);
    let out: JsonValue;
    try {
      if (Array.isArray(obj) || obj instanceof Set) {
        const arr = Array.isArray(obj) ? obj : [...obj];
        const list = arr.slice(0, limits.items).map((x) => walk(x, depth + 1));
        if (arr.length > limits.items) list.push(`[… ${arr.length - limits.items} more]`);
        out = list;
      } else {
        const entries = obj instanceof Map ? [...obj.entries()].map(([k, x]) => [String(k), x] as const) : Object.entries(obj);
        const rec: Record<string, JsonValue> = {};
        let n = 0;
        for (const [k, x] of entries) {
          if (x === undefined || typeof x === 'function') continue;
          if (n++ >= limits.items) {
            rec['…'] = `${entries.length - limits.items} more keys`;
            break;
          }
          rec[k] = walk(x, depth + 1);
        }
        out = rec;
      }
    } finally {
      path.delete(obj);
    }
    if (cache && plain && positional === before) cache.set(obj, out);
    return out;
  };
  return walk(value, 0);
}
