/** go-cty's string functions, as Nomad's jobspec2 registers them. */
import { formatNumber } from '../values.ts';
import { format, formatList } from './format.ts';
import { fn, FunctionError, type HclFunction } from './types.ts';

const graphemes = (s: string): string[] => Array.from(new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(s), (g) => g.segment);

/** Go's regexp replacement `${1}` / `$name` written for JavaScript. */
const jsReplacement = (r: string): string => r.replace(/\$\{(\w+)\}/g, (_m, g: string) => (/^\d+$/.test(g) ? `$${g}` : `$<${g}>`));

function regexOf(pattern: string): RegExp {
  try {
    return new RegExp(pattern.replace(/^\(\?([ims]+)\)/, ''), `gu${/^\(\?([ims]+)\)/.exec(pattern)?.[1] ?? ''}`);
  } catch (err) {
    throw new FunctionError(`invalid regular expression ${JSON.stringify(pattern)}: ${(err as Error).message}`);
  }
}

const reverse = fn(['str:string'], ([s]) => graphemes(s as string).reverse().join(''));

export const STRING_FUNCTIONS: Record<string, HclFunction> = {
  upper: fn(['str:string'], ([s]) => (s as string).toUpperCase()),
  lower: fn(['str:string'], ([s]) => (s as string).toLowerCase()),
  title: fn(['str:string'], ([s]) => (s as string).replace(/(^|[^\p{L}\p{N}_])(\p{L})/gu, (_m, pre: string, c: string) => pre + c.toUpperCase())),
  strlen: fn(['str:string'], ([s]) => graphemes(s as string).length),
  // Nomad registers cty's string ReverseFunc under both names: reverse() reverses a string, not a list.
  reverse,
  strrev: reverse,
  substr: fn(['str:string', 'offset:number', 'length:number'], ([s, o, l]) => {
    const g = graphemes(s as string);
    let offset = o as number;
    let length = l as number;
    if (offset < 0) offset += g.length;
    if (offset < 0 || offset > g.length) throw new FunctionError(`offset ${formatNumber(o as number)} is out of range for a string of ${g.length} character(s)`);
    if (length < 0) length = g.length - offset;
    return g.slice(offset, offset + length).join('');
  }),
  format: fn(['format:string'], ([f, ...args]) => format(f as string, args), 'args:any'),
  formatlist: fn(['format:string'], ([f, ...args]) => formatList(f as string, args), 'args:any'),
  join: fn(['separator:string'], ([sep, ...lists]) => {
    if (lists.length === 0) throw new FunctionError('at least one list is required');
    const items = (lists as unknown[][]).flat();
    if (items.some((x) => x === null)) throw new FunctionError('a list element is null: join() cannot include null values');
    return items.join(sep as string);
  }, 'lists:list(string)'),
  split: fn(['separator:string', 'str:string'], ([sep, s]) => (s as string).split(sep as string)),
  replace: fn(['str:string', 'substr:string', 'replace:string'], ([s, sub, r]) => {
    const re = /^\/(.*)\/$/s.exec(sub as string);
    if (re) return (s as string).replace(regexOf(re[1]!), jsReplacement(r as string));
    return (s as string).replaceAll(sub as string, r as string);
  }),
  regex_replace: fn(['str:string', 'pattern:string', 'replace:string'], ([s, p, r]) => (s as string).replace(regexOf(p as string), jsReplacement(r as string))),
  trim: fn(['str:string', 'cutset:string'], ([s, c]) => {
    const cut = new Set(Array.from(c as string));
    const chars = Array.from(s as string);
    let a = 0;
    let b = chars.length;
    while (a < b && cut.has(chars[a]!)) a++;
    while (b > a && cut.has(chars[b - 1]!)) b--;
    return chars.slice(a, b).join('');
  }),
  trimprefix: fn(['str:string', 'prefix:string'], ([s, p]) => ((s as string).startsWith(p as string) ? (s as string).slice((p as string).length) : s)),
  trimsuffix: fn(['str:string', 'suffix:string'], ([s, p]) => ((s as string).endsWith(p as string) && (p as string) !== '' ? (s as string).slice(0, -(p as string).length) : s)),
  trimspace: fn(['str:string'], ([s]) => (s as string).trim()),
  chomp: fn(['str:string'], ([s]) => (s as string).replace(/(?:\r\n?|\n)*$/, '')),
  indent: fn(['spaces:number', 'str:string'], ([n, s]) => (s as string).replace(/\n/g, `\n${' '.repeat(Math.max(0, n as number))}`)),
};

