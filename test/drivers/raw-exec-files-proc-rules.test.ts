/**
 * The /proc readers' pure rules (proc-stat.ts): which /proc entry names are pids (all digits, nothing else),
 * and the memory figures of a status text (VmRSS, VmSize, VmSwap, kB to bytes, each field only at the start
 * of its own line, whatever the spacing; a field the text lacks is 0). Milliseconds: tables over strings.
 */
import { describe, expect, it } from 'vitest';
import { isPidName, parseProcMemory } from '../../src/drivers/raw-exec/proc-stat.ts';

describe('a /proc entry is a pid when its name is all digits', () => {
  it.each([
    ['1', true],
    ['4194304', true],
    ['0', true],
    ['', false],
    ['self', false],
    ['12a', false],
    ['a12', false],
    ['1 2', false],
    ['/', false], // the character before '0'
    [':', false], // the character after '9'
    ['-1', false],
  ])('%j: %s', (name, pid) => {
    expect(isPidName(name)).toBe(pid);
  });
});

describe("a status text's memory figures", () => {
  const status = (fields: string) => `Name:\tsleep\nUmask:\t0022\nState:\tS (sleeping)\n${fields}Threads:\t1\n`;

  it('are VmRSS, VmSize and VmSwap, from kB to bytes', () => {
    expect(parseProcMemory(status('VmSize:\t    8192 kB\nVmRSS:\t    1024 kB\nVmSwap:\t     512 kB\n'))).toEqual({
      rss: 1024 * 1024,
      vms: 8192 * 1024,
      swap: 512 * 1024,
    });
  });

  it('are read whatever the spacing between name, value and unit', () => {
    expect(parseProcMemory(status('VmSize: 7 kB\nVmRSS:\t\t 30   kB\nVmSwap:  42\tkB\n'))).toEqual({ rss: 30 * 1024, vms: 7 * 1024, swap: 42 * 1024 });
  });

  it('take each field only at the start of its own line', () => {
    const text = status('XVmRSS:\t99 kB\nNoVmSize:\t99 kB\nNoVmSwap:\t99 kB\nVmSize:\t8 kB\nVmRSS:\t4 kB\nVmSwap:\t2 kB\n');
    expect(parseProcMemory(text)).toEqual({ rss: 4 * 1024, vms: 8 * 1024, swap: 2 * 1024 });
  });

  it('are 0 for a field the text lacks (a kernel thread has no VmRSS; no swap, no VmSwap)', () => {
    expect(parseProcMemory(status(''))).toEqual({ rss: 0, vms: 0, swap: 0 });
  });
});
