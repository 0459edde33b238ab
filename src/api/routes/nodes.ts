/**
 * Nomad's node endpoints on one node: the agent itself as the cluster's only client node (`/v1/nodes`,
 * `/v1/node/:id`, its allocations) and its host figures (`/v1/client/stats`).
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { blockingQuery, HttpError, type ApiContext } from '../context.ts';
import { nodeContextOf, nodeJson, nodeRegistration, nodeStubJson, type NodeContext } from '../node.ts';
import { blockingQuery as blockingQuerySchema, queryBool } from '../schemas.ts';

const idParams = z.object({ id: z.string().min(1) });
const nodesQuery = blockingQuerySchema.extend({ os: queryBool });
const clientStatsQuery = z.looseObject({ node_id: z.string().optional() });

/** Registers the node routes. */
export function nodeRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const reg = () => nodeRegistration(ctx);
  const nodeCtx = (): NodeContext => nodeContextOf(ctx);
  // The node changes when it registers and when its dynamic meta does (routes/node-meta.ts).
  const nodeIndex = () => Math.max(reg().createIndex, reg().modifyIndex ?? 0);
  const ours = (id: string) => {
    if (id !== ctx.registry.node.id) throw new HttpError(404, 'node not found');
  };
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
