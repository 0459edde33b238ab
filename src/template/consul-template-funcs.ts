/**
 * consul-template's functions that need neither Consul nor Vault, as Nomad's template runner offers them:
 * `env`, `file`, `timestamp`, JSON, strings and numbers, `sockaddr`, and the Nomad ones (`nomadService`,
 * `nomadServices`, `nomadVar`, `nomadVarList`, `nomadVarExists`) reading the agent's service registry and
 * variables. A render records what it read (to re-render when that changes) and what it found missing
 * (`nomadVar` of an absent variable, a `file` not there yet): a render with anything missing is not
 * written, as consul-template waits for every dependency before the first write.
 */
import { createHash } from 'node:crypto';
import { parse as parseYamlText, stringify as stringifyYaml } from 'yaml';
import { sprint } from './go-fmt.ts';
import { goJSON } from './go-json.ts';
import { formatGoTime, RFC3339 } from './go-time.ts';
import { fixed, variadic, type FuncMap, type TemplateFunc } from './funcs.ts';
import { NomadService, NomadServicesSnippet, NomadVariable, NomadVarMeta, type ServiceRecord, type VariableRecord } from './nomad-values.ts';
import { renderTemplate } from './template.ts';
import { kindOf, mapGet, typeName } from './values.ts';

/** The variables a task's templates may read (the variables store narrowed to the task). */
export interface TemplateVariables {
  get(path: string, namespace?: string): VariableRecord | undefined;
  list(prefix: string, namespace?: string): VariableRecord[];
}

/** The service registry as templates read it. */
export interface TemplateServices {
  list(name: string, namespace?: string): readonly ServiceRecord[];
  names(namespace?: string): readonly { Namespace: string; Services: readonly { ServiceName: string; Tags: readonly string[] }[] }[];
}

/** One host network address (node:os networkInterfaces' entries, flattened). */
export interface HostAddress {
  iface: string;
  address: string;
  family: 'IPv4' | 'IPv6';
  internal: boolean;
}

/** What the functions read: the task's environment and directory, the agent's data, the host. */
export interface TemplateScope {
  /** The task's environment (Nomad renders templates with the task's env, not the agent's). */
  env: Readonly<Record<string, string>>;
  /** The job's namespace: the default for `nomadVar` and `nomadService`. */
  namespace: string;
  /** A file's text for `file`, or undefined when it does not exist (yet); throws when it is outside the sandbox. */
  readFile(path: string): string | undefined;
  now(): Date;
  variables?: TemplateVariables;
  services?: TemplateServices;
  addresses?(): HostAddress[];
}

/** What one render read and what it could not find. */
export interface RenderTracker {
  /** Dependencies read, as consul-template names them (`nomad.var.block(a@default.global)`, `nomad.service(web)`). */
  used: Set<string>;
  /** Dependencies not there yet: while any is, the render is not written. */
  missing: string[];
}

/** A fresh tracker. */
export function newTracker(): RenderTracker {
  return { used: new Set(), missing: [] };
}

/** Functions that need Consul, Vault or a feature Nomad turns off: allowed by the parser, refused by validation. */
export const UNAVAILABLE_FUNCS: Readonly<Record<string, string>> = {
  ...Object.fromEntries(
    ['key', 'keyExists', 'keyOrDefault', 'ls', 'safeLs', 'tree', 'safeTree', 'node', 'nodes', 'service', 'services', 'connect',
      'caLeaf', 'caRoots', 'datacenters', 'partitions', 'peerings', 'exportedServices', 'namespaces']
      .map((f) => [f, 'needs Consul, which allocrun does not run']),
  ),
  ...Object.fromEntries(['secret', 'secrets', 'pkiCert', 'vaultAgentToken'].map((f) => [f, 'needs Vault, which allocrun does not run'])),
  plugin: "is disabled, as Nomad's default function_denylist disables it",
  writeToFile: "is disabled, as Nomad's default function_denylist disables it",
};

