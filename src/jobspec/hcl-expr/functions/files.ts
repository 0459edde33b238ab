/**
 * Filesystem functions of Nomad's jobspec2 table. Paths are relative to the job file's directory (abspath:
 * to the working directory, as in Nomad). A job given as text (the API's /v1/jobs/parse) has no directory:
 * Nomad disables these functions there, and so does allocrun.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { fn, FunctionError, type FunctionContext, type HclFunction } from './types.ts';

function baseDirOf(ctx: FunctionContext, name: string): string {
  if (ctx.baseDir === undefined) throw new FunctionError(`filesystem functions are disabled: this job was given as text, not read from a file, so ${name}() has no directory to work in`);
  return ctx.baseDir;
}

function read(ctx: FunctionContext, path: string, name: string): Buffer {
  const full = resolve(baseDirOf(ctx, name), expand(path));
  try {
    return readFileSync(full);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new FunctionError(code === 'ENOENT' ? `no file exists at ${JSON.stringify(path)} (looked for ${full})` : `cannot read ${JSON.stringify(path)}: ${code ?? (err as Error).message}`);
  }
}

const expand = (p: string): string => (p === '~' || p.startsWith('~/') ? join(homedir(), p.slice(1)) : p);

/** A glob as fileset() reads it (`*`, `**`, `?`, `[...]`, `{a,b}`) as a regular expression over `/`-separated paths. */
function globRegex(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*' && pattern[i + 1] === '*') {
      const slash = pattern[i + 2] === '/';
      re += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = pattern.indexOf(']', i);
      if (end < 0) throw new FunctionError(`invalid glob pattern ${JSON.stringify(pattern)}: unclosed [`);
      re += `[${pattern.slice(i + 1, end).replace(/^!/, '^')}]`;
      i = end;
    } else if (c === '{') {
      const end = pattern.indexOf('}', i);
      if (end < 0) throw new FunctionError(`invalid glob pattern ${JSON.stringify(pattern)}: unclosed {`);
      re += `(?:${pattern.slice(i + 1, end).split(',').map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`;
      i = end;
    } else re += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

function walk(dir: string, prefix: string, out: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) walk(join(dir, entry.name), rel, out);
    else if (entry.isFile()) out.push(rel);
  }
}

export const FILE_FUNCTIONS: Record<string, HclFunction> = {
  file: fn(['path:string'], ([p], ctx) => {
    const bytes = read(ctx, p as string, 'file');
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new FunctionError(`the file ${JSON.stringify(p)} is not valid UTF-8; use filebase64() for binary files`);
    }
  }),
  filebase64: fn(['path:string'], ([p], ctx) => read(ctx, p as string, 'filebase64').toString('base64')),
  fileexists: fn(['path:string'], ([p], ctx) => {
    const full = resolve(baseDirOf(ctx, 'fileexists'), expand(p as string));
    try {
      const st = statSync(full);
      if (!st.isFile()) throw new FunctionError(`${JSON.stringify(p)} exists but is not a regular file`);
      return true;
    } catch (err) {
      if (err instanceof FunctionError) throw err;
      return false;
    }
  }),
  fileset: fn(['path:string', 'pattern:string'], ([p, pattern], ctx) => {
    const root = resolve(baseDirOf(ctx, 'fileset'), expand(p as string));
    const files: string[] = [];
    try {
      walk(root, '', files);
    } catch {
      return [];
    }
    const re = globRegex(pattern as string);
    return files.filter((f) => re.test(f)).sort();
  }),
  abspath: fn(['path:string'], ([p], ctx) => {
    baseDirOf(ctx, 'abspath');
    return isAbsolute(p as string) ? resolve(p as string) : resolve(process.cwd(), p as string);
  }),
  basename: fn(['path:string'], ([p], ctx) => (baseDirOf(ctx, 'basename'), basename(p as string))),
  dirname: fn(['path:string'], ([p], ctx) => (baseDirOf(ctx, 'dirname'), dirname(p as string))),
  pathexpand: fn(['path:string'], ([p], ctx) => (baseDirOf(ctx, 'pathexpand'), expand(p as string))),
};
