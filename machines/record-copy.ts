/**
 * Copies of the machines' small records that add keys, made so V8 keeps them fast.
 *
 * Why not `{ ...record, [key]: value }` or `{ ...a, ...b }`: on Node 20 (V8 11.3) an object made by a spread
 * takes its source's shape without the transitions a new key needs, so every key the copy gains is added on
 * V8's slow path: about a microsecond a key, against tens of nanoseconds for a copy into an empty literal
 * (`Object.assign({}, record)`), whose added keys follow the shared, cached transitions. XState's own Actor
 * (`{ ...defaultOptions, ...options }`, 3-4 µs an actor) pays it too; these helpers keep the machines' own
 * copies off it. A spread that only overwrites keys the source has (`{ ...snapshot, context }`) is not affected.
 * Measured in docs/benchmarks.md, "P3 and P2, V8's spreads and the machines' copies".
 */

/** A copy of `record` with `key` set (added or replaced). */
export function withEntry<T extends object, K extends PropertyKey, V>(record: T, key: K, value: V): T & Record<K, V> {
  const copy = Object.assign({}, record) as T & Record<K, V>;
  (copy as Record<PropertyKey, unknown>)[key] = value;
  return copy;
}

/** `{ ...a, ...b }`, made by copying into an empty literal (see the file's comment). */
export function merged<A extends object, B extends object>(a: A, b: B): A & B {
  return Object.assign({}, a, b);
}