const str = (v: unknown, fn: string, what = 'argument'): string => {
  if (typeof v === 'string') return v;
  throw new Error(`${fn}: ${what} must be a string, got ${typeName(v)}`);
};

/** `name`, `tag.name`, with `?ns=x` and `@region`: consul-template's Nomad service query. */
function parseServiceQuery(q: string): { name: string; tag?: string; namespace?: string } {
  const m = /^(?:([^.?@]+)\.)?([a-zA-Z0-9_-]+)(?:\?ns=([^@]+))?(?:@([\w.-]+))?$/.exec(q);
  if (!m) throw new Error(`nomad.service: invalid format: ${JSON.stringify(q)}`);
  return { name: m[2]!, ...(m[1] && { tag: m[1] }), ...(m[3] && { namespace: m[3] }) };
}

/** `path` or `path@namespace`: a variable query. */
function parseVarQuery(q: string, scope: TemplateScope): { path: string; namespace: string } {
  const at = q.lastIndexOf('@');
  const path = (at >= 0 ? q.slice(0, at) : q).replace(/^\/+|\/+$/g, '');
  const namespace = at >= 0 ? q.slice(at + 1).split('.')[0]! || scope.namespace : scope.namespace;
  return { path, namespace };
}

function contains(needle: unknown, haystack: unknown): boolean {
  switch (kindOf(haystack)) {
    case 'string':
      return (haystack as string).includes(String(needle));
    case 'slice':
      return (haystack as unknown[]).some((e) => e === needle || (typeof e === 'object' && e !== null && String(e) === needle));
    case 'map':
      return mapGet(haystack as Record<string, unknown>, needle) !== undefined;
    case 'invalid':
    case 'nil':
      return false;
    default:
      throw new Error(`contains: cannot look in ${typeName(haystack)}`);
  }
}

function listOf(v: unknown, fn: string): unknown[] {
  if (Array.isArray(v)) return v;
  throw new Error(`${fn}: expected a list, got ${typeName(v)}`);
}

/** A Go RE2 pattern as a JavaScript RegExp (the common syntax is the same; `(?P<name>` is Go's named group). */
function goRegexp(re: string, fn: string): RegExp {
  try {
    return new RegExp(str(re, fn).replace(/\(\?P</g, '(?<'), 'u');
  } catch (err) {
    throw new Error(`${fn}: ${(err as Error).message}`);
  }
}

function toNumber(v: unknown, fn: string): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  throw new Error(`${fn}: cannot use ${typeName(v)} as a number`);
}

/** Deterministic choice of `count` instances for `key` (consul-template's rendezvous `nomadService count key name`). */
function choose<T extends { ID: string }>(items: readonly T[], count: number, key: string): T[] {
  const score = (id: string) => createHash('sha256').update(`${key}\0${id}`).digest('hex');
  return [...items].sort((a, b) => (score(a.ID) < score(b.ID) ? -1 : 1)).slice(0, count);
}

const PRIVATE_V4 = [/^10\./, /^172\.(1[6-9]|2[0-9]|3[01])\./, /^192\.168\./, /^100\.(6[4-9]|[7-9][0-9]|1[01][0-9]|12[0-7])\./];
const isPrivate = (a: HostAddress) => (a.family === 'IPv4' ? PRIVATE_V4.some((re) => re.test(a.address)) : /^f[cd]/i.test(a.address));

