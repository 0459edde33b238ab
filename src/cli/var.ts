/**
 * `allocrun var get|put|list|purge`: Nomad's variable commands against a running agent, through its API.
 * As `nomad var put`, a put without `-check-index` or `-force` creates only (check-and-set at index 0), so
 * an existing variable is never overwritten by accident; a conflict is reported by its indexes, never by
 * the variable's items.
 */
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parseCommand, type Command } from './args.ts';
import { agentClient, AGENT_FLAGS, AGENT_FLAGS_HELP, ApiError, readAll } from './api-client.ts';
import { columns, formatTime, keyValues } from './format.ts';
import { commandGroup } from './command-group.ts';
import { CliError, UsageError } from './errors.ts';

/** A variable as the agent answers it (Nomad's `Variable`). */
interface ApiVariable {
  Namespace: string;
  Path: string;
  CreateIndex: number;
  ModifyIndex: number;
  CreateTime: number;
  ModifyTime: number;
  Items?: Record<string, string>;
}

const AGENT_USAGE = '[--data-dir D | --address URL [--token-file F]]';
const NAMESPACE_FLAG = { namespace: { type: 'string' } } as const;
const NAMESPACE_HELP = '  -namespace NS      the variable\'s namespace (default: default)';

/** Nomad's path cleaning: no surrounding spaces or slashes. */
const cleanPath = (p: string): string => p.trim().replace(/^\/+|\/+$/g, '');

/** The URL of a variable: each segment escaped, the slashes kept. */
const varUrl = (path: string): string => `/v1/var/${path.split('/').map(encodeURIComponent).join('/')}`;

/** `-out json|table`, defaulting as Nomad does: a table on a terminal, JSON when redirected. */
function outFormat(cmd: Command, value: string | undefined, allowed: readonly string[], tty: string): string {
  const out = value ?? (process.stdout.isTTY ? tty : 'json');
  if (!allowed.includes(out)) throw new UsageError(`${cmd.name}: -out must be one of ${allowed.join(', ')} (got ${JSON.stringify(out)})`, cmd.name);
  return out;
}

/** Nomad's table of one variable: its metadata, then its items. */
function variableTable(v: ApiVariable): string {
  const items = Object.entries(v.Items ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `${keyValues([
    ['Namespace', v.Namespace],
    ['Path', v.Path],
    ['Create Time', formatTime(v.CreateTime / 1e6)],
    ['Check Index', String(v.ModifyIndex)],
  ]).join('\n')}\n\nItems\n${items.length === 0 ? '<none>' : keyValues(items).join('\n')}\n`;
}

/**
 * A 409's answer turned into words: the index the server has, not the variable's items (the error message
 * carries the conflicting variable's JSON, which is dropped here).
 */
function casError(err: unknown, command: string, expected: number, path: string, canForce: boolean): unknown {
  if (!(err instanceof ApiError) || err.status !== 409) return err;
  let current: Partial<ApiVariable> = {};
  try {
    current = JSON.parse(err.message) as ApiVariable;
  } catch {
    // not the variable: say what is known
  }
  const found = current.ModifyIndex ?? 0;
  const what = found === 0 ? `there is no variable at "${path}"` : `the variable "${path}" is at index ${found}`;
  const force = canForce ? ', or -force to write whatever is there' : '';
  const fix = found === 0 ? (canForce ? 'use -check-index 0 to create it, or -force' : 'nothing to delete') : `use -check-index ${found} to act on this version${force}`;
  return new CliError(`${command}: check-and-set conflict: expected index ${expected}, but ${what}; ${fix}`, 'ErrCASConflict');
}

/** `-check-index N` as a non-negative integer. */
function checkIndexOf(cmd: Command, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new UsageError(`${cmd.name}: -check-index must be a non-negative integer (got ${JSON.stringify(text)})`, cmd.name);
  return Number(text);
}

async function readStdin(): Promise<string> {
  let text = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) text += chunk as string;
  return text;
}

