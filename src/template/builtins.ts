/**
 * Go's predefined template functions (text/template/funcs.go): `and or not len index slice print printf
 * println html js urlquery call eq ne lt le gt ge`. `and`/`or` short-circuit in the executor; their entries
 * here are for arity and for use as values.
 */
import { fixed, variadic, type FuncMap } from './funcs.ts';
import { sprint, sprintf, sprintln } from './go-fmt.ts';
import { byteLength, isTrue, kindOf, mapGet, mapSize, typeName } from './values.ts';

/** The arguments of html/js/urlquery as one string: the string itself, or fmt.Sprint of them all. */
function evalArgs(args: unknown[]): string {
  return args.length === 1 && typeof args[0] === 'string' ? args[0] : sprint(args);
}

function length(item: unknown): number {
  switch (kindOf(item)) {
    case 'string':
      return byteLength(item as string);
    case 'slice':
      return (item as unknown[]).length;
    case 'map':
      return mapSize(item as Record<string, unknown>);
    case 'invalid':
    case 'nil':
      throw new Error('len of nil pointer');
    default:
      throw new Error(`len of type ${typeName(item)}`);
  }
}

function indexArg(index: unknown, cap: number): number {
  if (index === undefined || index === null) throw new Error('cannot index slice/array with nil');
  if (typeof index !== 'number' || !Number.isInteger(index)) throw new Error(`cannot index slice/array with type ${typeName(index)}`);
  if (index < 0 || index >= cap) throw new Error(`index out of range: ${index}`);
  return index;
}

function index(item: unknown, ...indexes: unknown[]): unknown {
  let v = item;
  if (v === undefined || v === null) throw new Error('index of untyped nil');
  for (const i of indexes) {
    switch (kindOf(v)) {
      case 'slice':
        v = (v as unknown[])[indexArg(i, (v as unknown[]).length)];
        break;
      case 'string': {
        const bytes = new TextEncoder().encode(v as string);
        v = bytes[indexArg(i, bytes.length)];
        break;
      }
      case 'map':
        // A missing key gives the element type's zero value, which prints as <no value>.
        v = mapGet(v as Record<string, unknown>, i)?.value;
        break;
      case 'invalid':
      case 'nil':
        throw new Error('index of untyped nil');
      default:
        throw new Error(`can't index item of type ${typeName(v)}`);
    }
  }
  return v;
}

function slice(item: unknown, ...indexes: unknown[]): unknown {
  if (item === undefined || item === null) throw new Error('slice of untyped nil');
  if (indexes.length > 3) throw new Error(`too many slice indexes: ${indexes.length}`);
  const kind = kindOf(item);
  if (kind !== 'string' && kind !== 'slice') throw new Error(`can't slice item of type ${typeName(item)}`);
  if (kind === 'string' && indexes.length === 3) throw new Error('cannot 3-index slice a string');
  const len = kind === 'string' ? (item as string).length : (item as unknown[]).length;
  const idx = [0, len];
  indexes.forEach((i, n) => {
    if (typeof i !== 'number' || !Number.isInteger(i)) throw new Error(`cannot index slice/array with type ${typeName(i)}`);
    if (i < 0 || i > len) throw new Error(`index out of range: ${i}`);
    idx[n] = i;
  });
  if (idx[0]! > idx[1]!) throw new Error(`invalid slice index: ${idx[0]} > ${idx[1]}`);
  if (indexes.length === 3 && idx[1]! > idx[2]!) throw new Error(`invalid slice index: ${idx[1]} > ${idx[2]}`);
  return kind === 'string' ? (item as string).slice(idx[0], idx[1]) : (item as unknown[]).slice(idx[0], idx[1]);
}

type Basic = 'bool' | 'number' | 'string' | 'invalid' | 'other';
function basicKind(v: unknown): Basic {
  const k = kindOf(v);
  if (k === 'int' || k === 'float') return 'number';
  if (k === 'bool' || k === 'string') return k;
  if (k === 'invalid' || k === 'nil') return 'invalid';
  return 'other';
}