/** go-sockaddr's basic template functions over the host's addresses. */
function sockaddrFuncs(scope: TemplateScope): FuncMap {
  const all = () => (scope.addresses?.() ?? []).filter((a) => !a.internal);
  const v4 = () => all().filter((a) => a.family === 'IPv4');
  return {
    GetPrivateIP: fixed(0, () => v4().find(isPrivate)?.address ?? ''),
    GetPrivateIPs: fixed(0, () => all().filter(isPrivate).map((a) => a.address).join(' ')),
    GetPublicIP: fixed(0, () => v4().find((a) => !isPrivate(a))?.address ?? ''),
    GetPublicIPs: fixed(0, () => all().filter((a) => !isPrivate(a)).map((a) => a.address).join(' ')),
    GetInterfaceIP: fixed(1, (name: string) => {
      const found = (scope.addresses?.() ?? []).find((a) => a.iface === name && a.family === 'IPv4');
      if (!found) throw new Error(`unable to find interface ${JSON.stringify(name)}`);
      return found.address;
    }),
    GetInterfaceIPs: fixed(1, (name: string) => (scope.addresses?.() ?? []).filter((a) => a.iface === name).map((a) => a.address).join(' ')),
  };
}

/** The function map of one render: reads through `scope`, records into `tracker`. */
export function consulTemplateFuncs(scope: TemplateScope, tracker: RenderTracker): FuncMap {
  const missing = (dep: string) => {
    tracker.used.add(dep);
    if (!tracker.missing.includes(dep)) tracker.missing.push(dep);
  };
  const unavailable: Record<string, TemplateFunc> = Object.fromEntries(
    Object.entries(UNAVAILABLE_FUNCS).map(([name, why]) => [name, variadic(0, () => { throw new Error(`${name} ${why}`); })]),
  );
  const funcs: Record<string, TemplateFunc> = {
    ...unavailable,
    env: fixed(1, (name: string) => scope.env[str(name, 'env')] ?? ''),
    envOrDefault: fixed(2, (name: string, def: string) => scope.env[str(name, 'envOrDefault')] ?? def),
    file: fixed(1, (path: string) => {
      const dep = `file(${str(path, 'file')})`;
      tracker.used.add(dep);
      const text = scope.readFile(path);
      if (text === undefined) {
        missing(dep);
        return '';
      }
      return text;
    }),
    timestamp: variadic(0, (...args: unknown[]) => {
      if (args.length > 1) throw new Error('timestamp: wrong number of arguments, expected 0 or 1');
      const now = scope.now();
      if (args.length === 0) return formatGoTime(now, RFC3339);
      const layout = str(args[0], 'timestamp');
      return layout === 'unix' ? String(Math.floor(now.getTime() / 1000)) : formatGoTime(now, layout);
    }),
    toJSON: fixed(1, (v: unknown) => goJSON(v)),
    toJSONPretty: fixed(1, (v: unknown) => goJSON(v, '  ')),
    parseJSON: fixed(1, (s: string) => {
      if (str(s, 'parseJSON') === '') return {};
      try {
        return JSON.parse(s) as unknown;
      } catch (err) {
        throw new Error(`parseJSON: ${(err as Error).message}`);
      }
    }),
    parseInt: fixed(1, (s: string) => {
      const t = str(s, 'parseInt').trim();
      if (!/^[+-]?[0-9]+$/.test(t)) throw new Error(`parseInt: strconv.ParseInt: parsing ${JSON.stringify(s)}: invalid syntax`);
      return Number(t);
    }),
    parseFloat: fixed(1, (s: string) => {
      const t = str(s, 'parseFloat').trim();
      if (t === '' || !Number.isFinite(Number(t))) throw new Error(`parseFloat: strconv.ParseFloat: parsing ${JSON.stringify(s)}: invalid syntax`);
      return Number(t);
    }),
    parseBool: fixed(1, (s: string) => {
      const t = str(s, 'parseBool');
      if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(t)) return true;
      if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(t)) return false;
      throw new Error(`parseBool: strconv.ParseBool: parsing ${JSON.stringify(s)}: invalid syntax`);
    }),
    split: fixed(2, (sep: string, s: string) => (str(s, 'split') === '' ? [] : s.split(str(sep, 'split')))),
    join: fixed(2, (sep: string, list: unknown) => {
      if (!Array.isArray(list)) throw new Error(`join: expected a list, got ${typeName(list)}`);
      return list.map((e) => (typeof e === 'string' ? e : sprint([e]))).join(str(sep, 'join'));
    }),
    replaceAll: fixed(3, (from: string, to: string, s: string) => str(s, 'replaceAll').split(str(from, 'replaceAll')).join(str(to, 'replaceAll'))),
    toLower: fixed(1, (s: string) => str(s, 'toLower').toLowerCase()),
    toUpper: fixed(1, (s: string) => str(s, 'toUpper').toUpperCase()),
    toTitle: fixed(1, (s: string) => str(s, 'toTitle').replace(/(^|[^\p{L}\p{N}])(\p{Ll})/gu, (_m, a: string, b: string) => a + b.toUpperCase())),
    trimSpace: fixed(1, (s: string) => str(s, 'trimSpace').replace(/^[\s]+|[\s]+$/g, '')),
    contains: fixed(2, contains),
    containsAll: fixed(2, (needles: unknown, haystack: unknown) => listOf(needles, 'containsAll').every((n) => contains(n, haystack))),
    containsAny: fixed(2, (needles: unknown, haystack: unknown) => listOf(needles, 'containsAny').some((n) => contains(n, haystack))),
    containsNone: fixed(2, (needles: unknown, haystack: unknown) => !listOf(needles, 'containsNone').some((n) => contains(n, haystack))),
    containsNotAll: fixed(2, (needles: unknown, haystack: unknown) => !listOf(needles, 'containsNotAll').every((n) => contains(n, haystack))),
    trimPrefix: fixed(2, (prefix: string, s: string) => (str(s, 'trimPrefix').startsWith(str(prefix, 'trimPrefix')) ? s.slice(prefix.length) : s)),
    trimSuffix: fixed(2, (suffix: string, s: string) => (str(s, 'trimSuffix').endsWith(str(suffix, 'trimSuffix')) && suffix !== '' ? s.slice(0, -suffix.length) : s)),
    indent: fixed(2, (spaces: unknown, s: string) => {
      if (typeof spaces !== 'number' || !Number.isInteger(spaces) || spaces < 0) throw new Error('indent: the number of spaces must be a whole number, 0 or more');
      return str(s, 'indent').split('\n').map((line) => ' '.repeat(spaces) + line).join('\n');
    }),
    regexMatch: fixed(2, (re: string, s: string) => goRegexp(re, 'regexMatch').test(str(s, 'regexMatch'))),
    regexReplaceAll: fixed(3, (re: string, replacement: string, s: string) =>
      str(s, 'regexReplaceAll').replace(new RegExp(goRegexp(re, 'regexReplaceAll').source, 'gu'), str(replacement, 'regexReplaceAll').replace(/\$\{(\w+)\}/g, '$$$1'))),
    toYAML: fixed(1, (v: unknown) => stringifyYaml(JSON.parse(goJSON(v)), { sortMapEntries: true }).replace(/\n$/, '')),
    parseYAML: fixed(1, (s: string) => {
      try {
        return parseYamlText(str(s, 'parseYAML')) as unknown;
      } catch (err) {
        throw new Error(`parseYAML: ${(err as Error).message}`);
      }
    }),
    byTag: fixed(1, (list: unknown) => {
      const out: Record<string, unknown[]> = {};
      for (const item of listOf(list, 'byTag')) {
        const tags = (item as { Tags?: unknown }).Tags;
        if (!Array.isArray(tags)) throw new Error(`byTag: ${typeName(item)} has no Tags`);
        for (const tag of tags) (out[String(tag)] ??= []).push(item);
      }
      return out;
    }),
    in: fixed(2, (haystack: unknown, needle: unknown) => contains(needle, haystack)),
    base64Encode: fixed(1, (s: string) => Buffer.from(str(s, 'base64Encode')).toString('base64')),
    base64Decode: fixed(1, (s: string) => Buffer.from(str(s, 'base64Decode'), 'base64').toString('utf8')),
    sha256Hex: fixed(1, (s: string) => createHash('sha256').update(str(s, 'sha256Hex')).digest('hex')),
    md5sum: fixed(1, (s: string) => createHash('md5').update(str(s, 'md5sum')).digest('hex')),
    add: fixed(2, (b: unknown, a: unknown) => toNumber(a, 'add') + toNumber(b, 'add')),
    subtract: fixed(2, (b: unknown, a: unknown) => toNumber(a, 'subtract') - toNumber(b, 'subtract')),
    multiply: fixed(2, (b: unknown, a: unknown) => toNumber(a, 'multiply') * toNumber(b, 'multiply')),
    divide: fixed(2, (b: unknown, a: unknown) => {
      if (toNumber(b, 'divide') === 0) throw new Error('divide: division by 0');
      const q = toNumber(a, 'divide') / toNumber(b, 'divide');
      return Number.isInteger(toNumber(a, 'divide')) && Number.isInteger(toNumber(b, 'divide')) ? Math.trunc(q) : q;
    }),
    modulo: fixed(2, (b: unknown, a: unknown) => {
      if (toNumber(b, 'modulo') === 0) throw new Error('modulo: division by 0');
      return toNumber(a, 'modulo') % toNumber(b, 'modulo');
    }),
    sockaddr: variadic(1, (...args: unknown[]) => {
      const text = args.map((a) => String(a)).join(' ');
      return renderTemplate(`{{ ${text} }}`, undefined, { name: 'sockaddr', funcs: sockaddrFuncs(scope) });
    }),
    nomadService: variadic(1, (...args: unknown[]) => {
      if (args.length !== 1 && args.length !== 3) throw new Error(`nomadService: expected 1 or 3 arguments, got ${args.length}`);
      const query = parseServiceQuery(str(args[args.length - 1], 'nomadService'));
      tracker.used.add(`nomad.service(${query.name})`);
      let found = (scope.services?.list(query.name, query.namespace ?? scope.namespace) ?? []).filter((s) => !query.tag || s.Tags.includes(query.tag));
      if (args.length === 3) found = choose(found, Number(args[0]), String(args[1]));
      return found.map((s) => new NomadService(s));
    }),
    nomadServices: variadic(0, (...args: unknown[]) => {
      const ns = args.length > 0 ? /\?ns=([^@]+)/.exec(str(args[0], 'nomadServices'))?.[1] : undefined;
      tracker.used.add('nomad.services');
      const lists = scope.services?.names(ns ?? scope.namespace) ?? [];
      return lists.flatMap((l) => l.Services.map((s) => new NomadServicesSnippet(s.ServiceName, [...s.Tags].sort())));
    }),
    nomadVar: fixed(1, (q: string) => {
      const { path, namespace } = parseVarQuery(str(q, 'nomadVar'), scope);
      const dep = `nomad.var.block(${path}@${namespace}.global)`;
      tracker.used.add(dep);
      const v = scope.variables?.get(path, namespace);
      if (!v) {
        missing(dep);
        return undefined;
      }
      return new NomadVariable(v).Items;
    }),
    nomadVarExists: fixed(1, (q: string) => {
      const { path, namespace } = parseVarQuery(str(q, 'nomadVarExists'), scope);
      tracker.used.add(`nomad.var.get(${path}@${namespace}.global)`);
      return scope.variables?.get(path, namespace) !== undefined;
    }),
    nomadVarList: variadic(0, (...args: unknown[]) => {
      const { path, namespace } = parseVarQuery(args.length > 0 ? str(args[0], 'nomadVarList') : '', scope);
      tracker.used.add(`nomad.var.list(${path}@${namespace}.global)`);
      return (scope.variables?.list(path, namespace) ?? []).map((v) => new NomadVarMeta(v));
    }),
  };
  return funcs;
}
