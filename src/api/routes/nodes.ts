/**
 * Nomad's node endpoints on one node: the agent itself as the cluster's only client node (`/v1/nodes`,
 * `/v1/node/:id`, its allocations) and its host figures (`/v1/client/stats`).
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { BUILTIN_DRIVER_CHECKS } from '../../drivers/config-checks.ts';
import { blockingQuery, HttpError, type ApiContext } from '../context.ts';
import { HostStats, nodeJson, nodeStubJson, type NodeContext } from '../node.ts';
import { blockingQuery as blockingQuerySchema, queryBool } from '../schemas.ts';

const idParams = z.object({ id: z.string().min(1) });
const nodesQuery = blockingQuerySchema.extend({ os: queryBool });
const clientStatsQuery = z.looseObject({ node_id: z.string().optional() });

/** When and at which index each served context's node registered (the first API built on it). */
const registered = new WeakMap<ApiContext, { startedAt: number; createIndex: number; stats: HostStats }>();

/** Registers the node routes. */
export function nodeRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const reg = () => {
    let r = registered.get(ctx);
    if (!r) registered.set(ctx, (r = { startedAt: Date.now(), createIndex: Math.max(1, ctx.index.current), stats: new HostStats(ctx.dataDir) }));
    return r;
  };
  const nodeCtx = (): NodeContext => ({ node: ctx.registry.node, dataDir: ctx.dataDir, address: ctx.address, version: ctx.version, drivers: Object.keys(BUILTIN_DRIVER_CHECKS), ...reg() });
  // The node itself changes only when it registers: its index is its create index.
  const nodeIndex = () => reg().createIndex;
  const ours = (id: string) => {
    if (id !== ctx.registry.node.id) throw new HttpError(404, 'node not found');
  };
  // Registered now: the node's start is the agent's, not the first read's.
  reg();

  app.get('/v1/nodes', { schema: { querystring: nodesQuery } }, async (req, reply) => {
    await blockingQuery(ctx, req, reply, nodeIndex);
    const q = req.query as z.output<typeof nodesQuery>;
    const node = nodeStubJson(nodeCtx(), nodeIndex(), q.os);
    return String(node['ID']).startsWith(q.prefix ?? '') ? [node] : [];
  });

  app.get('/v1/node/:id', { schema: { params: idParams, querystring: blockingQuerySchema } }, async (req, reply) => {
    ours((req.params as { id: string }).id);
    await blockingQuery(ctx, req, reply, nodeIndex);
    return nodeJson(nodeCtx(), nodeIndex());
  });

  app.get('/v1/node/:id/allocations', { schema: { params: idParams, querystring: blockingQuerySchema } }, async (req, reply) => {
    ours((req.params as { id: string }).id);
    await blockingQuery(ctx, req, reply, () => ctx.registry.allocsIndex);
    return ctx.registry.listAllocs().map((a) => ctx.registry.allocJson(a));
  });

  app.get('/v1/client/stats', { schema: { querystring: clientStatsQuery } }, async (req) => {
    const { node_id: nodeId } = req.query as z.output<typeof clientStatsQuery>;
    if (nodeId !== undefined && nodeId !== '') ours(nodeId);
    return reg().stats.sample();
  });
}
