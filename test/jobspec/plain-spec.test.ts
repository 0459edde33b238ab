/**
 * plainlyValid (src/jobspec/plain-spec.ts) may only skip the schema, never change its answer: every spec it
 * passes, the schema and the cross-task rules pass too. Checked over generated specs that mix good fields with
 * the ways each can be wrong (types, names, objects that are not plain, keys zod treats apart, undefined, extra
 * fields, duplicate names, two leaders), and validateAllocSpec's answer is the schema's for every one of them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plainlyValid } from '../../src/jobspec/plain-spec.ts';
import { validateAllocSpec, validateBySchema } from '../../src/jobspec/validate.ts';
import { threeTaskSpec } from '../../bench/lib/three-task-spec.ts';

class Box {
  constructor(readonly v: string) {}
}
const sym = Symbol('s');
const nullProto = (o: Record<string, unknown>) => Object.assign(Object.create(null) as object, o);
const withSymbol = (o: Record<string, unknown>) => ({ ...o, [sym]: 'x' });
const hidden = (o: Record<string, unknown>, key: string, value: unknown) => Object.defineProperty({ ...o }, key, { value, enumerable: false });

/** Mostly `good`, now and then `bad`: so whole specs come out valid often enough to test the quick yes. */
const mostly = <T, U>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<U>) => fc.oneof({ arbitrary: good, weight: 30 }, { arbitrary: bad, weight: 1 });
const goodName = fc.constantFrom('web', 'a', 'db-1', 'x_y', 'ok.name', 'cache', 'init', 'main', 'side', 'log-shipper', 'b2', 'c_3');
const badName = fc.constantFrom('', '../up', 'a/b', '.', '..', ' sp', 'é', 'a'.repeat(300), 'NUL\u0000');
const badValue = fc.constantFrom<unknown>(undefined, null, 1, NaN, true, [], {}, new Box('x'), 'str', Symbol('v'));
const name = mostly(goodName, fc.oneof(badName, badValue));
const record = (value: fc.Arbitrary<unknown>) =>
  mostly(
    fc.dictionary(fc.constantFrom('A', 'B_1', 'PATH_X', 'run_for'), value, { maxKeys: 3 }),
    fc.oneof(
      fc.dictionary(fc.constantFrom('NOMAD_TASK_NAME', '1A', 'a-b', 'constructor', '__proto__', ''), value, { minKeys: 1, maxKeys: 2 }),
      fc.constant(JSON.parse('{"__proto__": "x"}') as unknown),
      fc.constant(nullProto({ A: 'x' })),
      fc.constant(withSymbol({ A: 'x' })),
      fc.constant(hidden({ A: 'x' }, 'H', 1)),
      fc.constant(new Map([['A', 'x']])),
      fc.constant(['x']),
      badValue,
    ),
  );
/** Now and then `a`, else undefined. */
const rarely = <T>(a: fc.Arbitrary<T>) => fc.oneof({ arbitrary: fc.constant(undefined), weight: 8 }, { arbitrary: a, weight: 1 });
const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined, freq: 2 });
/** `o` without its undefined fields (an absent optional field), then `extra` set (undefined included, on purpose). */
const shaped = ({ extra, ...o }: { extra?: [string, unknown] } & Record<string, unknown>) => {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  if (extra) out[extra[0]] = extra[1];
  return out;
};
const str = mostly(fc.constant('v'), badValue);

const task = fc
  .record({
    name,
    driver: mostly(fc.constantFrom('mock', 'raw_exec'), fc.oneof(fc.constant(''), badValue)),
    config: record(mostly(fc.string(), badValue)),
    env: opt(record(str)),
    meta: opt(record(str)),
    leader: opt(mostly(fc.boolean(), badValue)),
    lifecycle: opt(
      mostly(
        fc.record({ hook: mostly(fc.constantFrom('prestart', 'poststart', 'poststop'), fc.oneof(fc.constant('main'), badValue)), sidecar: opt(mostly(fc.boolean(), badValue)) }, { requiredKeys: ['hook'] }),
        fc.oneof(badValue, fc.constant({ sidecar: true })),
      ),
    ),
    killTimeout: opt(mostly(fc.constantFrom(0, -0, 5, 1.5, 30000), fc.oneof(fc.constantFrom(-1, Infinity, NaN), badValue))),
    extra: rarely(fc.constantFrom<[string, unknown]>(['restart', { attempts: 1, interval: 1, delay: 1, mode: 'fail' }], ['user', 'nobody'], ['bogus', 1], ['killSignal', 'SIGTERM'], ['leader', undefined])),
  }, { requiredKeys: ['name', 'driver', 'config'] })
  .map(shaped);

