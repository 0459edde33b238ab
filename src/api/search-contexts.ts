/**
 * What Nomad's search endpoints (nomad/search_endpoint.go) search, read from this agent's state: the contexts a
 * request may name, each context's objects (ID and namespace) in the order Nomad's state store iterates them,
 * each context's table index, and Nomad's rule for a prefix of a UUID. Shared by the prefix and fuzzy searches.
 */
import type { ApiContext } from './context.ts';
import { hasDeployment } from './routes/deployments.ts';
import { namespacesOf } from './routes/cluster.ts';
import { deploymentId } from './deployment-id.ts';
import { deploymentsIndex } from './routes/deployments.ts';
import { nodeRegistration } from './node.ts';
import { nodePools, nodePoolsIndex } from './node-pools.ts';
import { policiesOfJob } from './scaling-policies.ts';
import { variablesOf } from '../variables/variable-store.ts';

/**
 * The contexts of Nomad's open-source server (1.6 on, node pools included), in its order (`ossContexts`): what
 * `all` expands to and what the refusal of any other names. This agent has no CSI plugins or volumes: those two answer none.
 */
export const SEARCH_CONTEXTS = ['allocs', 'jobs', 'nodes', 'node_pools', 'evals', 'deployment', 'plugins', 'volumes', 'scaling_policy', 'vars', 'namespaces'] as const;
export type SearchContext = (typeof SEARCH_CONTEXTS)[number];

/** The contexts whose IDs are UUIDs: Nomad's state store indexes them as bytes, so a prefix must be hex. */
const UUID_CONTEXTS: ReadonlySet<SearchContext> = new Set(['allocs', 'nodes', 'evals', 'deployment']);

/** Nomad's refusal of a context it does not know, in its words (Go's `%v` of the list, `%q` of the context). */
export function unknownContextMessage(context: string): string {
  return `context must be one of [${SEARCH_CONTEXTS.join(' ')}] or 'all' for all contexts; got ${JSON.stringify(context)}`;
}

/** `all` as every context, one context as itself; undefined for a context Nomad does not know. */
export function expandContext(context: string): SearchContext[] | undefined {
  if (context === 'all') return [...SEARCH_CONTEXTS];
  return (SEARCH_CONTEXTS as readonly string[]).includes(context) ? [context as SearchContext] : undefined;
}

/**
 * Whether Nomad's state store can look `prefix` up in a UUID context. It rounds an odd-length prefix (hyphens not
 * counted) down to even, then decodes it as hex bytes: longer than a UUID, more than four hyphens or a non-hex
 * digit fails, and Nomad leaves the context out of the answer (no key) rather than answering an error, since a
 * job's name is searched in every context. A single non-hex character rounds down to nothing, which is valid.
 */
export function uuidPrefixSearchable(prefix: string): boolean {
  const hyphens = prefix.split('-').length - 1;
  const rounded = (prefix.length - hyphens) % 2 === 0 ? prefix : prefix.slice(0, -1);
  if (rounded.length > 36 || hyphens > 4) return false;
  return /^[0-9a-fA-F]*$/.test(rounded.replaceAll('-', ''));
}

/** Whether `context`'s objects can be looked up by `prefix` at all (see uuidPrefixSearchable). */
export function prefixSearchable(context: SearchContext, prefix: string): boolean {
  return !UUID_CONTEXTS.has(context) || uuidPrefixSearchable(prefix);
}

/** One searchable object: its ID (a namespace's name, a variable's path) and the namespace it lives in. */
export interface Searchable {
  id: string;
  namespace?: string;
}

const byId = (a: Searchable, b: Searchable) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const byNamespaceThenId = (a: Searchable, b: Searchable) => ((a.namespace ?? '') < (b.namespace ?? '') ? -1 : (a.namespace ?? '') > (b.namespace ?? '') ? 1 : byId(a, b));

/** Whether an object of `namespace` is in a request's namespace (`*`: every one). */
export const inNamespace = (requested: string, namespace: string | undefined): boolean => requested === '*' || namespace === undefined || namespace === requested;

/**
 * The objects of `context` in `namespace` (`*` for all; nodes and namespaces belong to none), in the order
 * Nomad's state store iterates them: jobs, variables by namespace then ID, UUID tables and policies by ID.
 */
export function objectsOf(ctx: ApiContext, context: SearchContext, namespace: string): Searchable[] {
  const { registry } = ctx;
  const pick = (items: Searchable[], order: (a: Searchable, b: Searchable) => number) => items.filter((i) => inNamespace(namespace, i.namespace)).sort(order);
  switch (context) {
    case 'jobs':
      return pick(registry.listJobs().map((j) => ({ id: j.id, namespace: j.namespace })), byNamespaceThenId);
    case 'allocs':
      return pick(registry.listAllocs().map((a) => ({ id: a.id, namespace: a.namespace })), byId);
    case 'evals':
      return pick(registry.listEvals().map((e) => ({ id: e.ID, namespace: e.Namespace })), byId);
    case 'deployment':
      return pick(registry.listJobs().flatMap((j) => j.versions.filter((v) => hasDeployment(j, v)).map((v) => ({ id: deploymentId(j, v.version), namespace: j.namespace }))), byId);
    case 'scaling_policy':
      return pick(registry.listJobs().flatMap(policiesOfJob).map((p) => ({ id: p.ID, namespace: String(p.Target['Namespace']) })), byId);
    case 'vars':
      return variablesOf(ctx.store).list('', namespace).map((v) => ({ id: v.Path, namespace: v.Namespace }));
    case 'nodes':
      return [{ id: registry.node.id }];
    case 'node_pools':
      return poolsOf(ctx).map((p) => ({ id: p.name }));
    case 'namespaces':
      return namespacesOf(registry).map((n) => ({ id: String(n['Name']) })).sort(byId);
    case 'plugins':
    case 'volumes':
      return [];
  }
}

/** The node pools that exist (node-pools.ts: the built-ins and the node's own), sorted by name. */
const poolsOf = (ctx: ApiContext) => nodePools(ctx.registry.node.pool, nodeRegistration(ctx).createIndex);

/** The index of `context`'s table, as Nomad's `contextToIndex` picks it (0 for a table this agent has none of). */
export function contextIndex(ctx: ApiContext, context: SearchContext): number {
  const { registry } = ctx;
  switch (context) {
    case 'jobs':
    case 'namespaces':
    case 'scaling_policy':
      return registry.jobsIndex;
    case 'allocs':
      return registry.allocsIndex;
    case 'evals':
      return registry.evalsIndex;
    case 'deployment':
      return deploymentsIndex(ctx);
    case 'vars':
      return variablesOf(ctx.store).tableIndex;
    case 'nodes': {
      const r = nodeRegistration(ctx);
      return Math.max(r.createIndex, r.modifyIndex ?? 0);
    }
    case 'node_pools':
      return nodePoolsIndex(poolsOf(ctx));
    case 'plugins':
    case 'volumes':
      return 0;
  }
}

/** The answer's index: the newest of the searched contexts' tables, as Nomad sets it (at least 1, as every index here). */
export function searchIndex(ctx: ApiContext, contexts: readonly SearchContext[]): number {
  return Math.max(1, ...contexts.map((c) => contextIndex(ctx, c)));
}