function eq(arg1: unknown, ...rest: unknown[]): boolean {
  if (rest.length === 0) throw new Error('missing argument for comparison');
  const k1 = basicKind(arg1);
  for (const arg of rest) {
    const k2 = basicKind(arg);
    let truth: boolean;
    if (k1 !== k2) {
      // Comparing with a missing or nil value is false, not an error (Go: only two valid values must match).
      if (k1 !== 'invalid' && k2 !== 'invalid') throw new Error('incompatible types for comparison');
      truth = false;
    } else if (k1 === 'other') {
      const a = kindOf(arg1);
      const b = kindOf(arg);
      if (a === 'slice' || a === 'map' || a === 'func') throw new Error(`non-comparable type ${typeName(arg1)}`);
      if (b === 'slice' || b === 'map' || b === 'func') throw new Error(`non-comparable type ${typeName(arg)}`);
      truth = arg1 === arg;
    } else if (k1 === 'invalid') {
      truth = true;
    } else {
      truth = arg1 === arg;
    }
    if (truth) return true;
  }
  return false;
}

function lt(a: unknown, b: unknown): boolean {
  const ka = basicKind(a);
  const kb = basicKind(b);
  if (ka === 'bool' || ka === 'invalid' || ka === 'other' || kb === 'bool' || kb === 'invalid' || kb === 'other') throw new Error('invalid type for comparison');
  if (ka !== kb) throw new Error('incompatible types for comparison');
  return (a as number | string) < (b as number | string);
}

/** Go's HTMLEscapeString. */
export function htmlEscape(s: string): string {
  return s.replace(/[&'<>"\0]/g, (c) => ({ '&': '&amp;', "'": '&#39;', '<': '&lt;', '>': '&gt;', '"': '&#34;', '\0': '\uFFFD' })[c]!);
}

/** Go's JSEscapeString. */
export function jsEscape(s: string): string {
  let out = '';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === "'") out += "\\'";
    else if (ch === '"') out += '\\"';
    else if (ch === '<') out += '\\u003C';
    else if (ch === '>') out += '\\u003E';
    else if (ch === '&') out += '\\u0026';
    else if (ch === '=') out += '\\u003D';
    else if (cp < 0x20 || (cp >= 0x7f && /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(ch))) out += `\\u${cp.toString(16).toUpperCase().padStart(4, '0')}`;
    else out += ch;
  }
  return out;
}

/** Go's url.QueryEscape. */
export function queryEscape(s: string): string {
  let out = '';
  for (const b of new TextEncoder().encode(s)) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
    else if (c === ' ') out += '+';
    else out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Go's builtins. */
export const BUILTINS: FuncMap = {
  and: variadic(1, (...args: unknown[]) => args.find((a) => !isTrue(a)) ?? args[args.length - 1]),
  or: variadic(1, (...args: unknown[]) => args.find((a) => isTrue(a)) ?? args[args.length - 1]),
  not: fixed(1, (a: unknown) => !isTrue(a)),
  len: fixed(1, length),
  index: variadic(1, index),
  slice: variadic(1, slice),
  print: variadic(0, (...args: unknown[]) => sprint(args)),
  printf: variadic(1, (format: unknown, ...args: unknown[]) => {
    if (typeof format !== 'string') throw new Error(`wrong type for value; expected string; got ${typeName(format)}`);
    return sprintf(format, args);
  }),
  println: variadic(0, (...args: unknown[]) => sprintln(args)),
  html: variadic(0, (...args: unknown[]) => htmlEscape(evalArgs(args))),
  js: variadic(0, (...args: unknown[]) => jsEscape(evalArgs(args))),
  urlquery: variadic(0, (...args: unknown[]) => queryEscape(evalArgs(args))),
  call: variadic(1, (fn: unknown, ...args: unknown[]) => {
    if (fn === undefined || fn === null) throw new Error('call of nil');
    if (typeof fn !== 'function') throw new Error(`non-function of type ${typeName(fn)}`);
    return (fn as (...a: unknown[]) => unknown)(...args);
  }),
  eq: variadic(1, eq),
  ne: fixed(2, (a: unknown, b: unknown) => !eq(a, b)),
  lt: fixed(2, lt),
  le: fixed(2, (a: unknown, b: unknown) => lt(a, b) || eq(a, b)),
  gt: fixed(2, (a: unknown, b: unknown) => !lt(a, b) && !eq(a, b)),
  ge: fixed(2, (a: unknown, b: unknown) => !lt(a, b)),
};
