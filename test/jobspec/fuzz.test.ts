/**
 * Fuzz: hundreds of seeded, deterministic mutations of the example job files (characters deleted,
 * duplicated, swapped or inserted, braces dropped, lines lost, values given the wrong type). Every one
 * must either load into specs that validate, or fail with a SpecError whose problems are well formed:
 * never another error type, never a hang, never a stack trace in the message.
 */
import { mulberry32 } from '../../machines/restart-tracker.ts';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { SpecError, parseJobText, validateAllocSpec, type JobFileFormat } from '../../src/jobspec/index.ts';

const read = (url: string) => readFileSync(new URL(url, import.meta.url), 'utf8');
const seeds: { name: string; format: JobFileFormat; text: string }[] = [
  { name: 'batch.nomad', format: 'hcl', text: read('../../examples/batch.nomad') },
  { name: 'bad-schema.nomad', format: 'hcl', text: read('../../examples/bad-schema.nomad') },
  { name: 'broken.nomad', format: 'hcl', text: read('../../examples/broken.nomad') },
  { name: 'batch.yaml', format: 'yaml', text: read('./fixtures/batch.yaml') },
  { name: 'batch.json', format: 'json', text: read('./fixtures/batch.json') },
  { name: 'batch.api.json', format: 'json', text: read('./fixtures/batch.api.json') },
];

/** The restart tracker's seeded PRNG, so every failure can be replayed from its seed. */
function rng(seed: number): () => number {
  const r = mulberry32(seed);
  return () => r.next();
}

const NOISE = ['{', '}', '[', ']', '"', '=', ':', ',', '\n', '#', '$', '${', '%{', '<<EOT\n', '-', ' ', '\t', '\\', '&a ', '*a', '\u00e9', '\u{1F600}', '\u0000', 'null', '0'];
const WRONG = ['true', '-1', '1.5', '"x"', '""', '[1, 2]', '{}', 'null', '"1h"', '99999999', '"${var.x}"', '"SIGKILL"', '"prestart"'];
const KEYS = ['count', 'driver', 'kill_timeout', 'restart', 'lifecycle', 'hook', 'task', 'group', 'job', 'type', 'leader', 'logs', 'max_files', 'env', 'meta', 'network', 'bogus'];

type Mutation = (text: string, r: () => number) => string;
const pick = <T,>(xs: readonly T[], r: () => number): T => xs[Math.floor(r() * xs.length)]!;
const at = (text: string, r: () => number) => Math.floor(r() * (text.length + 1));

