// machines/record-copy.ts: the copies the machines make of their small records instead of spreads that add keys.
// They must mean what the spreads meant: a new object, the source untouched, keys in the spread's order.
import { describe, expect, it } from 'vitest';
import { merged, withEntry } from '../../machines/record-copy.ts';

describe('withEntry', () => {
  it('adds a key to a copy, after the existing ones, and leaves the record as it was', () => {
    const record: Record<string, number> = { a: 1, b: 2 };
    const copy = withEntry(record, 'c', 3);
    expect(copy).toEqual({ a: 1, b: 2, c: 3 });
    expect(Object.keys(copy)).toEqual(['a', 'b', 'c']);
    expect(copy).not.toBe(record);
    expect(record).toEqual({ a: 1, b: 2 });
  });

  it('replaces a key in place, as { ...record, [key]: value } does', () => {
    const record = { a: 1, b: 2 };
    const copy = withEntry(record, 'a', 5);
    expect(Object.keys(copy)).toEqual(Object.keys({ ...record, a: 5 }));
    expect(copy).toEqual({ a: 5, b: 2 });
    expect(record.a).toBe(1);
  });
});

describe('merged', () => {
  it('is { ...a, ...b }: the later wins, keys in the same order, undefined values kept, neither source changed', () => {
    const a = { x: 1, y: 2 } as Record<string, unknown>;
    const b = { y: undefined, z: 3 };
    const copy = merged(a, b);
    expect(copy).toStrictEqual({ ...a, ...b });
    expect(Object.keys(copy)).toEqual(Object.keys({ ...a, ...b }));
    expect('y' in copy && copy['y'] === undefined).toBe(true);
    expect(a).toEqual({ x: 1, y: 2 });
    expect(copy).not.toBe(a);
  });
});
