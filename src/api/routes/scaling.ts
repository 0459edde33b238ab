/**
 * Nomad's scaling policy endpoints (nomad/scaling_endpoint.go, read by `nomad scaling policy list|info` and the Nomad
 * Autoscaler): `GET /v1/scaling/policies` lists the policies of every job's groups with a `scaling` block (`?job=`,
 * `?type=` as a prefix, `?prefix=` of the ID, `?namespace=`, `*` for all), `GET /v1/scaling/policy/:id` answers one.
 * Both block on the jobs' index, as the policies move only with the jobs.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { blockingQuery, HttpError, type ApiContext } from '../context.ts';
import { blockingQuery as blockingQuerySchema } from '../schemas.ts';
import { policiesOfJob, policyStub } from '../scaling-policies.ts';

const listQuery = blockingQuerySchema.extend({ job: z.string().optional(), type: z.string().optional() });
const idParams = z.object({ id: z.string().min(1) });

/** Registers the routes. */
export function scalingRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { registry } = ctx;
  const all = () => registry.listJobs().flatMap(policiesOfJob);

  app.get('/v1/scaling/policies', { schema: { querystring: listQuery } }, async (req, reply) => {
    const q = req.query as z.output<typeof listQuery>;
    await blockingQuery(ctx, req, reply, () => registry.jobsIndex);
    const namespace = q.namespace ?? 'default';
    return all()
      .filter((p) => namespace === '*' || p.Target['Namespace'] === namespace)
      .filter((p) => (q.prefix ? p.ID.startsWith(q.prefix) : (q.job === undefined || q.job === '' || p.Target['Job'] === q.job)))
      .filter((p) => q.type === undefined || p.Type.startsWith(q.type))
      .map(policyStub);
  });

  app.get('/v1/scaling/policy/:id', { schema: { params: idParams, querystring: blockingQuerySchema } }, async (req, reply) => {
    const { id } = req.params as { id: string };
    await blockingQuery(ctx, req, reply, () => all().find((p) => p.ID === id)?.ModifyIndex ?? registry.jobsIndex);
    const policy = all().find((p) => p.ID === id);
    if (!policy) throw new HttpError(404, 'policy not found');
    return policy;
  });
}
