/**
 * The `template` block (Nomad's Template), over the normalised structure (templates always a list, see
 * normalize.ts). Checked as Nomad's Template.Validate checks it, plus what allocrun needs: the text parses
 * as consul-template's language and calls nothing that needs Consul or Vault, and `source`/`destination`
 * stay inside the task directory.
 */
import { constants as osConstants } from 'node:os';
import { posix } from 'node:path';
import { z } from 'zod';
import { templateProblems } from '../template/validate-template.ts';
import { durationSchema, int } from './schema-primitives.ts';
import type { PathSegment } from './spec-error.ts';

/** Nomad's change modes. */
export const TEMPLATE_CHANGE_MODES = ['noop', 'restart', 'signal', 'script'] as const;

const SIGNALS = new Set(Object.keys(osConstants.signals));

/** Why `path` (relative to the task dir; an absolute one is taken inside it, as Nomad joins it) leaves the task dir. */
export function escapesTaskDir(path: string): boolean {
  const normal = posix.normalize(`./${path.replace(/\\/g, '/')}`);
  return normal === '..' || normal.startsWith('../');
}

const changeScriptSchema = z.strictObject({
  command: z.string().min(1, 'must not be empty: the command to run in the task when the template changes'),
  args: z.array(z.string()).optional(),
  timeout: durationSchema.optional(),
  fail_on_error: z.boolean().optional(),
});

const waitSchema = z.strictObject({
  min: durationSchema.optional(),
  max: durationSchema.optional(),
});

/** One `template` block. */
export const templateSchema = z
  .strictObject({
    source: z.string().min(1, 'must not be empty (leave "source" out and write "data")').optional(),
    destination: z.string().min(1, 'must not be empty: write where the rendered file goes, e.g. "local/app.conf"'),
    data: z.string().optional(),
    change_mode: z.enum(TEMPLATE_CHANGE_MODES).optional(),
    change_signal: z.string().optional(),
    change_script: changeScriptSchema.optional(),
    splay: durationSchema.optional(),
    perms: z.union([z.string(), z.number()]).optional(),
    uid: int(-1).optional(),
    gid: int(-1).optional(),
    left_delimiter: z.string().optional(),
    right_delimiter: z.string().optional(),
    env: z.boolean().optional(),
    error_on_missing_key: z.boolean().optional(),
    wait: waitSchema.optional(),
    /** Vault's; accepted and unused, as Nomad deprecates it. */
    vault_grace: durationSchema.optional(),
  })
  .superRefine((t, ctx) => {
    const at = (path: PathSegment[], message: string) => ctx.addIssue({ code: 'custom', path, message, input: undefined });
    if (t.source === undefined && (t.data === undefined || t.data === '')) at([], 'a template needs "data" (the template text) or "source" (a file in the task directory)');
    if (t.source !== undefined && t.data !== undefined && t.data !== '') at(['source'], 'give either "data" or "source", not both');
    if (escapesTaskDir(t.destination)) at(['destination'], `${JSON.stringify(t.destination)} escapes the task directory: write a path inside it, e.g. "local/app.conf"`);
    if (t.source !== undefined && escapesTaskDir(t.source)) at(['source'], `${JSON.stringify(t.source)} escapes the task directory: templates are read from inside it (e.g. "local/app.tpl" from an artifact)`);
    const mode = t.change_mode ?? 'restart';
    if (mode === 'signal') {
      if (!t.change_signal) at(['change_signal'], 'change_mode "signal" needs change_signal, e.g. "SIGHUP"');
      else if (!SIGNALS.has(t.change_signal.toUpperCase())) at(['change_signal'], `${JSON.stringify(t.change_signal)} is not a signal name such as "SIGHUP" or "SIGUSR1"`);
    } else if (t.change_signal !== undefined && !SIGNALS.has(t.change_signal.toUpperCase())) {
      at(['change_signal'], `${JSON.stringify(t.change_signal)} is not a signal name such as "SIGHUP" or "SIGUSR1"`);
    }
    if (mode === 'script' && !t.change_script) at(['change_script'], 'change_mode "script" needs a change_script block with a command');
    if (t.perms !== undefined && !/^0?[0-7]{3,4}$/.test(String(t.perms))) at(['perms'], `${JSON.stringify(t.perms)} is not octal permissions such as "0644"`);
    if (t.wait?.min !== undefined && t.wait.max !== undefined && t.wait.min > t.wait.max) at(['wait', 'min'], 'wait min is greater than max');
    if ((t.left_delimiter === undefined) !== (t.right_delimiter === undefined) && (t.left_delimiter === '' || t.right_delimiter === '')) {
      at([t.left_delimiter === '' ? 'left_delimiter' : 'right_delimiter'], 'must not be empty');
    }
    if (t.data !== undefined && t.data !== '') {
      const name = t.destination;
      for (const problem of templateProblems(t.data, { name, leftDelim: t.left_delimiter, rightDelim: t.right_delimiter })) at(['data'], problem);
    }
  });

/** A task's templates. */
export const templateListSchema = z.array(templateSchema);

/** One parsed template block. */
export type TemplateBody = z.output<typeof templateSchema>;

/** The keys of the block at `path` below `template[i]`, for "did you mean" suggestions. */
export function templateKeysAt(path: readonly PathSegment[]): readonly string[] {
  if (path.length <= 1) return Object.keys(templateSchema.shape);
  if (path[1] === 'wait') return Object.keys(waitSchema.shape);
  if (path[1] === 'change_script') return Object.keys(changeScriptSchema.shape);
  return [];
}
