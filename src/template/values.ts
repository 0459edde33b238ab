/**
 * How JavaScript values stand in for Go's in templates: arrays are slices, `Map`s and plain objects are
 * maps (ranged and printed in key order), class instances are structs (a missing field is an error, not
 * `<no value>`), functions on an object are its methods, `undefined` is Go's missing value and `null` its
 * nil. Integral numbers behave as ints, others as float64.
 */

/** Go's kinds, as far as the executor cares. */
export type GoKind = 'invalid' | 'nil' | 'bool' | 'int' | 'float' | 'string' | 'slice' | 'map' | 'struct' | 'func';

/** A struct's printed type name (Go's %T and error messages), set by the classes the functions return. */
export const GO_TYPE = Symbol('goType');

/** The kind of a value. */
export function kindOf(v: unknown): GoKind {
  if (v === undefined) return 'invalid';
  if (v === null) return 'nil';
  switch (typeof v) {
    case 'boolean':
      return 'bool';
    case 'number':
      // Beyond 2^53 a JavaScript number is no exact int: it prints as Go prints a float64 (1e+21).
      return Number.isSafeInteger(v) ? 'int' : 'float';
    case 'bigint':
      return 'int';
    case 'string':
      return 'string';
    case 'function':
      return 'func';
    default:
      if (Array.isArray(v)) return 'slice';
      if (v instanceof Map || isPlainMap(v)) return 'map';
      return 'struct';
  }
}

/** A plain object (or one made with Object.create(null)): a Go map. */
export function isPlainMap(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Go's type name for messages: `int`, `string`, `[]interface {}`, `map[string]interface {}`, a struct's name. */
export function typeName(v: unknown): string {
  const kind = kindOf(v);
  switch (kind) {
    case 'invalid':
    case 'nil':
      return '<nil>';
    case 'float':
      return 'float64';
    case 'slice':
      return '[]interface {}';
    case 'map':
      return 'map[string]interface {}';
    case 'func':
      return 'func';
    case 'struct': {
      const named = (v as { [GO_TYPE]?: string })[GO_TYPE];
      return named ?? `*${(v as object).constructor?.name ?? 'struct'}`;
    }
    default:
      return kind;
  }
}

/** A map's keys in Go's order (sorted: numbers numerically, strings by code unit as Go sorts bytes). */
export function mapKeys(v: Map<unknown, unknown> | Record<string, unknown>): unknown[] {
  const keys = v instanceof Map ? [...v.keys()] : Object.keys(v);
  return keys.sort((a, b) => {
    if (typeof a === 'number' && typeof b === 'number') return a - b;
    const sa = String(a);
    const sb = String(b);
    return sa < sb ? -1 : sa > sb ? 1 : 0;
  });
}

/** A map's entry, or undefined when it has none. */
export function mapGet(v: Map<unknown, unknown> | Record<string, unknown>, key: unknown): { value: unknown } | undefined {
  if (v instanceof Map) return v.has(key) ? { value: v.get(key) } : undefined;
  const k = String(key);
  return Object.prototype.hasOwnProperty.call(v, k) && Object.prototype.propertyIsEnumerable.call(v, k) ? { value: v[k] } : undefined;
}

/** A map's size. */
export function mapSize(v: Map<unknown, unknown> | Record<string, unknown>): number {
  return v instanceof Map ? v.size : Object.keys(v).length;
}

/** Go's truth (text/template isTrue): the zero value of its type is false; a struct is always true. */
export function isTrue(v: unknown): boolean {
  switch (kindOf(v)) {
    case 'invalid':
    case 'nil':
      return false;
    case 'bool':
      return v as boolean;
    case 'int':
    case 'float':
      return Number(v) !== 0;
    case 'string':
      return (v as string).length > 0;
    case 'slice':
      return (v as unknown[]).length > 0;
    case 'map':
      return mapSize(v as Record<string, unknown>) > 0;
    default:
      return true;
  }
}

/** A method of a value, when it has one of that name (functions on maps are not enumerable keys). */
export function methodOf(v: unknown, name: string): ((...args: unknown[]) => unknown) | undefined {
  if (typeof v !== 'object' || v === null || v instanceof Map) return undefined;
  const f = (v as Record<string, unknown>)[name];
  if (typeof f !== 'function') return undefined;
  if (isPlainMap(v) && Object.prototype.propertyIsEnumerable.call(v, name)) return undefined;
  return (f as (...args: unknown[]) => unknown).bind(v);
}

/** UTF-8 byte length (Go's len of a string). */
export function byteLength(s: string): number {
  return new TextEncoder().encode(s).length;
}
