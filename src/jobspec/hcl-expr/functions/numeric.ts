/** go-cty's number functions, as Nomad's jobspec2 registers them. */
import { formatNumber, type Value } from '../values.ts';
import { fn, FunctionError, type HclFunction } from './types.ts';

const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

export const NUMERIC_FUNCTIONS: Record<string, HclFunction> = {
  abs: fn(['num:number'], ([n]) => Math.abs(n as number)),
  ceil: fn(['num:number'], ([n]) => Math.ceil(n as number)),
  floor: fn(['num:number'], ([n]) => Math.floor(n as number)),
  log: fn(['num:number', 'base:number'], ([n, b]) => Math.log(n as number) / Math.log(b as number)),
  pow: fn(['num:number', 'power:number'], ([n, p]) => (n as number) ** (p as number)),
  signum: fn(['num:number'], ([n]) => Math.sign(n as number)),
  max: fn([], (nums) => {
    if (nums.length === 0) throw new FunctionError('must pass at least one number');
    return Math.max(...(nums as number[]));
  }, 'numbers:number'),
  min: fn([], (nums) => {
    if (nums.length === 0) throw new FunctionError('must pass at least one number');
    return Math.min(...(nums as number[]));
  }, 'numbers:number'),
  parseint: fn(['number:string', 'base:number'], ([s, b]) => {
    const base = b as number;
    if (!Number.isInteger(base) || base < 2 || base > 62) throw new FunctionError(`base must be a whole number between 2 and 62 inclusive, got ${formatNumber(base)}`);
    const m = /^([+-]?)(.+)$/.exec(s as string);
    const digits = m?.[2] ?? '';
    let v = 0n;
    for (const c of digits) {
      const d = DIGITS.indexOf(base <= 36 ? c.toLowerCase() : c);
      if (d < 0 || d >= base) throw new FunctionError(`cannot parse ${JSON.stringify(s)} as a base ${base} integer`);
      v = v * BigInt(base) + BigInt(d);
    }
    if (digits === '') throw new FunctionError(`cannot parse ${JSON.stringify(s)} as a base ${base} integer`);
    return Number(m![1] === '-' ? -v : v) as Value;
  }),
};
