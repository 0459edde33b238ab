/**
 * Nomad's job revert (`PUT /v1/job/:id/revert`, nomad/job_endpoint.go Revert): registers a version the agent
 * still keeps (job-versions.ts) again, as the job's next version, with the allocations that version had. Nomad's
 * texts; a request's fault answers 400 (an unknown job or version 404) where Nomad answers 500 for all of them.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { HttpError, type ApiContext } from '../context.ts';
import { goBody } from '../schemas.ts';

const idParams = z.object({ id: z.string().min(1) });
const revertBody = goBody({
  JobID: z.string().optional(),
  JobVersion: z.number({ error: 'JobVersion: expected the version to revert to, a number' }).int().min(0),
  EnforcePriorVersion: z.number().int().min(0).optional(),
}, { emptyIsObject: false });

/** Registers the route. */
export function jobRevertRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { registry } = ctx;
  app.route({
    method: ['PUT', 'POST'],
    url: '/v1/job/:id/revert',
    schema: { params: idParams, body: revertBody },
    handler: async (req) => {
      const id = (req.params as { id: string }).id;
      const body = req.body as z.output<typeof revertBody>;
      if (body.JobID !== undefined && body.JobID !== '' && body.JobID !== id) throw new HttpError(400, `Job ID does not match: ${JSON.stringify(body.JobID)} in the body, ${JSON.stringify(id)} in the path`);
      return registry.serialize(id, async () => {
        const current = registry.getJob(id);
        if (!current) throw new HttpError(404, `job ${JSON.stringify(id)} not found`);
        const now = current.versions.at(-1)!;
        if (body.JobVersion === now.version) throw new HttpError(400, "can't revert to current version");
        const target = current.versions.find((v) => v.version === body.JobVersion);
        if (!target) throw new HttpError(404, `job ${JSON.stringify(id)} in namespace ${JSON.stringify(current.namespace)} at version ${body.JobVersion} not found`);
        if (body.EnforcePriorVersion !== undefined && body.EnforcePriorVersion !== now.version) {
          throw new HttpError(400, `Current job has version ${now.version}; enforcing version ${body.EnforcePriorVersion}`);
        }
        // Nomad's upsertJobImpl: the version registered again keeps the job file it was registered from.
        const { Index, ...result } = await registry.register(target.job, target.allocs, '', { submission: { version: target.version } });
        return { ...result, Index, KnownLeader: true, LastContact: 0 };
      });
    },
  });
}
