/**
 * Go's fmt as templates use it (`print`, `printf`, `println` and printing an action's value): the verbs
 * `%v %+v %d %s %q %x %X %o %O %b %c %U %e %E %f %F %g %G %t %T %%`, flags `+ - # 0 space`, width and
 * precision (also `*`), and Go's wording for misuse (`%!d(string=x)`, `%!s(MISSING)`, `%!(EXTRA int=1)`).
 */
import { kindOf, mapGet, mapKeys, typeName } from './values.ts';

interface Spec {
  plus: boolean;
  minus: boolean;
  sharp: boolean;
  zero: boolean;
  space: boolean;
  width?: number;
  prec?: number;
}

const NO_FLAGS: Spec = { plus: false, minus: false, sharp: false, zero: false, space: false };

/** fmt.Sprint: operands' %v, with a space between two operands when neither is a string. */
export function sprint(args: readonly unknown[]): string {
  let out = '';
  args.forEach((a, i) => {
    if (i > 0 && typeof a !== 'string' && typeof args[i - 1] !== 'string') out += ' ';
    out += formatValue(a, 'v', NO_FLAGS);
  });
  return out;
}

/** fmt.Sprintln: operands' %v separated by spaces, then a newline. */
export function sprintln(args: readonly unknown[]): string {
  return `${args.map((a) => formatValue(a, 'v', NO_FLAGS)).join(' ')}\n`;
}

/** A value as `{{ . }}` prints it (fmt.Fprint of one value). */
export function printValue(v: unknown): string {
  return formatValue(v, 'v', NO_FLAGS);
}

/** fmt.Sprintf. */
export function sprintf(format: string, args: readonly unknown[]): string {
  let out = '';
  let argi = 0;
  let i = 0;
  while (i < format.length) {
    const pct = format.indexOf('%', i);
    if (pct < 0) {
      out += format.slice(i);
      break;
    }
    out += format.slice(i, pct);
    i = pct + 1;
    const spec: Spec = { ...NO_FLAGS };
    for (; i < format.length; i++) {
      const c = format[i];
      if (c === '+') spec.plus = true;
      else if (c === '-') spec.minus = true;
      else if (c === '#') spec.sharp = true;
      else if (c === '0') spec.zero = true;
      else if (c === ' ') spec.space = true;
      else break;
    }
    const number = (): number | undefined => {
      if (format[i] === '*') {
        i++;
        const a = args[argi++];
        return typeof a === 'number' && Number.isInteger(a) ? a : undefined;
      }
      const m = /^[0-9]+/.exec(format.slice(i));
      if (!m) return undefined;
      i += m[0].length;
      return Number(m[0]);
    };
    spec.width = number();
    if (spec.width !== undefined && spec.width < 0) {
      spec.minus = true;
      spec.width = -spec.width;
    }
    if (format[i] === '.') {
      i++;
      spec.prec = number() ?? 0;
    }
    if (spec.minus) spec.zero = false;
    const verb = format[i];
    if (verb === undefined) {
      out += '%!(NOVERB)';
      break;
    }
    i++;
    if (verb === '%') {
      out += '%';
      continue;
    }
    if (argi >= args.length) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    out += formatValue(args[argi++], verb, spec);
  }
  if (argi < args.length) {
    out += `%!(EXTRA ${args.slice(argi).map((a) => `${typeName(a)}=${formatValue(a, 'v', NO_FLAGS)}`).join(', ')})`;
  }
  return out;
}

function badVerb(verb: string, v: unknown): string {
  if (v === undefined || v === null) return `%!${verb}(<nil>)`;
  return `%!${verb}(${typeName(v)}=${formatValue(v, 'v', NO_FLAGS)})`;
}

function pad(s: string, spec: Spec, numeric = false): string {
  const width = spec.width ?? 0;
  if (s.length >= width) return s;
  if (spec.minus) return s + ' '.repeat(width - s.length);
  if (spec.zero) {
    // Zeros go after the sign.
    const sign = numeric && /^[+\- ]/.test(s) ? s[0]! : '';
    return sign + '0'.repeat(width - s.length) + s.slice(sign.length);
  }
  return ' '.repeat(width - s.length) + s;
}

