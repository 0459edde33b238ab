/**
 * Go's encoding/json as consul-template's `toJSON`/`toJSONPretty` use it: map keys sorted, struct fields in
 * order, `MarshalJSON` honoured, and `<`, `>`, `&` escaped as `\u003c` etc. (json.Marshal's HTML escaping).
 */
import { kindOf, mapGet, mapKeys } from './values.ts';

/** A value that marshals itself (Go's json.Marshaler): returns the JSON value to write. */
export const MARSHAL_JSON = Symbol('marshalJSON');

function escapeString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** json.Marshal (indent ''), or json.MarshalIndent(v, '', indent). */
export function goJSON(v: unknown, indent = ''): string {
  const seen = new Set<unknown>();
  const enc = (x: unknown, level: number): string => {
    const custom = typeof x === 'object' && x !== null ? (x as { [MARSHAL_JSON]?: () => unknown })[MARSHAL_JSON] : undefined;
    if (custom) return enc(custom.call(x), level);
    const nl = indent ? `\n${indent.repeat(level + 1)}` : '';
    const close = indent ? `\n${indent.repeat(level)}` : '';
    const sep = indent ? ': ' : ':';
    switch (kindOf(x)) {
      case 'invalid':
      case 'nil':
        return 'null';
      case 'bool':
        return String(x);
      case 'int':
      case 'float': {
        if (typeof x === 'bigint') return x.toString();
        if (!Number.isFinite(x as number)) throw new Error(`json: unsupported value: ${String(x)}`);
        return JSON.stringify(x);
      }
      case 'string':
        return escapeString(x as string);
      case 'func':
        throw new Error('json: unsupported type: func');
      default:
        break;
    }
    if (seen.has(x)) throw new Error('json: unsupported value: encountered a cycle');
    seen.add(x);
    try {
      if (Array.isArray(x)) {
        if (x.length === 0) return '[]';
        return `[${x.map((e) => nl + enc(e, level + 1)).join(',')}${close}]`;
      }
      const entries: [string, unknown][] =
        kindOf(x) === 'map'
          ? mapKeys(x as Record<string, unknown>).map((k) => [String(k), mapGet(x as Record<string, unknown>, k)!.value])
          : Object.entries(x as object).filter(([, f]) => typeof f !== 'function');
      if (entries.length === 0) return '{}';
      return `{${entries.map(([k, e]) => `${nl}${escapeString(k)}${sep}${enc(e, level + 1)}`).join(',')}${close}}`;
    } finally {
      seen.delete(x);
    }
  };
  return enc(v, 0);
}
