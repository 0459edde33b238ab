/** Nomad's periodic endpoint: `PUT|POST /v1/job/:id/periodic/force` launches a child of a periodic job now. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { HttpError, type ApiContext } from '../context.ts';
import { PeriodicForceError } from '../periodic-launcher.ts';

const idParams = z.object({ id: z.string().min(1) });

/** Registers the periodic force route. */
export function periodicRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.route({
    method: ['PUT', 'POST'],
    url: '/v1/job/:id/periodic/force',
    schema: { params: idParams },
    handler: async (req) => {
      const { id } = req.params as { id: string };
      if (!ctx.periodic) throw new HttpError(500, 'this agent has no periodic launcher');
      try {
        // Answered once the child job and its launch record are committed: a crash after this keeps the launch.
        const result = await ctx.periodic.force(id);
        return { EvalID: result.EvalID, EvalCreateIndex: result.EvalCreateIndex, Index: result.Index, KnownLeader: true, LastContact: 0 };
      } catch (err) {
        if (err instanceof PeriodicForceError) throw new HttpError(err.status, err.message);
        throw err;
      }
    },
  });
}
