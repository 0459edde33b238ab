/**
 * Nomad's node pool endpoints (command/agent/node_pool_endpoint.go over nomad/node_pool_endpoint.go) on one node:
 * the pools that exist (node-pools.ts), one pool, its jobs and its nodes. Pools are not created, changed or deleted
 * here: the built-ins never are (Nomad's refusal), and a pool exists because the node registered in it, so writes
 * are refused saying so rather than accepted and lost.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { blockingQuery, HttpError, type ApiContext } from '../context.ts';
import { nodeContextOf, nodeRegistration, nodeStubJson } from '../node.ts';
import { isBuiltinPool, jobNodePool, nodeInPool, nodePoolJson, nodePools, nodePoolsIndex } from '../node-pools.ts';
import { blockingQuery as blockingQuerySchema, queryBool } from '../schemas.ts';

const nameParams = z.object({ name: z.string().min(1) });
const nodesQuery = blockingQuerySchema.extend({ os: queryBool });

/** What a write is told: how pools come to exist on this agent. */
const WRITES_REFUSED = "allocrun does not create, update or delete node pools: the pools are the built-in 'all' and 'default' and the agent's node's own (start the agent with --node-pool NAME to put its node, and so the pool, in NAME)";

/** Registers the node pool routes. */
export function nodePoolRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { registry } = ctx;
  const pools = () => nodePools(registry.node.pool, nodeRegistration(ctx).createIndex);
  const poolNamed = (name: string) => pools().find((p) => p.name === name);
  const nodeIndex = () => Math.max(nodeRegistration(ctx).createIndex, nodeRegistration(ctx).modifyIndex ?? 0);

  app.get('/v1/node/pools', { schema: { querystring: blockingQuerySchema } }, async (req, reply) => {
    await blockingQuery(ctx, req, reply, () => nodePoolsIndex(pools()));
    const prefix = (req.query as z.output<typeof blockingQuerySchema>).prefix ?? '';
    return pools().filter((p) => p.name.startsWith(prefix)).map(nodePoolJson);
  });

  app.get('/v1/node/pool/:name', { schema: { params: nameParams, querystring: blockingQuerySchema } }, async (req, reply) => {
    const { name } = req.params as { name: string };
    await blockingQuery(ctx, req, reply, () => poolNamed(name)?.createIndex ?? nodePoolsIndex(pools()));
    const pool = poolNamed(name);
    if (!pool) throw new HttpError(404, 'node pool not found');
    return nodePoolJson(pool);
  });

  // The jobs whose NodePool is this pool (a job that names none is in `default`); none for a pool that does not exist.
  app.get('/v1/node/pool/:name/jobs', { schema: { params: nameParams, querystring: blockingQuerySchema } }, async (req, reply) => {
    const { name } = req.params as { name: string };
    await blockingQuery(ctx, req, reply, () => Math.max(registry.jobsIndex, registry.summaryIndex));
    if (!poolNamed(name)) return [];
    return registry.listJobs().filter((j) => jobNodePool(j.versions.at(-1)!.job) === name).map((j) => registry.jobStubJson(j));
  });

  // The node when it is in the pool (`all` holds it); Nomad refuses a prefix here, which could mean the pool or the node.
  app.get('/v1/node/pool/:name/nodes', { schema: { params: nameParams, querystring: nodesQuery } }, async (req, reply) => {
    const { name } = req.params as { name: string };
    const q = req.query as z.output<typeof nodesQuery>;
    if (q.prefix !== undefined && q.prefix !== '') throw new HttpError(400, 'prefix argument not allowed');
    await blockingQuery(ctx, req, reply, nodeIndex);
    if (!poolNamed(name) || !nodeInPool(registry.node.pool, name)) return [];
    return [nodeStubJson(nodeContextOf(ctx), nodeIndex(), q.os)];
  });

  // The built-ins are refused in Nomad's words (its upsert's, its state store's delete's); any other write as not built.
  const refuseWrite = (name: string | undefined, verb = 'modifying') => {
    if (name !== undefined && isBuiltinPool(name)) throw new HttpError(400, `${verb} ${verb === 'modifying' ? '' : 'built-in '}node pool ${JSON.stringify(name)} is not allowed`);
    throw new HttpError(405, WRITES_REFUSED);
  };
  const bodyName = (body: unknown) => {
    const name = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)['Name'] : undefined;
    return typeof name === 'string' ? name : undefined;
  };
  app.route({ method: ['PUT', 'POST'], url: '/v1/node/pools', handler: async (req) => refuseWrite(bodyName(req.body)) });
  app.route({ method: ['PUT', 'POST'], url: '/v1/node/pool/:name', schema: { params: nameParams }, handler: async (req) => refuseWrite((req.params as { name: string }).name) });
  app.delete('/v1/node/pool/:name', { schema: { params: nameParams } }, async (req) => refuseWrite((req.params as { name: string }).name, 'deleting'));
}
