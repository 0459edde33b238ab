/** formatdate() and timeadd(): RFC 3339 timestamps, keeping the timestamp's own UTC offset, as go-cty does. */
import { fn, FunctionError, type HclFunction } from './types.ts';

interface Stamp {
  /** Wall-clock fields in the timestamp's own offset. */
  date: Date;
  offsetMinutes: number;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function parseStamp(s: string): Stamp {
  const m = RFC3339.exec(s);
  if (!m) throw new FunctionError(`not a valid RFC 3339 timestamp: ${JSON.stringify(s)} (for example "2017-11-22T00:00:00Z")`);
  const offsetMinutes = /^[Zz]$/.test(m[8]!) ? 0 : (m[8]![0] === '-' ? -1 : 1) * (Number(m[8]!.slice(1, 3)) * 60 + Number(m[8]!.slice(4)));
  const ms = m[7] ? Number(m[7].slice(0, 4).padEnd(4, '0').slice(1)) : 0;
  const date = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!, ms));
  return { date, offsetMinutes };
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const p2 = (n: number): string => String(n).padStart(2, '0');

function offsetText(mins: number, colon: boolean): string {
  const sign = mins < 0 ? '-' : '+';
  const a = Math.abs(mins);
  return `${sign}${p2(Math.floor(a / 60))}${colon ? ':' : ''}${p2(a % 60)}`;
}

function formatDate(spec: string, stamp: Stamp): string {
  const d = stamp.date;
  const h = d.getUTCHours();
  const tokens: Record<string, () => string> = {
    YYYY: () => String(d.getUTCFullYear()).padStart(4, '0'),
    YY: () => p2(d.getUTCFullYear() % 100),
    MMMM: () => MONTHS[d.getUTCMonth()]!,
    MMM: () => MONTHS[d.getUTCMonth()]!.slice(0, 3),
    MM: () => p2(d.getUTCMonth() + 1),
    M: () => String(d.getUTCMonth() + 1),
    DD: () => p2(d.getUTCDate()),
    D: () => String(d.getUTCDate()),
    EEEE: () => DAYS[d.getUTCDay()]!,
    EEE: () => DAYS[d.getUTCDay()]!.slice(0, 3),
    hh: () => p2(h),
    h: () => String(h),
    HH: () => p2(h % 12 === 0 ? 12 : h % 12),
    H: () => String(h % 12 === 0 ? 12 : h % 12),
    AA: () => (h < 12 ? 'AM' : 'PM'),
    aa: () => (h < 12 ? 'am' : 'pm'),
    mm: () => p2(d.getUTCMinutes()),
    m: () => String(d.getUTCMinutes()),
    ss: () => p2(d.getUTCSeconds()),
    s: () => String(d.getUTCSeconds()),
    ZZZZZ: () => offsetText(stamp.offsetMinutes, true),
    ZZZZ: () => offsetText(stamp.offsetMinutes, false),
    ZZZ: () => (stamp.offsetMinutes === 0 ? 'UTC' : offsetText(stamp.offsetMinutes, false)),
    Z: () => (stamp.offsetMinutes === 0 ? 'Z' : offsetText(stamp.offsetMinutes, true)),
  };
  let out = '';
  let i = 0;
  while (i < spec.length) {
    const c = spec[i]!;
    if (c === "'") {
      const end = spec.indexOf("'", i + 1);
      if (end < 0) throw new FunctionError(`unterminated literal ' in the format ${JSON.stringify(spec)}`);
      out += end === i + 1 ? "'" : spec.slice(i + 1, end);
      i = end + 1;
    } else if (/[A-Za-z]/.test(c)) {
      let j = i;
      while (spec[j] === c) j++;
      const run = spec.slice(i, j);
      const f = tokens[run];
      if (!f) throw new FunctionError(`invalid date format verb ${JSON.stringify(run)}: this mnemonic is not supported`);
      out += f();
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.ParseDuration, in milliseconds. */
function parseDuration(s: string): number {
  const m = /^([+-]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+$/.exec(s);
  if (!m && s !== '0') throw new FunctionError(`invalid duration ${JSON.stringify(s)}: use a number and a unit (ns, us, ms, s, m, h), such as "1h30m"`);
  let total = 0;
  for (const part of s.matchAll(/((?:\d+(?:\.\d*)?|\.\d+))(ns|us|µs|ms|s|m|h)/g)) total += Number(part[1]) * UNITS[part[2]!]!;
  return m?.[1] === '-' ? -total : total;
}

function stampText(stamp: Stamp): string {
  const d = stamp.date;
  const frac = d.getUTCMilliseconds() ? `.${String(d.getUTCMilliseconds()).padStart(3, '0').replace(/0+$/, '')}` : '';
  return `${d.getUTCFullYear()}-${p2(d.getUTCMonth() + 1)}-${p2(d.getUTCDate())}T${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}${frac}${stamp.offsetMinutes === 0 ? 'Z' : offsetText(stamp.offsetMinutes, true)}`;
}

export const DATE_FUNCTIONS: Record<string, HclFunction> = {
  formatdate: fn(['format:string', 'time:string'], ([f, t]) => formatDate(f as string, parseStamp(t as string))),
  timeadd: fn(['timestamp:string', 'duration:string'], ([t, d]) => {
    const stamp = parseStamp(t as string);
    return stampText({ date: new Date(stamp.date.getTime() + parseDuration(d as string)), offsetMinutes: stamp.offsetMinutes });
  }),
};