/** One operand under one verb. */
export function formatValue(v: unknown, verb: string, spec: Spec): string {
  if (verb === 'T') return pad(typeName(v), spec);
  // Go calls String() (and Error()) for %v %s %q %x %X.
  if ('vsqxX'.includes(verb) && typeof v === 'object' && v !== null && !Array.isArray(v)) {
    const s = (v as { String?: unknown }).String;
    if (typeof s === 'function' && !(v instanceof Map)) return formatString(String(s.call(v)), verb, spec);
    if (v instanceof Error) return formatString(v.message, verb, spec);
  }
  const kind = kindOf(v);
  switch (kind) {
    case 'invalid':
    case 'nil':
      return verb === 'v' ? pad('<nil>', spec) : badVerb(verb, v);
    case 'bool':
      return verb === 'v' || verb === 't' ? pad(String(v), spec) : badVerb(verb, v);
    case 'int':
      return formatInt(v as number | bigint, verb, spec);
    case 'float':
      return formatFloatVerb(v as number, verb, spec);
    case 'string':
      return formatString(v as string, verb, spec);
    case 'slice':
      return pad(`[${(v as unknown[]).map((e) => formatValue(e, verb, { ...spec, width: undefined })).join(' ')}]`, spec);
    case 'map': {
      const m = v as Map<unknown, unknown> | Record<string, unknown>;
      const inner = { ...spec, width: undefined };
      return pad(`map[${mapKeys(m).map((k) => `${formatValue(k, verb, inner)}:${formatValue(mapGet(m, k)!.value, verb, inner)}`).join(' ')}]`, spec);
    }
    case 'struct': {
      if (v instanceof Date) return formatString(v.toISOString(), verb, spec);
      const inner = { ...spec, width: undefined };
      const fields = Object.entries(v as object).filter(([, f]) => typeof f !== 'function');
      return pad(`{${fields.map(([k, f]) => (spec.plus ? `${k}:` : '') + formatValue(f, verb, inner)).join(' ')}}`, spec);
    }
    case 'func':
      return verb === 'v' ? pad('<func>', spec) : badVerb(verb, v);
  }
}