const spec = fc
  .record({
    id: name,
    job: name,
    group: name,
    type: mostly(fc.constantFrom('service', 'batch', 'system', 'sysbatch'), fc.oneof(fc.constant('cron'), badValue)),
    namespace: opt(mostly(fc.constantFrom('default', ''), badValue)),
    meta: opt(record(str)),
    tasks: mostly(fc.array(mostly(task, badValue), { minLength: 1, maxLength: 4 }), fc.oneof(fc.constant([]), badValue)),
    extra: rarely(fc.constantFrom<[string, unknown]>(['restart', { attempts: 1, interval: 1, delay: 1, mode: 'fail' }], ['bogus', 1], ['index', 3], ['namespace', undefined])),
  }, { requiredKeys: ['id', 'job', 'group', 'type', 'tasks'] })
  .map(shaped);

/** The schema's verdict: undefined when it accepts, else its error message. */
function schemaVerdict(value: object): string | undefined {
  try {
    validateBySchema(value);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

describe('plainlyValid', () => {
  it('passes only specs the schema passes, and validateAllocSpec answers as the schema does', () => {
    let quick = 0;
    let refused = 0;
    fc.assert(
      fc.property(spec, (s) => {
        const verdict = schemaVerdict(s);
        if (plainlyValid(s)) {
          quick++;
          expect(verdict).toBeUndefined();
        }
        if (verdict !== undefined) refused++;
        let answer: string | undefined;
        try {
          validateAllocSpec(s);
        } catch (err) {
          answer = (err as Error).message;
        }
        expect(answer).toBe(verdict);
      }),
      { numRuns: 3000, seed: 31 },

    );
    // The generator reaches both sides: specs taken at a glance and specs the schema refuses.
    expect(quick).toBeGreaterThan(50);
    expect(refused).toBeGreaterThan(300);
  });

  it('takes the plain specs of the benches and the tests, with the fields it knows', () => {
    expect(plainlyValid(threeTaskSpec('p3-1'))).toBe(true);
    const full = {
      id: 'a1', job: 'j', group: 'g', type: 'service', namespace: 'default', meta: { owner: 'me' },
      tasks: [{ name: 'web', driver: 'mock', config: { run_for: '1s' }, env: { PORT: '80' }, meta: { k: 'v' }, leader: true, killTimeout: 5000, lifecycle: { hook: 'poststart', sidecar: true } }],
    };
    expect(plainlyValid(full)).toBe(true);
  });

  it('leaves to the schema any field it does not know, anything not plain, and the cross-task rules it sees broken', () => {
    const base = threeTaskSpec('p3-1');
    expect(plainlyValid({ ...base, restart: { attempts: 1, interval: 1, delay: 1, mode: 'fail' } })).toBe(false);
    expect(plainlyValid({ ...base, namespace: undefined })).toBe(false);
    expect(plainlyValid(nullProto({ ...base }))).toBe(false);
    expect(plainlyValid({ ...base, tasks: [{ ...base.tasks[0]!, config: nullProto({}) }] })).toBe(false);
    expect(plainlyValid({ ...base, tasks: [base.tasks[0]!, { ...base.tasks[1]!, name: 'init' }] })).toBe(false);
    expect(plainlyValid({ ...base, tasks: [{ ...base.tasks[0]!, leader: true }, { ...base.tasks[1]!, leader: true }] })).toBe(false);
    expect(plainlyValid({ ...base, tasks: [{ ...base.tasks[0]!, env: { NOMAD_TASK_NAME: 'x' } }] })).toBe(false);
    for (const killTimeout of [-1, NaN, Infinity, '5s']) expect(plainlyValid({ ...base, tasks: [{ ...base.tasks[0]!, killTimeout }] })).toBe(false);
    expect(plainlyValid({ ...base, tasks: [{ ...base.tasks[0]!, config: hidden({}, 'x', 1) }] })).toBe(true);
    expect(plainlyValid({ ...base, tasks: [{ ...base.tasks[0]!, env: hidden({}, 'X', 1) }] })).toBe(false);
  });
});
