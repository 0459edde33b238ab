/** Nomad's evaluation endpoints: every write's evaluation, by ID, listed, and per job. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { blockingQuery, notFound, type ApiContext } from '../context.ts';
import { blockingQuery as blockingQuerySchema } from '../schemas.ts';
import { evalJson } from './deployments.ts';

const idParams = z.object({ id: z.string().min(1) });

/** Registers the evaluation routes. */
export function evaluationRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { registry } = ctx;
  const newest = () => Math.max(0, ...registry.listEvals().map((e) => e.ModifyIndex));

  app.get('/v1/evaluations', { schema: { querystring: blockingQuerySchema } }, async (req, reply) => {
    await blockingQuery(ctx, req, reply, newest);
    const prefix = (req.query as { prefix?: string }).prefix ?? '';
    return registry.listEvals().filter((e) => e.ID.startsWith(prefix)).map((e) => evalJson(ctx, e));
  });

  app.get('/v1/evaluation/:id', { schema: { params: idParams, querystring: blockingQuerySchema } }, async (req, reply) => {
    const e = registry.getEval((req.params as { id: string }).id);
    if (!e) throw notFound('eval');
    await blockingQuery(ctx, req, reply, () => e.ModifyIndex);
    return evalJson(ctx, e);
  });

  app.get('/v1/evaluation/:id/allocations', { schema: { params: idParams } }, async (req) => {
    const e = registry.getEval((req.params as { id: string }).id);
    if (!e) throw notFound('eval');
    // The allocations it placed carry its ID (a blocked evaluation places them when it is processed again).
    return registry.allocsOfJob(e.JobID).filter((a) => a.evalId === e.ID).map((a) => registry.allocStubJson(a));
  });

  app.get('/v1/job/:id/evaluations', { schema: { params: idParams, querystring: blockingQuerySchema } }, async (req, reply) => {
    const { id } = req.params as { id: string };
    if (!registry.getJob(id)) throw notFound('job');
    await blockingQuery(ctx, req, reply, newest);
    return registry.listEvals().filter((e) => e.JobID === id).reverse().map((e) => evalJson(ctx, e));
  });
}
