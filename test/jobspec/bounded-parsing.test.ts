/**
 * Job files are parsed within bounds: nesting, size and (for the WASM HCL parser) time. A file past a
 * bound is a SpecError at a line:column of the file, never an abort, a stack trace or a hang.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { transform } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { specError } from './spec-error-of.ts';
import { loadJobFile, parseJobText, type JobFileFormat, type ParseJobOptions } from '../../src/jobspec/index.ts';
import { hclWorkerUrl, stopHclWorker } from '../../src/jobspec/hcl-parser.ts';

const root = new URL('../../', import.meta.url);

const parse = (text: string, format: JobFileFormat, extra: Partial<ParseJobOptions> = {}) =>
  parseJobText(text, { format, file: `job.${format}`, ...extra });

const job = (task = 'driver = "mock"') => `job "j" {\n  group "g" {\n    task "t" {\n      ${task}\n    }\n  }\n}\n`;

afterAll(() => stopHclWorker());

describe('nesting', () => {
  it('survives the 6 KB YAML of "- " x 3000 parsed twice in one process (it used to abort Node)', () => {
    // In a child process: the failure this guards against is a fatal V8 error no test could catch.
    const script = `
      const { parseJobText } = await import(${JSON.stringify(new URL('src/jobspec/index.ts', root).href)});
      const text = '- '.repeat(3000) + 'x\\n';
      for (let i = 0; i < 2; i++) {
        try { await parseJobText(text, { format: 'yaml', file: 'deep.yaml' }); console.log('loaded'); }
        catch (err) { console.log(err.name + ': ' + err.message); }
      }`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: new URL('.', root), encoding: 'utf8', timeout: 60_000 });
    expect(child.stderr).toBe('');
    expect(child.signal).toBeNull();
    expect(child.status).toBe(0);
    expect(child.stdout.trim().split('\n')).toEqual([
      'SpecError: deep.yaml:1:201: nested more than 100 levels deep',
      'SpecError: deep.yaml:1:201: nested more than 100 levels deep',
    ]);
  });

  it.each([
    ['block sequences', '- '.repeat(5000) + 'x\n', '1:201'],
    ['flow sequences', '['.repeat(5000) + ']'.repeat(5000) + '\n', '1:101'],
    ['flow maps', '{a: '.repeat(5000) + '1' + '}'.repeat(5000) + '\n', '1:401'],
    ['indented maps', Array.from({ length: 300 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n') + ' 1\n', '101:101'],
    ['maps in sequences', Array.from({ length: 300 }, (_, i) => `${'  '.repeat(i)}- k:`).join('\n') + ' 1\n', '51:101'],
  ])('refuses YAML %s nested deeper than the limit, where it gets too deep', async (_, text, where) => {
    const err = await specError(parse(text, 'yaml'));
    expect(err.problems.map((p) => `${p.line}:${p.column}: ${p.message}`)).toEqual([`${where}: nested more than 100 levels deep`]);
  });

  it('refuses JSON nested deeper than the limit and reads JSON exactly at it', async () => {
    const deep = (n: number) => `{"job": {"j": {"meta": {"x": ${'['.repeat(n - 4)}1${']'.repeat(n - 4)}}}}}`;
    const err = await specError(parse(deep(101), 'json'));
    expect(err.problems.map((p) => `${p.line}:${p.column}: ${p.message}`)).toEqual(['1:126: JSON syntax error: nested more than 100 levels deep']);
    // 100 levels parse; the schema (meta wants strings) is what refuses it.
    expect((await specError(parse(deep(100), 'json'))).message).not.toMatch(/nested/);
  });

  it('takes a lower nesting limit from the options', async () => {
    const text = 'job:\n  j:\n    group:\n      g:\n        task:\n          t:\n            driver: mock\n';
    await expect(parse(text, 'yaml')).resolves.toHaveLength(1);
    const err = await specError(parse(text, 'yaml', { maxDepth: 4 }));
    expect(err.problems[0]).toMatchObject({ file: 'job.yaml', line: 5, column: 9, message: 'nested more than 4 levels deep' });
    expect((await specError(parse(job(), 'hcl', { maxDepth: 2 }))).problems[0]).toMatchObject({ line: 3, message: 'nested more than 2 levels deep' });
  });

  it('reads real YAML with anchors, block scalars, flow maps and comments', async () => {
    const text = [
      'job:  # one job',
      '  j:',
      '    meta: &m {a: "[", b: "{"}',
      '    group:',
      '      g:',
      '        task:',
      '          t:',
      '            driver: mock',
      '            meta: *m',
      '            config:',
      '              script: |',
      '                - - - - [ [ {',
      '              args:',
      '              - - x',
      '                - y',
      '',
    ].join('\n');
    const [alloc] = await parse(text, 'yaml');
    expect(alloc!.tasks[0]!.config).toEqual({ script: '- - - - [ [ {\n', args: [['x', 'y']] });
  });
});

describe('size', () => {
  it('refuses job text over the size limit at the top of the file', async () => {
    const text = job() + `# ${'é'.repeat(1000)}\n`; // 2 bytes each in UTF-8: the limit counts bytes
    const err = await specError(parse(text, 'hcl', { maxBytes: 1024 }));
    expect(err.problems).toEqual([
      { path: '', file: 'job.hcl', line: 1, column: 1, message: `the job file has ${text.length + 1000} bytes, more than the limit of 1024 (1 KiB)` },
    ]);
  });

  it('refuses a job file over 4 MiB by default, before parsing it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'allocrun-size-'));
    try {
      const file = join(dir, 'big.yaml');
      await writeFile(file, `# ${'x'.repeat(4 * 1024 * 1024)}\n`);
      const err = await specError(loadJobFile(file));
      expect(err.problems).toEqual([{ path: '', file, line: 1, column: 1, message: 'the job file has 4194307 bytes, more than the limit of 4194304 (4 MiB)' }]);
      // Under a higher limit the same file is read, and found to hold no job.
      await expect(loadJobFile(file, { maxBytes: 5 * 1024 * 1024 })).rejects.toThrow(/holds one job block/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the HCL parser worker', () => {
  it('stops a big heredoc at the parse timeout, and parses the next file with a fresh worker', async () => {
    const lines = Array.from({ length: 30_000 }, (_, i) => `line ${i} of a heredoc that the WASM parser takes quadratic time over`);
    const heredoc = job(`driver = "mock"\n      config {\n        script = <<EOT\n${lines.join('\n')}\nEOT\n      }`);
    const err = await specError(parse(heredoc, 'hcl', { parseTimeoutMs: 100 }));
    expect(err.problems).toEqual([
      { path: '', file: 'job.hcl', line: 1, column: 1, message: 'the HCL parser did not finish within 100ms: the file is too large or too complex to parse' },
    ]);
    await expect(parse(job(), 'hcl')).resolves.toHaveLength(1);
  });

  it('parses several files at once, one at a time, in the order they were asked for', async () => {
    const names = ['a', 'b', 'c', 'd'];
    const allocs = await Promise.all(names.map((n) => parse(job().replace('"j"', `"${n}"`), 'hcl')));
    expect(allocs.map((a) => a[0]!.job)).toEqual(names);
  });

  it('runs from the sources as a .ts worker', () => {
    expect(hclWorkerUrl().pathname).toMatch(/\/src\/jobspec\/hcl-worker\.ts$/);
  });

  it('runs from compiled JavaScript as a .js worker next to the compiled parser', async () => {
    // What tsc writes to dist/, made with esbuild for speed: the two modules as JavaScript side by side.
    const dir = await mkdtemp(join(tmpdir(), 'allocrun-hcl-js-'));
    try {
      await symlink(new URL('node_modules', root).pathname, join(dir, 'node_modules'));
      for (const name of ['hcl-parser', 'hcl-worker']) {
        const source = await readFile(new URL(`src/jobspec/${name}.ts`, root), 'utf8');
        const { code } = await transform(source, { loader: 'ts', format: 'esm', target: 'node20' });
        await writeFile(join(dir, `${name}.js`), code.replaceAll("'./hcl-worker.ts'", "'./hcl-worker.js'"));
      }
      const compiled = (await import(pathToFileURL(join(dir, 'hcl-parser.js')).href)) as typeof import('../../src/jobspec/hcl-parser.ts');
      expect(compiled.hclWorkerUrl().pathname).toBe(join(dir, 'hcl-worker.js'));
      try {
        await expect(compiled.parseHclInWorker('x.hcl', 'a = 1\n', 10_000)).resolves.toEqual({ a: 1 });
      } finally {
        await compiled.stopHclWorker();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
