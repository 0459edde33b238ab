/** Nomad's evaluation endpoints: every write's evaluation, by ID, listed, and per job. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { blockingQuery, notFound, type ApiContext } from '../context.ts';
import { blockingList, ListCache, StubMemo } from '../list-cache.ts';
import type { EvalRecord } from '../job-registry.ts';
import { blockingQuery as blockingQuerySchema } from '../schemas.ts';
import { evalJson } from './deployments.ts';

const idParams = z.object({ id: z.string().min(1) });

/** Registers the evaluation routes. */
export function evaluationRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { registry } = ctx;
  const newest = () => registry.evalsIndex;
  // Built once per change of the evaluations table and serialised once per query, as the jobs and allocations
  // lists are; an evaluation's JSON is remade only when its record is replaced (every change writes a new one).
  const lists = new ListCache();
  const stubs = new StubMemo((e: EvalRecord) => evalJson(ctx, e));
  const jsonOf = (e: EvalRecord) => stubs.of(e, e.ModifyIndex);

  app.get('/v1/evaluations', { schema: { querystring: blockingQuerySchema } }, async (req, reply) => {
    return blockingList(ctx, lists, req, reply, 'evals', newest, () => registry.listEvals().map(jsonOf));
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
    // An unknown job's are none, at the evaluations' index, as Nomad's Job.Evaluations answers (it looks no job up).
    return blockingList(ctx, lists, req, reply, `job-evals:${id}`, newest, () => registry.listEvals().filter((e) => e.JobID === id).reverse().map(jsonOf));
  });
}
