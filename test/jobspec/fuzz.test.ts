/**
 * Fuzz: hundreds of seeded, deterministic mutations of the example job files in HCL, JSON and YAML
 * (characters deleted, duplicated, swapped or inserted, braces dropped, lines lost, values given the wrong
 * type, nesting bombs, alias bombs, heredocs, bad env keys, empty and truncated files). Every one must
 * either load into specs that validate, or fail with a SpecError whose every problem names the file and a
 * line:column: never another error type (a crash), never a parse over 5 s (a hang), never a stack trace.
 */
import { mulberry32 } from '../../machines/restart-tracker.ts';
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { SpecError, parseJobText, validateAllocSpec, type JobFileFormat } from '../../src/jobspec/index.ts';
import { stopHclWorker, warmHclWorker } from '../../src/jobspec/hcl-parser.ts';

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
const KEYS = ['count', 'driver', 'kill_timeout', 'restart', 'lifecycle', 'hook', 'task', 'group', 'job', 'type', 'leader', 'logs', 'max_files', 'env', 'meta', 'network', 'bogus',
  'NOMAD_TASK_NAME', 'NOMAD_META_x', 'A-B', '9LIVES'];
/** Text that nests deeply in one syntax or another, `n` times. */
const BOMBS: ((n: number) => string)[] = [
  (n) => '- '.repeat(n), (n) => '['.repeat(n), (n) => '{'.repeat(n), (n) => '{"a": '.repeat(n), (n) => '{a: '.repeat(n), (n) => '('.repeat(n),
  (n) => '"${'.repeat(n), (n) => Array.from({ length: n }, (_, i) => ' '.repeat(i) + 'k:').join('\n'),
];

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
  (t, r) => { const i = at(t, r); return t.slice(0, i) + pick(BOMBS, r)(50 + Math.floor(r() * 3000)) + t.slice(i); }, // a nesting bomb
  (t, r) => { const i = at(t, r); const body = Array.from({ length: 1 + Math.floor(r() * 2000) }, (_, k) => `line ${k} {[("`).join('\n'); return `${t.slice(0, i)}<<EOT\n${body}\nEOT\n${t.slice(i)}`; }, // a heredoc
  (t) => `a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n${t}`, // an alias bomb
  (t, r) => pick(['', ' ', '\n', '\ufeff', '#', '{', '---', 'job', '[]', 'null'], r) + (r() < 0.5 ? '' : t.slice(0, 3)), // (nearly) empty
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

const CASES = 600;
/** A parse that has not settled in this long is a hang (the HCL parser's own timeout is 10 s). */
const HANG_MS = 5_000;

/** Settles with the parse's outcome, or 'hang' when it takes longer than HANG_MS. */
async function outcome(p: Promise<unknown>): Promise<{ value?: unknown; error?: unknown; hang?: true }> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<{ hang: true }>((resolve) => (timer = setTimeout(() => resolve({ hang: true }), HANG_MS)));
  try {
    return await Promise.race([p.then((value) => ({ value }), (error: unknown) => ({ error })), hang]);
  } finally {
    clearTimeout(timer);
  }
}

afterAll(() => stopHclWorker());

describe('fuzzed job files', () => {
  it(`loads or rejects with a located SpecError every one of ${CASES} generated HCL, JSON and YAML files`, async () => {
    // FUZZ_SEED explores other cases locally; the default keeps CI deterministic.
    const r = rng(Number(process.env['FUZZ_SEED'] ?? 0xa110c));
    const counts = { loaded: 0, rejected: 0, hcl: 0, json: 0, yaml: 0 };
    const crashes: string[] = [];
    const hangs: string[] = [];
    const unlocated: string[] = [];
    for (let i = 0; i < CASES; i++) {
      const seed = seeds[i % seeds.length]!;
      const text = mutate(seed, r);
      const name = `case ${i} (${seed.name})`;
      counts[seed.format]++;
      // A worker (re)start is not the parse's time: a hang is a parse that runs over HANG_MS.
      if (seed.format === 'hcl') await warmHclWorker();
      const result = await outcome(
        parseJobText(text, { format: seed.format, file: seed.name }).then((allocs) => allocs.forEach((a) => validateAllocSpec(a))),
      );
      if (result.hang) {
        hangs.push(name);
        continue;
      }
      if (!('error' in result)) {
        counts.loaded++;
        continue;
      }
      const err = result.error;
      if (!(err instanceof SpecError)) {
        crashes.push(`${name}: ${String(err)}\n${(err as Error).stack ?? ''}\n${text.slice(0, 2000)}`);
        continue;
      }
      counts.rejected++;
      const lineCount = text.split('\n').length;
      for (const p of err.problems) {
        const located = p.file === seed.name && Number.isInteger(p.line) && Number.isInteger(p.column) && p.line! >= 1 && p.line! <= lineCount && p.column! >= 1;
        if (!located || !p.message || typeof p.path !== 'string') unlocated.push(`${name}: ${JSON.stringify(p)}`);
      }
      if (/\n\s+at .+:\d+:\d+|undefined|\[object Object\]/.test(err.message)) crashes.push(`${name}: a message leaks internals:\n${err.message}`);
      if (process.env['FUZZ_SHOW']) console.log(`--- ${name}\n${err.message}`);
    }
    if (process.env['FUZZ_SHOW']) console.log(counts);
    expect(crashes).toEqual([]);
    expect(hangs).toEqual([]);
    expect(unlocated).toEqual([]);
    // The cases must cover the three syntaxes and exercise both outcomes, or the test proves little.
    expect(Math.min(counts.hcl, counts.json, counts.yaml)).toBeGreaterThanOrEqual(100);
    expect(counts.loaded).toBeGreaterThan(CASES / 20);
    expect(counts.rejected).toBeGreaterThan(CASES / 3);
  }, 300_000);
});
