/**
 * One template rendered to its file (Nomad's template runner and consul-template's renderer): the text from
 * `data` or its `source` file in the task dir, executed with consul-template's functions, and written only
 * when every dependency it reads is there, atomically (a temporary file renamed), with its `perms` and
 * `uid`/`gid`, never outside the task dir (a symlinked directory that points out is refused).
 */
import { chmod, chown, mkdir, readFile, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { TemplateSpec } from '../../jobspec/types.ts';
import { consulTemplateFuncs, newTracker, type RenderTracker, type TemplateScope } from '../../template/consul-template-funcs.ts';
import { Template } from '../../template/template.ts';

/** A problem that fails the template (Nomad: "Template failed: ..."). */
export class TemplateRenderError extends Error {
  readonly code = 'ErrTemplateFailed';
}

/** What rendering one template found. */
export interface RenderResult {
  /** Dependencies not there yet: nothing was written. */
  missing: string[];
  /** Everything it read, as consul-template names dependencies. */
  used: Set<string>;
  /** The file's new content differs from what was there (it was written). */
  changed: boolean;
  /** The rendered text, when nothing was missing. */
  content?: string;
}

/** `path` inside `root`, as Nomad joins a template path to the task dir (an absolute path too); undefined when it leaves it. */
export function insideDir(root: string, path: string): string | undefined {
  const full = resolve(root, isAbsolute(path) ? `.${sep}${path}` : path);
  const rel = relative(root, full);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel)) ? full : undefined;
}

/** Reads a file for the `file` function: inside the task dir only (Nomad's template sandbox). */
export function sandboxedReader(taskDir: string): (path: string) => string | undefined {
  return (path) => {
    const full = insideDir(taskDir, path);
    if (!full) throw new Error(`${JSON.stringify(path)} is outside the task directory (Nomad's template sandbox)`);
    try {
      return readFileSync(full, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  };
}

/** Renders `spec` with `scope`; writes the destination when complete and different. */
export async function renderTemplateFile(spec: TemplateSpec, taskDir: string, scope: TemplateScope): Promise<RenderResult> {
  const name = spec.destination;
  let text = spec.data;
  if (text === undefined) {
    const source = spec.source && insideDir(taskDir, spec.source);
    if (!source) throw new TemplateRenderError(`source ${JSON.stringify(spec.source)} is outside the task directory`);
    try {
      text = await readFile(source, 'utf8');
    } catch (err) {
      throw new TemplateRenderError(`reading source ${JSON.stringify(spec.source)}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file in the task directory' : (err as Error).message}`);
    }
  }
  const tracker: RenderTracker = newTracker();
  let content: string;
  try {
    const tmpl = new Template(name, { funcs: consulTemplateFuncs(scope, tracker), leftDelim: spec.leftDelim, rightDelim: spec.rightDelim, missingKey: spec.errMissingKey ? 'error' : 'default' });
    content = tmpl.parse(text).execute(undefined);
  } catch (err) {
    // A function that met a missing dependency may fail further on (e.g. `.x` of nothing under
    // error_on_missing_key): consul-template waits for the dependency rather than failing.
    if (tracker.missing.length > 0) return { missing: tracker.missing, used: tracker.used, changed: false };
    throw new TemplateRenderError((err as Error).message);
  }
  if (tracker.missing.length > 0) return { missing: tracker.missing, used: tracker.used, changed: false };
  const changed = await writeDestination(spec, taskDir, content);
  return { missing: [], used: tracker.used, changed, content };
}

async function writeDestination(spec: TemplateSpec, taskDir: string, content: string): Promise<boolean> {
  const dest = insideDir(taskDir, spec.destination);
  if (!dest) throw new TemplateRenderError(`destination ${JSON.stringify(spec.destination)} escapes the task directory`);
  const dir = dirname(dest);
  await mkdir(dir, { recursive: true });
  const [realDir, realRoot] = await Promise.all([realpath(dir), realpath(taskDir)]);
  if (realDir !== realRoot && !realDir.startsWith(realRoot + sep)) {
    throw new TemplateRenderError(`destination ${JSON.stringify(spec.destination)} leads out of the task directory through a symlink`);
  }
  const existing = await readFile(dest, 'utf8').catch(() => undefined);
  if (existing === content) return false;
  const tmp = join(dir, `.${process.pid}.${Date.now()}.template.tmp`);
  try {
    await writeFile(tmp, content, { mode: parseInt(spec.perms, 8) });
    // The mode given to writeFile is cut by the umask; perms say exactly what the file gets.
    await chmod(tmp, parseInt(spec.perms, 8));
    if (spec.uid !== undefined || spec.gid !== undefined) {
      try {
        await chown(tmp, spec.uid ?? -1, spec.gid ?? -1);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        throw new TemplateRenderError(`setting uid/gid of ${JSON.stringify(spec.destination)}: ${code === 'EPERM' ? 'operation not permitted (only an agent running as root may give a file to another user)' : (err as Error).message}`);
      }
    }
    await rename(tmp, dest);
  } finally {
    await rm(tmp, { force: true });
  }
  return existing !== content;
}