/** A variable specification file (`@file.json`, or stdin with `-in json`): Nomad's Variable JSON. */
function parseSpec(cmd: Command, text: string, from: string): Partial<ApiVariable> & { Items: Record<string, string> } {
  let spec: unknown;
  try {
    spec = JSON.parse(text);
  } catch {
    // The text may be the secrets themselves: the parser's message would quote it.
    throw new CliError(`${cmd.name}: ${from} is not valid JSON`, 'ErrSpec');
  }
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) throw new CliError(`${cmd.name}: ${from} must hold a JSON object (a variable: Path, Namespace, Items)`, 'ErrSpec');
  const s = spec as Record<string, unknown>;
  const items = s['Items'] ?? {};
  if (typeof items !== 'object' || items === null || Array.isArray(items) || Object.values(items).some((v) => typeof v !== 'string')) {
    throw new CliError(`${cmd.name}: ${from}: Items must be an object of string keys to string values`, 'ErrSpec');
  }
  for (const f of ['Path', 'Namespace'] as const) if (s[f] !== undefined && typeof s[f] !== 'string') throw new CliError(`${cmd.name}: ${from}: ${f} must be a string`, 'ErrSpec');
  if (s['ModifyIndex'] !== undefined && !Number.isSafeInteger(s['ModifyIndex'])) throw new CliError(`${cmd.name}: ${from}: ModifyIndex must be an integer`, 'ErrSpec');
  return { ...(s as Partial<ApiVariable>), Items: { ...(items as Record<string, string>) } };
}