function formatString(s: string, verb: string, spec: Spec): string {
  switch (verb) {
    case 'v':
    case 's':
      return pad(spec.prec !== undefined ? [...s].slice(0, spec.prec).join('') : s, spec);
    case 'q':
      return pad(spec.sharp && !/[`\p{Cc}]/u.test(s) ? `\`${s}\`` : quoteGo(s), spec);
    case 'x':
    case 'X': {
      const bytes = [...new TextEncoder().encode(s)].map((b) => b.toString(16).padStart(2, '0'));
      const hex = bytes.join(spec.space ? ' ' : '');
      return pad(verb === 'X' ? hex.toUpperCase() : hex, spec);
    }
    default:
      return badVerb(verb, s);
  }
}

function formatInt(n: number | bigint, verb: string, spec: Spec): string {
  const big = BigInt(n);
  const neg = big < 0n;
  const abs = neg ? -big : big;
  let digits: string;
  let prefix = '';
  switch (verb) {
    case 'v':
    case 'd':
      digits = abs.toString(10);
      break;
    case 'b':
      digits = abs.toString(2);
      if (spec.sharp) prefix = '0b';
      break;
    case 'o':
      digits = abs.toString(8);
      if (spec.sharp) prefix = '0';
      break;
    case 'O':
      digits = abs.toString(8);
      prefix = '0o';
      break;
    case 'x':
      digits = abs.toString(16);
      if (spec.sharp) prefix = '0x';
      break;
    case 'X':
      digits = abs.toString(16).toUpperCase();
      if (spec.sharp) prefix = '0X';
      break;
    case 'c':
      return pad(String.fromCodePoint(Number(n)), spec);
    case 'q':
      return pad(quoteRune(Number(n)), spec);
    case 'U':
      return pad(`U+${abs.toString(16).toUpperCase().padStart(4, '0')}`, spec);
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G':
      // An integral float64 from data (JSON numbers are floats in Go) still takes the float verbs.
      if (typeof n === 'number') return formatFloatVerb(n, verb, spec);
      return badVerb(verb, n);
    default:
      return badVerb(verb, n);
  }
  if (spec.prec !== undefined) {
    if (spec.prec === 0 && abs === 0n) digits = '';
    digits = digits.padStart(spec.prec, '0');
  }
  const sign = neg ? '-' : spec.plus ? '+' : spec.space ? ' ' : '';
  // Go ignores the 0 flag when a precision is given for integers.
  return pad(sign + prefix + digits, { ...spec, zero: spec.zero && spec.prec === undefined }, true);
}

function formatFloatVerb(x: number, verb: string, spec: Spec): string {
  let s: string;
  switch (verb) {
    case 'v':
      s = formatFloat(x, 'g', spec.prec ?? -1, spec.sharp);
      break;
    case 'e':
    case 'E':
      s = formatFloat(x, 'e', spec.prec ?? 6, spec.sharp);
      break;
    case 'f':
    case 'F':
      s = formatFloat(x, 'f', spec.prec ?? 6, spec.sharp);
      break;
    case 'g':
    case 'G':
      s = formatFloat(x, 'g', spec.prec ?? -1, spec.sharp);
      break;
    default:
      return badVerb(verb, x);
  }
  if (verb === 'E' || verb === 'G') s = s.toUpperCase();
  if (!s.startsWith('-') && !s.startsWith('+')) {
    if (spec.plus) s = `+${s}`;
    else if (spec.space) s = ` ${s}`;
  } else if (s === '+Inf' && !spec.plus) s = spec.space ? ' Inf' : '+Inf';
  const infinite = !Number.isFinite(x);
  return pad(s, { ...spec, zero: spec.zero && !infinite }, true);
}

/** strconv.FormatFloat with 'e', 'f' or 'g' and a precision (-1: the fewest digits that read back exactly). */
export function formatFloat(x: number, fmt: 'e' | 'f' | 'g', prec: number, sharp = false): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return '+Inf';
  if (x === -Infinity) return '-Inf';
  const neg = x < 0 || Object.is(x, -0);
  const abs = Math.abs(x);
  const sign = neg ? '-' : '';
  // Decimal digits and exponent: d.ddd × 10^exp.
  const digitsOf = (p: number): { digits: string; exp: number } => {
    const e = p < 0 ? abs.toExponential() : abs.toExponential(p);
    const [mant, ex] = e.split('e') as [string, string];
    return { digits: mant.replace('.', ''), exp: Number(ex) };
  };
  const eForm = (digits: string, exp: number): string => {
    const frac = digits.slice(1);
    const expStr = `${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
    return `${digits[0]}${frac || sharp ? '.' : ''}${frac}e${expStr}`;
  };
  const fForm = (digits: string, exp: number, fracDigits: number): string => {
    // digits × 10^(exp - digits.length + 1), written with fracDigits after the point.
    let intPart: string;
    let frac: string;
    if (exp >= 0) {
      const all = digits.padEnd(exp + 1, '0');
      intPart = all.slice(0, exp + 1);
      frac = all.slice(exp + 1);
    } else {
      intPart = '0';
      frac = '0'.repeat(-exp - 1) + digits;
    }
    frac = frac.padEnd(fracDigits, '0').slice(0, fracDigits);
    return fracDigits > 0 || sharp ? `${intPart}.${frac}` : intPart;
  };
  switch (fmt) {
    case 'e': {
      const { digits, exp } = digitsOf(prec);
      return sign + eForm(digits, exp);
    }
    case 'f': {
      if (prec < 0) {
        const { digits, exp } = digitsOf(-1);
        return sign + fForm(digits, exp, Math.max(digits.length - exp - 1, 0));
      }
      return sign + (abs < 1e21 ? abs.toFixed(prec) : fForm(digitsOf(-1).digits, digitsOf(-1).exp, prec));
    }
    case 'g': {
      const shortest = prec < 0;
      let { digits, exp } = digitsOf(shortest ? -1 : Math.max(prec, 1) - 1);
      if (abs === 0) [digits, exp] = ['0', 0];
      if (!sharp) digits = digits.replace(/(?<=.)0+$/, '');
      // strconv: %e when the exponent is < -4 or >= the precision (6 when the precision is the shortest).
      let eprec = shortest ? 6 : Math.max(prec, 1);
      if (!shortest && eprec > digits.length && digits.length >= exp + 1) eprec = digits.length;
      if (exp < -4 || exp >= eprec) return sign + eForm(digits, exp);
      return sign + fForm(digits, exp, Math.max(digits.length - exp - 1, 0));
    }
  }
}

/** strconv.Quote: a double-quoted Go string with Go's escapes. */
export function quoteGo(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    switch (ch) {
      case '"':
        out += '\\"';
        continue;
      case '\\':
        out += '\\\\';
        continue;
      case '\x07':
        out += '\\a';
        continue;
      case '\b':
        out += '\\b';
        continue;
      case '\f':
        out += '\\f';
        continue;
      case '\n':
        out += '\\n';
        continue;
      case '\r':
        out += '\\r';
        continue;
      case '\t':
        out += '\\t';
        continue;
      case '\v':
        out += '\\v';
        continue;
    }
    if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (/[\p{Cc}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/u.test(ch) || (cp >= 0x80 && cp <= 0x9f)) {
      out += cp > 0xffff ? `\\U${cp.toString(16).padStart(8, '0')}` : `\\u${cp.toString(16).padStart(4, '0')}`;
    } else out += ch;
  }
  return `${out}"`;
}

function quoteRune(cp: number): string {
  if (cp === 0x27) return "'\\''";
  if (cp === 0x22) return `'"'`;
  const q = quoteGo(String.fromCodePoint(cp));
  return `'${q.slice(1, -1)}'`;
}
