/**
 * Template blocks in Nomad's API Job JSON: `Templates: [{ EmbeddedTmpl, DestPath, ChangeMode, ... }]`
 * written from a checked jobspec, and the canonical form Nomad stores (api Template.Canonicalize: change
 * mode "restart", splay 5s, perms "0644", `{{ }}` delimiters, the signal upper-cased, a change script's 5s).
 */
import type { TemplateBody } from '../jobspec/template-schema.ts';

type Json = Record<string, unknown>;

const ns = (ms: number | undefined): number | undefined => (ms === undefined ? undefined : Math.round(ms * 1e6));
const compact = (obj: Json): Json => Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined));
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A task's template blocks as the API's Templates list (undefined when there are none). */
export function templatesJson(templates: TemplateBody[] | undefined): Json[] | undefined {
  if (!templates || templates.length === 0) return undefined;
  return templates.map((t) =>
    compact({
      SourcePath: t.source,
      DestPath: t.destination,
      EmbeddedTmpl: t.data,
      ChangeMode: t.change_mode,
      ChangeSignal: t.change_signal,
      ChangeScript: t.change_script && compact({ Command: t.change_script.command, Args: t.change_script.args, Timeout: ns(t.change_script.timeout), FailOnError: t.change_script.fail_on_error }),
      Splay: ns(t.splay),
      Perms: t.perms === undefined ? undefined : String(t.perms),
      Uid: t.uid,
      Gid: t.gid,
      LeftDelim: t.left_delimiter,
      RightDelim: t.right_delimiter,
      Envvars: t.env,
      ErrMissingKey: t.error_on_missing_key,
      Wait: t.wait && compact({ Min: ns(t.wait.min), Max: ns(t.wait.max) }),
      VaultGrace: ns(t.vault_grace),
    }),
  );
}

const TEMPLATE_DEFAULTS: Json = {
  SourcePath: '', DestPath: '', EmbeddedTmpl: '', ChangeMode: 'restart', ChangeSignal: '', Splay: 5e9, Perms: '0644',
  LeftDelim: '{{', RightDelim: '}}', Envvars: false, ErrMissingKey: false, VaultGrace: 0,
};

/** The Templates list as Nomad stores it; idempotent. */
export function canonicalTemplates(templates: unknown): unknown {
  if (!Array.isArray(templates)) return templates;
  return templates.map((raw) => {
    if (!isObject(raw)) return raw;
    const t: Json = { ...TEMPLATE_DEFAULTS };
    for (const [k, v] of Object.entries(raw)) if (v !== null && v !== undefined) t[k] = v;
    if (typeof t['ChangeSignal'] === 'string') t['ChangeSignal'] = t['ChangeSignal'].toUpperCase();
    if (typeof t['Perms'] === 'string' && /^[0-7]{3}$/.test(t['Perms'])) t['Perms'] = `0${t['Perms']}`;
    if (isObject(t['ChangeScript'])) t['ChangeScript'] = { Args: [], Timeout: 5e9, FailOnError: false, ...t['ChangeScript'] };
    return t;
  });
}
