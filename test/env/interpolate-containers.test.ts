/**
 * interpolateValue's rule for what it walks: strings inside arrays and plain objects (including objects
 * without a prototype, as JSON parsers may build) are interpolated in fresh containers; every other value,
 * null and class instances included, is returned as it is.
 */
import { describe, expect, it } from 'vitest';
import { interpolateValue } from '../../src/env/interpolate.ts';

const lookup = (k: string) => (k === 'x' ? 'X' : undefined);

describe('interpolateValue', () => {
  it.each([
    ['null', null],
    ['undefined', undefined],
    ['a number', 5],
    ['a boolean', true],
  ])('returns %s as it is, alone or inside a container', (_what, value) => {
    expect(interpolateValue(value, lookup)).toBe(value);
    expect(interpolateValue({ k: value, s: '${x}' }, lookup)).toStrictEqual({ k: value, s: 'X' });
    expect(interpolateValue([value, '${x}'], lookup)).toStrictEqual([value, 'X']);
  });

  it('interpolates an object without a prototype as a plain object', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { s: '${x}' });
    expect(interpolateValue(bare, lookup)).toEqual({ s: 'X' });
  });

  it.each([
    ['a Date', () => new Date(0)],
    ['a Map', () => new Map([['s', '${x}']])],
    ['a class instance', () => new (class Box { s = '${x}'; })()],
  ])('returns %s untouched, the same instance', (_what, make) => {
    const value = make();
    expect(interpolateValue(value, lookup)).toBe(value);
    expect(interpolateValue({ v: value }, lookup).v).toBe(value);
  });
});
