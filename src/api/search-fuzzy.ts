/**
 * Nomad's fuzzy search (`Search.FuzzySearch`, the web UI's search box): names that contain the text, ignoring
 * case. Jobs expand into their groups, tasks, services and drivers' commands, images and classes, each with its
 * Scope (the namespace, then the IDs of its parents); allocations, nodes, node pools, namespaces and variables match by name
 * or path; evaluations, deployments and scaling policies, which have no names, match by ID prefix. The limits
 * are Nomad's defaults (its `search` block): at most 20 objects read per context, 100 results per context.
 */
import type { ApiContext } from './context.ts';
import { allocName } from './alloc-json.ts';
import { taskGroupsOf, type Json } from './job-json.ts';
import { inNamespace, objectsOf, searchIndex, type SearchContext } from './search-contexts.ts';
import { PREFIX_LIMIT } from './search-prefix.ts';

/** Nomad's `search` defaults: `min_term_length`, `limit_query`, `limit_results`. */
export const FUZZY_MIN_TERM_LENGTH = 2;
export const FUZZY_LIMIT_QUERY = 20;
export const FUZZY_LIMIT_RESULTS = 100;

/** Nomad's `FuzzyMatch`: Scope is left out when the object has no parent (a namespace). */
export interface FuzzyMatch {
  ID: string;
  Scope?: string[];
}

/** Nomad's `FuzzySearchResponse` without its query meta. */
export interface FuzzySearchResult {
  Matches: Record<string, FuzzyMatch[]>;
  Truncations: Record<string, boolean>;
  Index: number;
}

/** Nomad's refusal of a text under the minimum length, in its words (the length in bytes, as Go's len). */
export function fuzzyTextRefusal(text: string): string | undefined {
  const n = Buffer.byteLength(text, 'utf8');
  return n < FUZZY_MIN_TERM_LENGTH ? `fuzzy search query must be at least ${FUZZY_MIN_TERM_LENGTH} characters, got ${n}` : undefined;
}

/** A match with its score: where in the name the text starts (earlier is better). */
interface Scored {
  id: string;
  scope?: string[];
  score: number;
}

/** The contexts matched by ID prefix, not by name: their objects have none. */
const BY_PREFIX: ReadonlySet<SearchContext> = new Set(['evals', 'deployment', 'scaling_policy', 'volumes']);

