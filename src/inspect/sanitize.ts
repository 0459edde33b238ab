/**
 * Reduces any value to JSON: context, event payloads and outputs may hold actor refs, errors, functions or
 * cycles (they should not, but the inspector must never be the thing that crashes or keeps them alive).
 */
import { cutMarker, type JsonValue } from './protocol.ts';

/** Limits that keep one snapshot from flooding the socket. */
export interface SanitizeLimits {
  depth: number;
  /** Items kept per array (the newest: the last ones) and keys per object (the first ones). */
  items: number;
  /** Characters kept per string. */
  chars: number;
}

/** Generous enough for an alloc's context (every task event kept), small enough to bound a runaway value. */
export const DEFAULT_LIMITS: SanitizeLimits = { depth: 12, items: 500, chars: 4_000 };

function isActorRef(v: object): v is { sessionId: string; id: string } {
  return typeof (v as { sessionId?: unknown }).sessionId === 'string' && typeof (v as { send?: unknown }).send === 'function';
}

/** A primitive's JSON form; `undefined` for objects (and null), which the walk handles. */
function primitive(v: unknown, chars: number): JsonValue | undefined {
  switch (typeof v) {
    case 'string':
      return v.length > chars ? `${v.slice(0, chars)}…` : v;
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
  return undefined;
}

/** Plain data: what JSON.stringify writes field by field (arrays and objects whose prototype is Object's or null). */
function isPlain(obj: object): boolean {
  if (Array.isArray(obj)) return true;
  const proto = Object.getPrototypeOf(obj) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * `value` as JSON: actor refs become `{ $actor, id }`, errors `{ name, message, code? }`, cycles
 * `'[Circular]'`, and what passes the limits is cut. Plain data that needs none of that is returned as it
 * is, not copied; an object is copied only when something in it changed. So the result shares structure
 * with `value` (XState's immutable context, in the stream): read it, never mutate it.
 */
export function sanitize(value: unknown, limits: SanitizeLimits = DEFAULT_LIMITS): JsonValue {
  if (value === null) return null;
  const p = primitive(value, limits.chars);
  if (p !== undefined) return p;
  // The objects from the root to the one being walked (at most `limits.depth` deep): a cycle is one met again.
  return walk(value, 0, limits, []);
}

// The walk is made of plain functions rather than closures per call: sanitize runs for every patch value,
// and a closure made per call costs an allocation (and, under tsx's keepNames, a name defined on each).

function walk(v: unknown, depth: number, limits: SanitizeLimits, stack: object[]): JsonValue {
  if (v === null) return null;
  const prim = primitive(v, limits.chars);
  if (prim !== undefined) return prim;
  const obj = v as object;
  if (stack.includes(obj)) return '[Circular]';
  if (!isPlain(obj)) {
    if (isActorRef(obj)) return { $actor: obj.sessionId, id: obj.id };
    if (obj instanceof Error) {
      const code = (obj as { code?: unknown }).code;
      return { name: obj.name, message: obj.message, ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}) };
    }
    if (obj instanceof Date) return obj.toISOString();
  }
  // Honour toJSON the way JSON.stringify does: machine snapshots drop their machine and internals there.
  const toJSON = (obj as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') {
    stack.push(obj);
    try {
      const plain: unknown = toJSON.call(obj);
      return plain === obj ? '[…]' : walk(plain, depth + 1, limits, stack);
    } finally {
      stack.pop();
    }
  }
  if (depth >= limits.depth) return '[…]';
  stack.push(obj);
  try {
    if (Array.isArray(obj)) return listOf(obj, depth, true, limits, stack);
    if (obj instanceof Set) return listOf([...obj], depth, false, limits, stack);
    // A Map is shown as the object of its entries (keys as strings).
    if (obj instanceof Map) return recordOf(Object.fromEntries([...obj].map(([k, x]) => [String(k), x])), depth, false, limits, stack);
    return recordOf(obj as Record<string, unknown>, depth, isPlain(obj), limits, stack);
  } finally {
    stack.pop();
  }
}

/**
 * The list's items as JSON: `arr` itself when each item is already its own JSON form and `reuse` allows.
 * A list over the limit keeps its newest (last) items behind a marker saying how many earlier ones were
 * cut (`cutList`): lists in a context grow at the end (task events), and the page shows the latest.
 */
function listOf(arr: readonly unknown[], depth: number, reuse: boolean, limits: SanitizeLimits, stack: object[]): JsonValue {
  const from = Math.max(0, arr.length - limits.items);
  let copy: JsonValue[] | undefined = reuse && from === 0 ? undefined : [];
  if (from > 0) copy!.push(cutMarker(from));
  for (let i = from; i < arr.length; i++) {
    const x = arr[i];
    const j = walk(x, depth + 1, limits, stack);
    if (copy) copy.push(j);
    else if (j !== x) {
      copy = arr.slice(0, i) as JsonValue[];
      copy.push(j);
    }
  }
  return copy ?? (arr as JsonValue[]);
}

/**
 * The object's fields as JSON, functions left out: `o` itself when nothing needs changing and `reuse`
 * allows (a field left undefined stays, as JSON.stringify leaves it out anyway).
 */
function recordOf(o: Record<string, unknown>, depth: number, reuse: boolean, limits: SanitizeLimits, stack: object[]): JsonValue {
  const keys = Object.keys(o);
  let copy: Record<string, JsonValue> | undefined = reuse ? undefined : {};
  let n = 0;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const x = o[k];
    const dropped = x === undefined || typeof x === 'function';
    const cut = !dropped && n >= limits.items;
    const j = dropped || cut ? undefined : walk(x, depth + 1, limits, stack);
    if (!copy && j !== x) {
      copy = {};
      for (let m = 0; m < i; m++) copy[keys[m]!] = o[keys[m]!] as JsonValue;
    }
    if (cut) {
      copy![`…`] = `${keys.length - limits.items} more keys`;
      break;
    }
    if (j === undefined) continue;
    n++;
    if (copy) copy[k] = j;
  }
  return copy ?? (o as { [key: string]: JsonValue });
}
