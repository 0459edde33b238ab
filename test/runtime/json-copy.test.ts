/**
 * jsonCopy (src/runtime/json-copy.ts) gives what `JSON.parse(JSON.stringify(value))` gives, or throws what it
 * throws, for any value: plain data copied by hand, anything else through the round trip.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonCopy } from '../../src/runtime/json-copy.ts';

const roundTrip = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

/** The round trip's answer or its error's kind and message. */
function outcome(f: () => unknown): { value?: unknown; error?: string } {
  try {
    return { value: f() };
  } catch (err) {
    return { error: `${(err as Error).name}: ${(err as Error).message}` };
  }
}

class Point {
  constructor(readonly x: number) {}
}
const odd = fc.constantFrom<unknown>(undefined, NaN, Infinity, -0, () => 1, Symbol('s'), new Date(0), new Point(1), { toJSON: () => 'j' }, Object.create(null), new Map([[1, 2]]), 'é\ud800', '', [, 1]);

describe('jsonCopy', () => {
  it('answers as the JSON round trip over JSON values and the odd values JSON changes or drops', () => {
    const value = fc.letrec((tie) => ({
      v: fc.oneof({ depthSize: 'small' }, fc.jsonValue({ maxDepth: 2 }), odd, fc.array(tie('v'), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 3 }), tie('v'), { maxKeys: 3 })),
    })).v;
    fc.assert(
      fc.property(value, (v) => {
        const mine = outcome(() => jsonCopy(v));
        expect(mine).toStrictEqual(outcome(() => roundTrip(v)));
        if (typeof v === 'object' && v !== null) expect(mine.value).not.toBe(v);
      }),
      { numRuns: 600, seed: 31 },
    );
  });

  it('copies a driver handle deep, and gives the round trip\'s answer for -0, a __proto__ key, a cycle and a bigint', () => {
    const handle = { driver: 'mock', taskName: 'main', pid: 12, state: { startedAt: 5, argv: ['a', 'b'], nested: { ok: true, none: null } } };
    const copy = jsonCopy(handle);
    expect(copy).toStrictEqual(handle);
    expect(copy.state).not.toBe(handle.state);
    expect(copy.state.argv).not.toBe(handle.state.argv);
    expect(Object.is(jsonCopy({ a: -0 }).a, 0)).toBe(true);
    const proto = JSON.parse('{"__proto__": {"x": 1}}') as object;
    expect(Object.keys(jsonCopy(proto))).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(jsonCopy(proto))).toBe(Object.prototype);
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(() => jsonCopy(cyclic)).toThrow(TypeError);
    expect(() => jsonCopy({ n: 1n })).toThrow(TypeError);
    expect(jsonCopy({ when: new Date(0), u: undefined, f: () => 1 })).toStrictEqual({ when: '1970-01-01T00:00:00.000Z' });
  });
});
