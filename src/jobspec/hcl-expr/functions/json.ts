/** JSON as go-cty writes it: object keys sorted, numbers in cty's form, `<`, `>`, `&` escaped as Go's encoder does. */
import { formatNumber, isObject, sortedKeys, type Value } from '../values.ts';

export function jsonEncode(v: Value): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'number') return formatNumber(v);
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'string') return goString(v);
  if (Array.isArray(v)) return `[${v.map(jsonEncode).join(',')}]`;
  if (isObject(v)) return `{${sortedKeys(v).map((k) => `${goString(k)}:${jsonEncode(v[k])}`).join(',')}}`;
  return 'null';
}

const goString = (s: string): string =>
  JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
