/**
 * Nomad's Variable (nomad/structs/variables.go, api/variables.go): a path in a namespace holding string
 * items, with the indexes and times of its creation and last change. Times are Unix nanoseconds, as Nomad
 * writes them (`CreateTime`/`ModifyTime` are Go int64s), taken from a millisecond clock.
 */

/** The items of a variable: the secrets themselves, key to value. */
export type VariableItems = Record<string, string>;

/** A variable without its items: what lists answer (Nomad's `VariableMetadata`). */
export interface VariableMetadata {
  Namespace: string;
  Path: string;
  CreateIndex: number;
  ModifyIndex: number;
  /** Unix nanoseconds. */
  CreateTime: number;
  /** Unix nanoseconds. */
  ModifyTime: number;
}

/** A variable with its items (Nomad's `Variable`, `VariableDecrypted` on the server). */
export interface Variable extends VariableMetadata {
  Items: VariableItems;
}

/** The namespace a variable lands in when none is named. */
export const DEFAULT_NAMESPACE = 'default';

/**
 * The most a variable's items may hold: the bytes of every key and value together. Nomad's limit, fixed
 * and deliberately low ("variables are limited to 64KiB in total size").
 */
export const MAX_VARIABLE_SIZE = 65536;

/** The size Nomad counts against MAX_VARIABLE_SIZE: UTF-8 bytes of every key and value. */
export function itemsSize(items: VariableItems): number {
  let size = 0;
  for (const [k, v] of Object.entries(items)) size += Buffer.byteLength(k) + Buffer.byteLength(v);
  return size;
}

/** The metadata of `v`, without its items. */
export function metadataOf(v: VariableMetadata): VariableMetadata {
  return { Namespace: v.Namespace, Path: v.Path, CreateIndex: v.CreateIndex, ModifyIndex: v.ModifyIndex, CreateTime: v.CreateTime, ModifyTime: v.ModifyTime };
}

/** Unix nanoseconds of `ms` (milliseconds since the epoch), as Nomad stamps a variable. */
export const unixNanos = (ms: number): number => ms * 1_000_000;
