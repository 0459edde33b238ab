/** Nomad's allocation endpoints: list, read, stop. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { blockingQuery, notFound, type ApiContext } from '../context.ts';
import type { AllocEntry } from '../job-registry.ts';
import { blockingList, ListCache, StubMemo } from '../list-cache.ts';
import { blockingQuery as blockingQuerySchema } from '../schemas.ts';

const idParams = z.object({ id: z.string().min(1) });

/** The allocation a request's `:id` names (full ID or unique prefix), or a 404. */
export function allocOf(ctx: ApiContext, params: unknown): AllocEntry {
  const alloc = ctx.registry.findAlloc((params as { id: string }).id);
  if (!alloc) throw notFound('alloc');
  return alloc;
}

/** Registers the allocation routes. */
export function allocationRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { registry } = ctx;
  const lists = new ListCache();
  const stubs = new StubMemo((a: AllocEntry) => registry.allocStubJson(a));

  app.get('/v1/allocations', { schema: { querystring: blockingQuerySchema } }, async (req, reply) => {
    return blockingList(ctx, lists, req, reply, 'allocs', () => registry.allocsIndex, () => registry.listAllocs().map((a) => stubs.of(a, a.modifyIndex)));
  });

  app.get('/v1/allocation/:id', { schema: { params: idParams, querystring: blockingQuerySchema } }, async (req, reply) => {
    const alloc = allocOf(ctx, req.params);
    await blockingQuery(ctx, req, reply, () => alloc.modifyIndex);
    return registry.allocJson(alloc);
  });

  app.route({
    method: ['PUT', 'POST'],
    url: '/v1/allocation/:id/stop',
    schema: { params: idParams },
    handler: async (req) => {
      const alloc = allocOf(ctx, req.params);
      const { index, evalId } = await registry.serialize(alloc.jobId, () => registry.stopAllocation(alloc));
      return { EvalID: evalId, Index: index };
    },
  });
}
