/**
 * Nomad's garbage collection endpoints: `PUT /v1/client/gc` (the agent collects every terminal allocation now),
 * `PUT /v1/client/allocation/:id/gc` (one; a running one is refused with Nomad's words) and `PUT /v1/system/gc`
 * (the server collector, thresholds ignored). Each answers once what it deleted is durable.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { HttpError, type ApiContext } from '../context.ts';
import { collectServerGarbage } from '../gc.ts';
import { allocOf } from './allocations.ts';

const idParams = z.object({ id: z.string().min(1) });

/** A client route for an allocation the agent has garbage collected: Nomad's client no longer knows it. */
export function refuseCollected(ctx: ApiContext, params: unknown) {
  const alloc = allocOf(ctx, params);
  if (alloc.collectedState) throw new HttpError(404, `Unknown allocation ${JSON.stringify(alloc.id)}`);
  return alloc;
}

/** Registers the garbage collection routes. */
export function gcRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.route({
    method: ['PUT', 'POST'],
    url: '/v1/client/gc',
    handler: async () => {
      await ctx.agent.gc.collectAll();
      return {};
    },
  });

  app.route({
    method: ['PUT', 'POST'],
    url: '/v1/client/allocation/:id/gc',
    schema: { params: idParams },
    handler: async (req) => {
      const alloc = allocOf(ctx, req.params);
      // Nomad's client answers the same for an allocation it does not hold and for one not terminal yet.
      if (!(await ctx.agent.gc.collect(alloc.id))) throw new HttpError(500, 'No such allocation on client, or allocation not eligible for GC');
      return {};
    },
  });

  app.route({
    method: ['PUT', 'POST'],
    url: '/v1/system/gc',
    handler: async () => {
      await collectServerGarbage(ctx, { force: true });
      return {};
    },
  });
}