const get: Command = {
  name: 'var get',
  usage: `var get <path> [-item KEY] [-namespace NS] [-out json|table] ${AGENT_USAGE}`,
  details: `
Show the variable at PATH: its metadata and items, or with -item only that item's value (no
newline added, as 'nomad var get -item' prints it).

Flags:
  -item KEY         print only this item's value
${NAMESPACE_HELP}
  -out F            json or table (default: table on a terminal, json otherwise)
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, ...NAMESPACE_FLAG, item: { type: 'string' }, out: { type: 'string' } }, { min: 1, max: 1, names: 'the variable path' });
    if (!parsed) return 0;
    const path = cleanPath(parsed.positionals[0]!);
    const out = outFormat(this, parsed.values.out, ['json', 'table'], 'table');
    const client = agentClient(this.name, parsed.values);
    let v: ApiVariable;
    try {
      v = (await client.get<ApiVariable>(varUrl(path), { namespace: parsed.values.namespace })).body;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) throw new CliError(`${this.name}: no variable at "${path}"${parsed.values.namespace ? ` in namespace "${parsed.values.namespace}"` : ''}`, 'ErrNotFound');
      throw err;
    }
    const item = parsed.values.item;
    if (item !== undefined) {
      if (!Object.hasOwn(v.Items ?? {}, item)) throw new CliError(`${this.name}: the variable "${path}" has no item "${item}" (its items: ${Object.keys(v.Items ?? {}).sort().join(', ')})`, 'ErrNotFound');
      process.stdout.write(v.Items![item]!);
      return 0;
    }
    process.stdout.write(out === 'json' ? `${JSON.stringify(v, null, 2)}\n` : variableTable(v));
    return 0;
  },
};

const put: Command = {
  name: 'var put',
  usage: `var put <path> [@spec.json | -] [KEY=VALUE ...] [-check-index N | -force] [-in json] [-namespace NS] [-out none|json|table] ${AGENT_USAGE}`,
  details: `
Create or update the variable at PATH with the given items. A value may be text, @FILE (the file's
content as is) or - (standard input). A variable specification (Nomad's Variable JSON, as
'var get -out json' prints it) can be given as @FILE.json, or as - on standard input with -in json;
KEY=VALUE arguments then set items on top of it, and KEY= removes one.

Without -check-index or -force, the variable is only created: an existing one is left as it is and
the command fails, naming its index (use that index with -check-index to change it). A specification
that carries a ModifyIndex uses it as the check index.

Flags:
  -check-index N    write only if the variable's index is N (0: only if it does not exist)
  -force            write whatever the variable's state
  -in json          the format of a specification on standard input (json; hcl is not read here)
${NAMESPACE_HELP}
  -out F            none, json or table (default: none on a terminal, json otherwise)
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, ...NAMESPACE_FLAG, 'check-index': { type: 'string' }, force: { type: 'boolean' }, in: { type: 'string' }, out: { type: 'string' } }, { min: 1, max: Infinity, names: 'the variable path and its items (KEY=VALUE)' });
    if (!parsed) return 0;
    const out = outFormat(this, parsed.values.out, ['none', 'json', 'table'], 'none');
    const inFormat = parsed.values.in ?? 'json';
    if (inFormat !== 'json') throw new UsageError(`${this.name}: -in ${JSON.stringify(inFormat)} is not read here: give the specification as JSON (-in json)`, this.name);
    let checkIndex = checkIndexOf(this, parsed.values['check-index']);
    if (checkIndex !== undefined && parsed.values.force) throw new UsageError(`${this.name}: -check-index and -force contradict each other: give one`, this.name);

    const args = [...parsed.positionals];
    let spec: ReturnType<typeof parseSpec> | undefined;
    let stdinUsed = false;
    const readSpec = async (arg: string) => {
      if (arg === '-') {
        stdinUsed = true;
        return parseSpec(this, await readStdin(), 'standard input');
      }
      const file = arg.slice(1);
      if (extname(file) !== '.json') throw new UsageError(`${this.name}: cannot tell the format of ${file}: give a .json specification`, this.name);
      return parseSpec(this, readText(this, file), file);
    };
    let path = '';
    const first = args.shift()!;
    if (first === '-' || first.startsWith('@')) spec = await readSpec(first);
    else {
      path = cleanPath(first);
      if (args[0] === '-' || args[0]?.startsWith('@')) spec = await readSpec(args.shift()!);
    }
    if (!spec && args.length === 0) throw new UsageError(`${this.name}: must supply data: KEY=VALUE items or a specification (@file.json)`, this.name);

    const items: Record<string, string> = { ...(spec?.Items ?? {}) };
    for (const arg of args) {
      const eq = arg.indexOf('=');
      if (eq <= 0) throw new UsageError(`${this.name}: ${JSON.stringify(arg.split('=')[0])} is not KEY=VALUE`, this.name);
      const key = arg.slice(0, eq);
      let value = arg.slice(eq + 1);
      if (value === '-') {
        if (stdinUsed) throw new UsageError(`${this.name}: standard input can be read only once (item "${key}")`, this.name);
        stdinUsed = true;
        value = await readStdin();
      } else if (value.startsWith('@')) value = readText(this, value.slice(1));
      if (value === '') delete items[key];
      else items[key] = value;
    }
    const namespace = parsed.values.namespace ?? spec?.Namespace;
    // A specification copied to another path or namespace starts afresh, as Nomad's makeVariable does.
    const moved = spec !== undefined && ((path !== '' && spec.Path !== undefined && spec.Path !== path) || (namespace !== spec.Namespace));
    path ||= cleanPath(spec?.Path ?? '');
    if (path === '') throw new UsageError(`${this.name}: which path? name it, or give the specification a Path`, this.name);
    if (checkIndex === undefined && !parsed.values.force) checkIndex = moved ? 0 : (spec?.ModifyIndex ?? 0);

    const client = agentClient(this.name, parsed.values);
    let v: ApiVariable;
    try {
      v = await client.send<ApiVariable>('PUT', varUrl(path), { Namespace: namespace ?? '', Path: path, Items: items }, { namespace, cas: checkIndex });
    } catch (err) {
      throw casError(err, this.name, checkIndex ?? 0, path, true);
    }
    if (out === 'json') process.stdout.write(`${JSON.stringify(v, null, 2)}\n`);
    else if (out === 'table') process.stdout.write(variableTable(v));
    else process.stdout.write(`Created variable "${v.Path}" with modify index ${v.ModifyIndex}\n`);
    return 0;
  },
};

