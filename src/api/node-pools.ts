/**
 * Nomad's node pools on one node (nomad/structs/node_pool.go): the built-in `all` (every node) and `default` (nodes
 * that name none), and the pool the agent's node registers in (`allocrun agent --node-pool`), which exists because
 * a node registered in it, as Nomad's client registration creates a pool it names. A job names one pool
 * (`node_pool`, default `default`): a pool that does not exist refuses the job at registration, plan and
 * validation; a pool the node is not in places nothing; `all` places on the node.
 */
import { jobNodePool } from '../jobspec/constraints.ts';
import { HttpError } from './context.ts';
import type { Json } from './job-json.ts';

export { jobNodePool, nodeInPool } from '../jobspec/constraints.ts';

/** Nomad's built-in pools and their descriptions. */
export const NODE_POOL_ALL = 'all';
export const NODE_POOL_DEFAULT = 'default';
const BUILTIN_DESCRIPTIONS: Readonly<Record<string, string>> = {
  [NODE_POOL_ALL]: 'Node pool with all nodes in the cluster.',
  [NODE_POOL_DEFAULT]: 'Default node pool.',
};

/** Whether `name` is `all` or `default` (an own key: `__proto__` or `toString` is no pool). */
export const isBuiltinPool = (name: string): boolean => Object.hasOwn(BUILTIN_DESCRIPTIONS, name);

/** Nomad's validNodePoolName. */
const VALID_NAME = /^[a-zA-Z0-9-_]{1,128}$/;

/** Why `name` cannot name a node's pool (Nomad's agent checks at start), or undefined when it can. */
export function nodePoolNameProblem(name: string): string | undefined {
  if (!VALID_NAME.test(name)) return `invalid name ${JSON.stringify(name)}, must match regex ${VALID_NAME.source}`;
  if (name === NODE_POOL_ALL) return `node is not allowed to register in node pool ${JSON.stringify(NODE_POOL_ALL)}`;
  return undefined;
}

/** A pool as the API lists it, with the index it was created at (built-ins at 1, the node's at its registration). */
export interface NodePool {
  name: string;
  description: string;
  createIndex: number;
}

/** The pools that exist, sorted by name as Nomad's state store iterates them: the built-ins and the node's. */
export function nodePools(nodePool: string, nodeCreateIndex: number): NodePool[] {
  const pools = Object.entries(BUILTIN_DESCRIPTIONS).map(([name, description]) => ({ name, description, createIndex: 1 }));
  if (!isBuiltinPool(nodePool)) pools.push({ name: nodePool, description: '', createIndex: nodeCreateIndex });
  return pools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The index of the pools "table": its newest pool's creation (no pool is ever changed here). */
export function nodePoolsIndex(pools: readonly NodePool[]): number {
  return Math.max(1, ...pools.map((p) => p.createIndex));
}

/** Nomad's api.NodePool JSON. */
export function nodePoolJson(pool: NodePool): Json {
  return { Name: pool.name, Description: pool.description, Meta: null, SchedulerConfiguration: null, CreateIndex: pool.createIndex, ModifyIndex: pool.createIndex };
}

/**
 * Nomad's node pool admission check (jobNodePoolValidatingHook), in its words: the job's pool must exist. Undefined
 * when it does.
 */
export function nodePoolAdmissionError(job: Record<string, unknown>, nodePool: string): string | undefined {
  const pool = jobNodePool(job);
  if (isBuiltinPool(pool) || pool === nodePool) return undefined;
  return `job ${JSON.stringify(String(job['ID'] ?? ''))} is in nonexistent node pool ${JSON.stringify(pool)}`;
}

/** Refuses (400, Nomad's words) a job whose node pool does not exist: registration, plan and validation call it. */
export function refuseNonexistentNodePool(job: Record<string, unknown>, node: { pool: string }): void {
  const why = nodePoolAdmissionError(job, node.pool);
  if (why) throw new HttpError(400, why);
}
