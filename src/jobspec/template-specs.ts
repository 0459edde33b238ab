/**
 * Template blocks as the runner takes them (TemplateSpec): Nomad's defaults filled in (change_mode
 * "restart", splay 5s, perms "0644", `{{ }}` delimiters, a change script's 5s timeout).
 */
import type { TemplateBody } from './template-schema.ts';
import type { TemplateSpec } from './types.ts';

/** Nomad's default splay. */
export const DEFAULT_SPLAY_MS = 5000;
/** Nomad's default change_script timeout. */
export const DEFAULT_SCRIPT_TIMEOUT_MS = 5000;

/** Normalises a task's template blocks. */
export function templatesOf(blocks: readonly TemplateBody[]): TemplateSpec[] {
  return blocks.map((t) => ({
    ...(t.data !== undefined && t.data !== '' && { data: t.data }),
    ...(t.source !== undefined && { source: t.source }),
    destination: t.destination,
    changeMode: t.change_mode ?? 'restart',
    ...(t.change_signal && { changeSignal: t.change_signal.toUpperCase() }),
    ...(t.change_script && {
      changeScript: {
        command: t.change_script.command,
        args: t.change_script.args ?? [],
        timeout: t.change_script.timeout ?? DEFAULT_SCRIPT_TIMEOUT_MS,
        failOnError: t.change_script.fail_on_error ?? false,
      },
    }),
    splay: t.splay ?? DEFAULT_SPLAY_MS,
    perms: t.perms === undefined ? '0644' : String(t.perms).padStart(4, '0'),
    ...(t.uid !== undefined && t.uid >= 0 && { uid: t.uid }),
    ...(t.gid !== undefined && t.gid >= 0 && { gid: t.gid }),
    leftDelim: t.left_delimiter || '{{',
    rightDelim: t.right_delimiter || '}}',
    env: t.env ?? false,
    errMissingKey: t.error_on_missing_key ?? false,
    ...(t.wait && (t.wait.min !== undefined || t.wait.max !== undefined) && {
      wait: { ...(t.wait.min !== undefined && { min: t.wait.min }), ...(t.wait.max !== undefined && { max: t.wait.max }) },
    }),
  }));
}