/** A file's text for a value or a specification, or a CliError naming it. */
function readText(cmd: Command, file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`${cmd.name}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, 'ErrFile');
  }
}

const list: Command = {
  name: 'var list',
  usage: `var list [PREFIX] [-namespace NS|*] [-per-page N] [-page-token T] [-out json|table] ${AGENT_USAGE}`,
  details: `
List the variables (their paths and when they changed, never their items), optionally only those
whose path starts with PREFIX.

Flags:
${NAMESPACE_HELP}; * lists every namespace
  -per-page N       at most N variables, then the token of the next page
  -page-token T     start at this page token (from a previous -per-page listing)
  -out F            json or table (default: table on a terminal, json otherwise)
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, ...NAMESPACE_FLAG, 'per-page': { type: 'string' }, 'page-token': { type: 'string' }, out: { type: 'string' } }, { min: 0, max: 1, names: 'a path prefix' });
    if (!parsed) return 0;
    const out = outFormat(this, parsed.values.out, ['json', 'table'], 'table');
    const perPage = parsed.values['per-page'];
    if (perPage !== undefined && !/^[1-9]\d*$/.test(perPage)) throw new UsageError(`${this.name}: -per-page must be a positive integer (got ${JSON.stringify(perPage)})`, this.name);
    const client = agentClient(this.name, parsed.values);
    const res = await client.stream('/v1/vars' + query({ prefix: parsed.positionals[0] ?? '', namespace: parsed.values.namespace, per_page: perPage, next_token: parsed.values['page-token'] }));
    const body = JSON.parse(await readAll(res)) as ApiVariable[];
    const next = res.headers['x-nomad-nexttoken'];
    if (out === 'json') {
      process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
      if (typeof next === 'string') process.stderr.write(`Next page token: ${next}\n`);
      return 0;
    }
    if (body.length === 0) {
      process.stdout.write('No variables found\n');
      return 0;
    }
    const all = parsed.values.namespace === '*';
    const rows = body.map((m) => [...(all ? [m.Namespace] : []), m.Path, formatTime(m.ModifyTime / 1e6)]);
    process.stdout.write(`${columns([[...(all ? ['Namespace'] : []), 'Path', 'Last Updated'], ...rows]).join('\n')}\n`);
    if (typeof next === 'string') process.stdout.write(`\nNext page token: ${next}\n`);
    return 0;
  },
};

function query(q: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== '') params.set(k, v);
  const s = params.toString();
  return s ? `?${s}` : '';
}

const purge: Command = {
  name: 'var purge',
  usage: `var purge <path> [-check-index N] [-namespace NS] ${AGENT_USAGE}`,
  details: `
Delete the variable at PATH for good. With -check-index, only if its index is N.

Flags:
  -check-index N    delete only if the variable's index is N
${NAMESPACE_HELP}
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, ...NAMESPACE_FLAG, 'check-index': { type: 'string' } }, { min: 1, max: 1, names: 'the variable path' });
    if (!parsed) return 0;
    const path = cleanPath(parsed.positionals[0]!);
    const checkIndex = checkIndexOf(this, parsed.values['check-index']);
    const client = agentClient(this.name, parsed.values);
    try {
      await client.send('DELETE', varUrl(path), undefined, { namespace: parsed.values.namespace, cas: checkIndex });
    } catch (err) {
      throw casError(err, this.name, checkIndex ?? 0, path, false);
    }
    process.stdout.write(`Successfully purged variable "${path}"!\n`);
    return 0;
  },
};

/** The `var` command (Nomad's name): get, put, list and purge a running agent's variables. */
export const varCommand: Command = commandGroup('var', "Read and write a running agent's Nomad Variables (secrets kept only in the agent's store).", [get, put, list, purge]);
