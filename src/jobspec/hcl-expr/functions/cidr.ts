/** cidrhost, cidrnetmask, cidrsubnet and cidrsubnets (go-cty-funcs' cidr package), for IPv4 and IPv6. */
import { isIP } from 'node:net';
import { formatNumber } from '../values.ts';
import { fn, FunctionError, type HclFunction } from './types.ts';

interface Prefix {
  v6: boolean;
  bits: number;
  /** The network address. */
  base: bigint;
  length: number;
}

function ipToBig(ip: string, v6: boolean): bigint {
  if (!v6) return ip.split('.').reduce((acc, o) => (acc << 8n) | BigInt(Number(o)), 0n);
  const [head, tail] = ip.includes('::') ? ip.split('::') : [ip, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g || '0', 16)), 0n);
}

function bigToIp(v: bigint, v6: boolean): string {
  if (!v6) return [24n, 16n, 8n, 0n].map((s) => String((v >> s) & 255n)).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => ((v >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
  // The longest run of zero groups (two or more) is written as ::, as Go does.
  let best = [-1, 0];
  for (let i = 0; i < 8; ) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > best[1]! && j - i >= 2) best = [i, j - i];
    i = j;
  }
  if (best[0]! < 0) return groups.join(':');
  return `${groups.slice(0, best[0]).join(':')}::${groups.slice(best[0]! + best[1]!).join(':')}`;
}

function parsePrefix(text: string): Prefix {
  const [ip, len] = text.split('/');
  const kind = isIP(ip ?? '');
  const length = Number(len);
  const bits = kind === 6 ? 128 : 32;
  if (kind === 0 || len === undefined || !/^\d+$/.test(len) || length > bits) throw new FunctionError(`invalid CIDR expression: ${JSON.stringify(text)} is not an address with a prefix length, such as "10.0.0.0/16"`);
  const mask = ((1n << BigInt(bits)) - 1n) ^ ((1n << BigInt(bits - length)) - 1n);
  return { v6: kind === 6, bits, base: ipToBig(ip!, kind === 6) & mask, length };
}

function host(p: Prefix, num: number): string {
  const size = 1n << BigInt(p.bits - p.length);
  const n = BigInt(Math.trunc(num));
  if (n >= size || -n > size) throw new FunctionError(`prefix of ${p.length} bits has no host number ${formatNumber(num)}`);
  return bigToIp(p.base + (n < 0 ? size + n : n), p.v6);
}

function subnet(p: Prefix, newbits: number, netnum: number): string {
  const length = p.length + newbits;
  if (newbits < 0 || length > p.bits) throw new FunctionError(`insufficient address space to extend prefix of ${p.length} by ${formatNumber(newbits)}`);
  if (BigInt(Math.trunc(netnum)) >= 1n << BigInt(newbits) || netnum < 0) throw new FunctionError(`prefix extension of ${formatNumber(newbits)} does not accommodate a subnet numbered ${formatNumber(netnum)}`);
  return `${bigToIp(p.base | (BigInt(Math.trunc(netnum)) << BigInt(p.bits - length)), p.v6)}/${length}`;
}

export const CIDR_FUNCTIONS: Record<string, HclFunction> = {
  cidrhost: fn(['prefix:string', 'hostnum:number'], ([pfx, n]) => host(parsePrefix(pfx as string), n as number)),
  cidrnetmask: fn(['prefix:string'], ([pfx]) => {
    const p = parsePrefix(pfx as string);
    if (p.v6) throw new FunctionError('IPv6 addresses cannot have a netmask');
    return bigToIp(((1n << 32n) - 1n) ^ ((1n << BigInt(32 - p.length)) - 1n), false);
  }),
  cidrsubnet: fn(['prefix:string', 'newbits:number', 'netnum:number'], ([pfx, b, n]) => subnet(parsePrefix(pfx as string), b as number, n as number)),
  cidrsubnets: fn(['prefix:string'], ([pfx, ...bits]) => {
    const p = parsePrefix(pfx as string);
    let next = p.base;
    return (bits as number[]).map((b) => {
      const length = p.length + b;
      if (b < 1 || length > p.bits) throw new FunctionError(`would extend prefix to ${formatNumber(length)} bits, which is too long for an ${p.v6 ? 'IPv6' : 'IPv4'} address`);
      const step = 1n << BigInt(p.bits - length);
      next = ((next + step - 1n) / step) * step;
      if (next >= p.base + (1n << BigInt(p.bits - p.length))) throw new FunctionError(`not enough remaining address space for a subnet with a prefix of ${length} bits`);
      const out = `${bigToIp(next, p.v6)}/${length}`;
      next += step;
      return out;
    });
  }, 'newbits:number'),
};
