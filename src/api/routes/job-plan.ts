/**
 * Nomad's `POST /v1/job/:id/plan` (what registering the job would do: its diff and, per group, how many
 * allocations are placed, stopped, updated in place or replaced, planned exactly as registration plans
 * them, never written) and `POST /v1/job/:id/evaluate` (a new evaluation of the job as it stands).
 */
import { isPeriodicActive, nextLaunch, periodicOf } from '../../jobspec/periodic.ts';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { HttpError, notFound, type ApiContext } from '../context.ts';
import { withoutDefaults } from '../job-canonical.ts';
import { ZERO_TIME, type Json } from '../job-json.ts';
import { jobDiff } from '../job-plan-diff.ts';
import { failedTGAllocs } from '../blocked-evals.ts';
import { goBody } from '../schemas.ts';
import { refuseNonexistentNodePool } from '../node-pools.ts';
import { loadApiJob, warningText } from './jobs.ts';

/** Nomad's plan's NextPeriodicLaunch: the job's next launch from now when it is an active periodic job, else Go's zero time. */
function nextPeriodicLaunch(job: Json, now: number): string {
  const next = isPeriodicActive(job, false) ? nextLaunch(periodicOf(job)!, now) : undefined;
  return next === undefined ? ZERO_TIME : new Date(next).toISOString().replace('.000Z', 'Z');
}

const idParams = z.object({ id: z.string().min(1) });

const planBody = goBody({
  Job: z.looseObject({ ID: z.string().min(1, 'must not be empty') }),
  Diff: z.boolean().optional(),
  PolicyOverride: z.boolean().optional(),
}, { emptyIsObject: false });

const evaluateBody = goBody({
  JobID: z.string().optional(),
  EvalOptions: z.looseObject({ ForceReschedule: z.boolean().nullish() }).optional(),
}, { emptyIsObject: true });

/** Registers the plan and evaluate routes. */
export function jobPlanRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { registry } = ctx;

  app.route({
    method: ['PUT', 'POST'],
    url: '/v1/job/:id/plan',
    schema: { params: idParams, body: planBody },
    handler: async (req) => {
      const { id } = req.params as { id: string };
      const body = req.body as z.output<typeof planBody>;
      const job = body.Job as Json & { ID: string };
      if (job.ID !== id) throw new HttpError(400, `Job ID does not match: ${JSON.stringify(job.ID)} in the body, ${JSON.stringify(id)} in the path`);
      return registry.serialize(id, async () => {
        const loaded = await loadApiJob(withoutDefaults(job));
        refuseNonexistentNodePool(job, registry.node);
        const { groups, jobModifyIndex, failed } = registry.plan(job, loaded.allocs, await registry.probe(loaded.allocs));
        const current = registry.getJob(id)?.versions.at(-1)?.job;
        const desired = Object.fromEntries(Object.entries(groups).map(([name, g]) => [name, {
          Ignore: g.ignore, Place: g.place, Migrate: 0, Stop: g.stop, InPlaceUpdate: g.inPlace, DestructiveUpdate: g.destructive, Canary: g.canary, Preemptions: 0,
        }]));
        return {
          JobModifyIndex: jobModifyIndex,
          CreatedEvals: null,
          Diff: body.Diff ? jobDiff(current, job, groups) : null,
          Annotations: { DesiredTGUpdates: desired, PreemptedAllocs: null },
          FailedTGAllocs: failedTGAllocs(failed) ?? null,
          NextPeriodicLaunch: nextPeriodicLaunch(job, ctx.periodic?.now() ?? Date.now()),
          Warnings: warningText(loaded),
          Index: ctx.index.current,
        };
      });
    },
  });

  app.route({
    method: ['PUT', 'POST'],
    url: '/v1/job/:id/evaluate',
    schema: { params: idParams, body: evaluateBody },
    handler: async (req) => {
      const { id } = req.params as { id: string };
      const body = req.body as z.output<typeof evaluateBody>;
      if (body.JobID && body.JobID !== id) throw new HttpError(400, `JobID does not match: ${JSON.stringify(body.JobID)} in the body, ${JSON.stringify(id)} in the path`);
      // Nomad's Job.Evaluate: a periodic job is never evaluated itself (`job periodic force` launches a child).
      if (periodicOf(registry.getJob(id)?.versions.at(-1)!.job)) throw new HttpError(400, "can't evaluate periodic job");
      const result = await registry.serialize(id, () => registry.evaluateJob(id, body.EvalOptions?.ForceReschedule ?? false));
      if (!result) throw notFound('job');
      return { ...result, KnownLeader: true, LastContact: 0 };
    },
  });
}