const mutations: Mutation[] = [
  (t, r) => { const i = at(t, r); return t.slice(0, i) + t.slice(i + 1); }, // delete a char
  (t, r) => { const i = at(t, r); return t.slice(0, i) + t.slice(i, i + 1) + t.slice(i); }, // duplicate a char
  (t, r) => { const i = at(t, r); return t.slice(0, i) + t.slice(i + 1, i + 2) + t.slice(i, i + 1) + t.slice(i + 2); }, // swap two
  (t, r) => { const i = at(t, r); return t.slice(0, i) + pick(NOISE, r) + t.slice(i); }, // insert noise
  (t, r) => { const braces = [...t.matchAll(/[{}[\]]/g)]; if (!braces.length) return t; const m = pick(braces, r); return t.slice(0, m.index) + t.slice(m.index + 1); }, // drop a brace
  (t, r) => { const lines = t.split('\n'); lines.splice(Math.floor(r() * lines.length), 1); return lines.join('\n'); }, // lose a line
  (t, r) => { const lines = t.split('\n'); const i = Math.floor(r() * lines.length); lines.splice(i, 0, lines[i]!); return lines.join('\n'); }, // repeat a line
  (t, r) => t.slice(0, at(t, r)), // truncate
  (t, r) => { // give a value the wrong type
    const values = [...t.matchAll(/(=|:)\s*("[^"\n]*"|-?\d+(?:\.\d+)?|true|false|\[[^\]\n]*\])/g)];
    if (!values.length) return t;
    const m = pick(values, r);
    const start = m.index + m[0].length - m[2]!.length;
    return t.slice(0, start) + pick(WRONG, r) + t.slice(start + m[2]!.length);
  },
  (t, r) => { // rename a key to another known (or unknown) key
    const keys = [...t.matchAll(/^(\s*"?)([a-z_A-Z]+)/gm)];
    if (!keys.length) return t;
    const m = pick(keys, r);
    const start = m.index + m[1]!.length;
    return t.slice(0, start) + pick(KEYS, r) + t.slice(start + m[2]!.length);
  },
];

/** A structural mutation for JSON and YAML: one node anywhere replaced by a value of another type. */
function mutateValue(value: unknown, r: () => number): unknown {
  const replacements: unknown[] = [null, 0, -3, 'x', true, [], {}, [{}], [{ a: 1 }, { b: 2 }], '${x}', { driver: 'mock' }];
  const nodes: { parent: Record<string, unknown> | unknown[]; key: string | number }[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach((x, i) => { nodes.push({ parent: v, key: i }); walk(x); });
    else if (typeof v === 'object' && v !== null) for (const [k, x] of Object.entries(v)) { nodes.push({ parent: v as Record<string, unknown>, key: k }); walk(x); }
  };
  const copy = structuredClone(value);
  walk(copy);
  if (nodes.length === 0) return copy;
  const { parent, key } = pick(nodes, r);
  (parent as Record<string | number, unknown>)[key] = structuredClone(pick(replacements, r));
  return copy;
}

function mutate(seed: (typeof seeds)[number], r: () => number): string {
  if (seed.format !== 'hcl' && r() < 0.3) {
    const value = mutateValue(seed.format === 'json' ? JSON.parse(seed.text) : parseYaml(seed.text), r);
    return seed.format === 'json' ? JSON.stringify(value, null, 2) : toYaml(value);
  }
  let text = seed.text;
  const n = 1 + Math.floor(r() * 3);
  for (let i = 0; i < n; i++) text = pick(mutations, r)(text, r);
  return text;
}

const CASES = 720;

describe('fuzzed job files', () => {
  it(`loads or rejects with a SpecError every one of ${CASES} mutated files`, async () => {
    // FUZZ_SEED explores other mutations locally; the default keeps CI deterministic.
    const r = rng(Number(process.env['FUZZ_SEED'] ?? 0xa110c));
    const outcomes = { loaded: 0, rejected: 0 };
    for (let i = 0; i < CASES; i++) {
      const seed = seeds[i % seeds.length]!;
      const text = mutate(seed, r);
      const context = `case ${i} (${seed.name}):\n${text}`;
      try {
        const allocs = await parseJobText(text, { format: seed.format, file: seed.name });
        for (const alloc of allocs) validateAllocSpec(alloc);
        outcomes.loaded++;
      } catch (err) {
        if (!(err instanceof SpecError)) throw new Error(`${context}\n\nthrew ${String(err)}\n${(err as Error).stack ?? ''}`);
        expect(err.problems.length, context).toBeGreaterThan(0);
        const lineCount = text.split('\n').length;
        for (const p of err.problems) {
          expect(typeof p.message === 'string' && p.message.length > 0, context).toBe(true);
          expect(typeof p.path, context).toBe('string');
          if (p.line !== undefined) expect(p.line >= 1 && p.line <= lineCount + 1, `${context}\n${JSON.stringify(p)}`).toBe(true);
          if (p.column !== undefined) expect(p.column, context).toBeGreaterThanOrEqual(1);
        }
        expect(err.message, context).not.toMatch(/\n\s+at .+:\d+:\d+/);
        expect(err.message, context).not.toMatch(/undefined|\[object Object\]/);
        outcomes.rejected++;
        if (process.env['FUZZ_SHOW']) console.log(`--- ${context.split('\n')[0]}\n${err.message}`);
      }
    }
    if (process.env['FUZZ_SHOW']) console.log(outcomes);
    // The mutations must exercise both outcomes, or the test proves little.
    expect(outcomes.loaded).toBeGreaterThan(CASES / 20);
    expect(outcomes.rejected).toBeGreaterThan(CASES / 3);
  }, 20_000);
});
