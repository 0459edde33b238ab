/** go-cty's format() and formatlist(): Go's fmt verbs, with cty's own meaning of %v, %#v, %q and argument indexes. */
import { asBool, asNumber, asString, formatNumber, typeOf, type Value } from '../values.ts';
import { jsonEncode } from './json.ts';
import { FunctionError } from './types.ts';

const VERB = /%([-+# 0]*)(\[(\d+)\])?(\d+|\*)?(?:\.(\d+))?(\[(\d+)\])?([a-zA-Z%])?/g;

export function format(spec: string, args: Value[]): string {
  let next = 0;
  let reordered = false;
  let out = '';
  let last = 0;
  for (const m of spec.matchAll(VERB)) {
    out += spec.slice(last, m.index);
    last = m.index + m[0].length;
    const verb = m[8];
    if (verb === undefined) throw new FunctionError(`unterminated format verb at offset ${m.index}`);
    if (verb === '%') {
      out += '%';
      continue;
    }
    const flags = m[1]!;
    const index = m[3] ?? m[7];
    if (index !== undefined) {
      next = Number(index) - 1;
      reordered = true;
    }
    if (next >= args.length || next < 0) throw new FunctionError(`not enough arguments for %${verb} at offset ${m.index}`);
    const arg = args[next++];
    out += pad(verb1(verb, flags, m[5] === undefined ? undefined : Number(m[5]), arg, m.index), flags, m[4] === undefined ? 0 : Number(m[4]));
  }
  out += spec.slice(last);
  // As Go's fmt: with explicit argument indexes, arguments may be used in any order, or not at all.
  if (!reordered && next < args.length) throw new FunctionError(`too many arguments; no verbs left to use argument ${next + 1}`);
  return out;
}

function verb1(verb: string, flags: string, precision: number | undefined, arg: Value, at: number): string {
  const need = <T>(v: T | undefined, what: string): T => {
    if (v === undefined || arg === null) throw new FunctionError(`unsupported value for "%${verb}" at offset ${at}: ${what} required, got ${arg === null ? 'null' : typeOf(arg)}`);
    return v;
  };
  const sign = (n: number, s: string): string => (n >= 0 && flags.includes('+') ? `+${s}` : n >= 0 && flags.includes(' ') ? ` ${s}` : s);
  switch (verb) {
    case 'v':
      if (arg === null) return 'null';
      if (flags.includes('#')) return jsonEncode(arg);
      return asString(arg) ?? jsonEncode(arg);
    case 't':
      return String(need(asBool(arg), 'bool'));
    case 's':
      return precision === undefined ? need(asString(arg), 'string') : Array.from(need(asString(arg), 'string')).slice(0, precision).join('');
    case 'q':
      return JSON.stringify(need(asString(arg), 'string'));
    case 'd': {
      const n = need(asNumber(arg), 'number');
      if (!Number.isInteger(n)) throw new FunctionError(`unsupported value for "%d" at offset ${at}: an integer is required, got ${formatNumber(n)}`);
      return sign(n, formatNumber(n));
    }
    case 'b':
    case 'o':
    case 'x':
    case 'X': {
      if (verb !== 'b' && typeof arg === 'string' && asNumber(arg) === undefined) {
        const hex = Buffer.from(arg).toString('hex');
        return verb === 'X' ? hex.toUpperCase() : hex;
      }
      const n = need(asNumber(arg), 'number');
      const s = Math.trunc(n).toString(verb === 'b' ? 2 : verb === 'o' ? 8 : 16);
      return sign(n, verb === 'X' ? s.toUpperCase() : s);
    }
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G': {
      const n = need(asNumber(arg), 'number');
      let s: string;
      if (verb === 'f' || verb === 'F') s = n.toFixed(precision ?? 6);
      else if (verb === 'e' || verb === 'E') s = n.toExponential(precision ?? 6).replace(/e([+-])(\d)$/, 'e$10$2');
      else s = precision === undefined ? formatNumber(n) : String(Number(n.toPrecision(precision)));
      return sign(n, verb === verb.toUpperCase() ? s.toUpperCase() : s);
    }
    default:
      throw new FunctionError(`unsupported format verb %${verb} at offset ${at}`);
  }
}

function pad(s: string, flags: string, width: number): string {
  const len = Array.from(s).length;
  if (len >= width) return s;
  if (flags.includes('-')) return s + ' '.repeat(width - len);
  if (flags.includes('0') && /^[+-]?[\d.]/.test(s)) {
    const signed = /^[+-]/.test(s) ? 1 : 0;
    return s.slice(0, signed) + '0'.repeat(width - len) + s.slice(signed);
  }
  return ' '.repeat(width - len) + s;
}

/** formatlist(): format() once per item of the list arguments (all of one length); other arguments repeat. */
export function formatList(spec: string, args: Value[]): string[] {
  let n: number | undefined;
  for (const [i, a] of args.entries()) {
    if (!Array.isArray(a)) continue;
    if (n !== undefined && a.length !== n) throw new FunctionError(`argument ${i + 2} has length ${a.length}, which is inconsistent with the earlier list argument of length ${n}`);
    n = a.length;
  }
  if (n === undefined) return [format(spec, args)];
  return Array.from({ length: n }, (_, k) => format(spec, args.map((a) => (Array.isArray(a) ? a[k] : a))));
}