/** Nomad's order of one context's matches: earliest match first, then the shorter name, then alphabetically. */
function byScore(a: Scored, b: Scored): number {
  return a.score - b.score || a.id.length - b.id.length || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** A name's match of the (lower-case) text: its position, or undefined. */
function scored(name: unknown, text: string, scope: string[] | undefined): [Scored] | [] {
  if (typeof name !== 'string') return [];
  const at = name.toLowerCase().indexOf(text);
  return at < 0 ? [] : [{ id: name, score: at, ...(scope && { scope }) }];
}

/** The driver config field Nomad searches per driver, and the context it answers in. */
const DRIVER_FIELDS: Readonly<Record<string, readonly [field: string, context: string]>> = {
  docker: ['image', 'images'],
  exec: ['command', 'commands'],
  raw_exec: ['command', 'commands'],
  java: ['class', 'classes'],
};

/** Every match of `text` in one job (its current version): per context, in the job's order. */
function jobMatches(id: string, job: Json, namespace: string, text: string): [string, Scored][] {
  const out: [string, Scored][] = [];
  const add = (context: string, found: [Scored] | []) => {
    for (const m of found) out.push([context, m]);
  };
  add('jobs', scored(job['Name'] ?? id, text, [namespace, id]));
  for (const g of taskGroupsOf(job)) {
    const group = String(g['Name']);
    add('groups', scored(group, text, [namespace, id]));
    for (const s of (g['Services'] as Json[] | null | undefined) ?? []) add('services', scored(s['Name'], text, [namespace, id, group]));
    for (const t of (g['Tasks'] as Json[] | null | undefined) ?? []) {
      const task = String(t['Name']);
      add('tasks', scored(task, text, [namespace, id, group]));
      for (const s of (t['Services'] as Json[] | null | undefined) ?? []) add('services', scored(s['Name'], text, [namespace, id, group, task]));
      const driver = DRIVER_FIELDS[String(t['Driver'])];
      if (driver) add(driver[1], scored((t['Config'] as Json | null | undefined)?.[driver[0]], text, [namespace, id, group, task]));
    }
  }
  return out;
}

/** The matches of one named object of `context` (not a job): its name and scope as Nomad gives them. */
function singleMatches(ctx: ApiContext, context: SearchContext, namespace: string, text: string): (() => [string, Scored][])[] {
  const { registry } = ctx;
  const one = (name: unknown, scope: string[] | undefined) => () => scored(name, text, scope).map((m): [string, Scored] => [context, m]);
  switch (context) {
    case 'allocs':
      return [...registry.listAllocs()].filter((a) => inNamespace(namespace, a.namespace)).sort((a, b) => (a.id < b.id ? -1 : 1)).map((a) => one(allocName(a), [a.namespace, a.id]));
    case 'nodes':
      return [one(registry.node.name, [registry.node.id])];
    case 'node_pools':
      return objectsOf(ctx, context, namespace).map((p) => one(p.id, [p.id]));
    case 'namespaces':
      return objectsOf(ctx, context, namespace).map((n) => one(n.id, undefined));
    case 'vars':
      return objectsOf(ctx, context, namespace).map((v) => one(v.id, [v.namespace!, v.id]));
    default:
      return [];
  }
}

/**
 * The fuzzy matches of `text` in `contexts` (already expanded from `all`), in `namespace` (`*`: all). Each context
 * reads at most FUZZY_LIMIT_QUERY objects and keeps at most FUZZY_LIMIT_RESULTS matches, in the order read, then
 * sorts them; either limit reached marks the contexts it cut truncated. Nomad marks the contexts the last object
 * read matched when more objects were left (its limit is on objects read, not matches found), and so does this.
 */
export function fuzzySearch(ctx: ApiContext, text: string, contexts: readonly SearchContext[], namespace: string): FuzzySearchResult {
  const lower = text.toLowerCase();
  const found = new Map<string, Scored[]>();
  const Truncations: Record<string, boolean> = {};
  const Matches: Record<string, FuzzyMatch[]> = {};
  for (const context of contexts) {
    if (BY_PREFIX.has(context)) {
      const ids = objectsOf(ctx, context, namespace).filter((o) => o.id.startsWith(text)).map((o) => o.id);
      Matches[context] = ids.slice(0, PREFIX_LIMIT).map((ID) => ({ ID }));
      Truncations[context] = ids.length > PREFIX_LIMIT;
      continue;
    }
    // Every other context is read object by object; its key is in Truncations even when nothing matched.
    Truncations[context] = false;
    const objects: (() => [string, Scored][])[] = context === 'jobs'
      ? objectsOf(ctx, 'jobs', namespace).map((o) => () => {
        const entry = ctx.registry.getJob(o.id);
        return entry ? jobMatches(entry.id, entry.versions.at(-1)!.job, entry.namespace, lower) : [];
      })
      : singleMatches(ctx, context, namespace, lower);
    const read = Math.min(objects.length, FUZZY_LIMIT_QUERY);
    for (let i = 0; i < read; i++) {
      const limited = i === FUZZY_LIMIT_QUERY - 1 && objects.length > FUZZY_LIMIT_QUERY;
      for (const [c, m] of objects[i]!()) {
        const kept = found.get(c) ?? [];
        found.set(c, kept);
        if (kept.length < FUZZY_LIMIT_RESULTS) kept.push(m);
        else Truncations[c] = true;
        if (limited) Truncations[c] = true;
      }
    }
  }
  for (const [c, ms] of found) Matches[c] = ms.sort(byScore).map((m) => ({ ID: m.id, ...(m.scope && { Scope: m.scope }) }));
  return { Matches, Truncations, Index: searchIndex(ctx, contexts) };
}
