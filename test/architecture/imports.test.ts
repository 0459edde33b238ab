/**
 * The import direction of STYLE.md, read from the source: every import in src/, machines/ and visualizer/src
 * (static, type-only, re-exports, dynamic `import()` and the CLI's `importOptional` paths) must point down
 *
 *   surface (src/index.ts, src/testing) → cli → runtime → (machines, hooks, drivers, state, inspect)
 *     → (env, jobspec) → machines/model.ts
 *
 * with two more rules: machines/ imports only xstate and machines/ (never src/, never node:), and src/
 * outside runtime and the public surface imports only machines/model.ts of the machines. Known violations
 * are listed in ALLOWED with who fixes them; an entry that no longer occurs fails the test too, so the list
 * only shrinks.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

/** Known back edges, `from -> to` (paths from the repo root), each with the issue that removes it. */
const ALLOWED: Record<string, string> = {};

/** The layer of a file: higher layers may import lower ones and their own; `undefined` = not layered. */
function layerOf(file: string): number | undefined {
  if (file === 'machines/model.ts') return 0;
  if (/^src\/(env|jobspec)\//.test(file)) return 1;
  if (/^machines\//.test(file) || /^src\/(hooks|artifacts|drivers|state|inspect)\//.test(file)) return 2;
  if (file.startsWith('src/runtime/')) return 3;
  if (file.startsWith('src/cli/')) return 4;
  if (file === 'src/index.ts' || file.startsWith('src/testing/')) return 5;
  return undefined;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Every module specifier a file imports, including `import()` and `importOptional('<path>', ...)`. */
function importsOf(source: string): string[] {
  const info = ts.preProcessFile(source, true, true);
  const specs = info.importedFiles.map((f) => f.fileName);
  for (const m of source.matchAll(/importOptional(?:<[^>]*>)?\(\s*['"]([^'"]+)['"]/g)) specs.push(m[1]!);
  return specs;
}

/** One import, resolved to a repo path when it is relative. */
interface Edge {
  from: string;
  to: string;
}

function edgesOf(file: string): Edge[] {
  const source = readFileSync(join(ROOT, file), 'utf8');
  return importsOf(source).map((spec) => ({
    from: file,
    to: spec.startsWith('.') ? relative(ROOT, resolve(ROOT, dirname(file), spec)) : spec,
  }));
}

/** Why an edge breaks the layering, or undefined when it does not. */
function violationOf({ from, to }: Edge): string | undefined {
  const local = to.startsWith('src/') || to.startsWith('machines/') || to.startsWith('visualizer/');
  if (from === 'machines/model.ts') return 'machines/model.ts is a leaf: it imports nothing';
  if (from.startsWith('machines/')) return to === 'xstate' || to.startsWith('machines/') ? undefined : 'machines/ imports only xstate and machines/';
  if (from.startsWith('visualizer/')) {
    return local && !to.startsWith('src/inspect/') && !to.startsWith('visualizer/') ? 'visualizer/ imports only src/inspect/ of the package' : undefined;
  }
  if (!local) return undefined;
  if (to.startsWith('machines/') && to !== 'machines/model.ts') {
    const mayUseMachines = from.startsWith('src/runtime/') || layerOf(from) === 5;
    if (!mayUseMachines) return 'src/ outside the runtime imports only machines/model.ts of the machines';
  }
  const a = layerOf(from);
  const b = layerOf(to);
  if (a === undefined || b === undefined) return undefined;
  return b > a ? `a back edge: layer ${a} imports layer ${b}` : undefined;
}

const files = [...sourceFiles('src'), ...sourceFiles('machines'), ...sourceFiles('visualizer/src')];
const edges = files.flatMap(edgesOf);

describe('import direction', () => {
  it('reads the imports of every file, dynamic ones included', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(importsOf("import type { A } from './a.ts';\nexport * from './b.ts';\nconst m = await import('./c.ts');")).toEqual(['./a.ts', './b.ts', './c.ts']);
    expect(importsOf("importOptional<X>('../../machines/x.ts', 'x', 'why')")).toEqual(['../../machines/x.ts']);
  });

  it('names each kind of back edge', () => {
    expect(violationOf({ from: 'src/jobspec/rules.ts', to: 'src/runtime/x.ts' })).toMatch(/back edge/);
    expect(violationOf({ from: 'src/drivers/do.ts', to: 'machines/task-runner.ts' })).toMatch(/only machines\/model\.ts/);
    expect(violationOf({ from: 'machines/task-runner.ts', to: 'src/jobspec/types.ts' })).toMatch(/machines\/ imports only/);
    expect(violationOf({ from: 'machines/clock.ts', to: 'node:os' })).toMatch(/machines\/ imports only/);
    expect(violationOf({ from: 'machines/model.ts', to: 'machines/clock.ts' })).toMatch(/leaf/);
    expect(violationOf({ from: 'visualizer/src/main.ts', to: 'src/runtime/create-agent.ts' })).toMatch(/visualizer/);
    expect(violationOf({ from: 'src/runtime/task-bindings.ts', to: 'machines/task-runner.ts' })).toBeUndefined();
    expect(violationOf({ from: 'src/cli/run.ts', to: 'src/runtime/create-alloc-runner.ts' })).toBeUndefined();
  });

  it('has no back edge but the listed ones', () => {
    const found = edges.filter((e) => violationOf(e)).map((e) => `${e.from} -> ${e.to}`);
    const unlisted = found.filter((k) => !(k in ALLOWED)).map((k) => `${k}: ${violationOf({ from: k.split(' -> ')[0]!, to: k.split(' -> ')[1]! })}`);
    expect(unlisted).toEqual([]);
  });

  it('lists only violations that still exist, so the list shrinks as they are fixed', () => {
    const found = new Set(edges.filter((e) => violationOf(e)).map((e) => `${e.from} -> ${e.to}`));
    expect(Object.keys(ALLOWED).filter((k) => !found.has(k))).toEqual([]);
  });
});
