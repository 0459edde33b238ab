/**
 * Nomad's job scaling (`nomad job scale`, `nomad job scaling-events`; nomad/job_endpoint.go Scale and ScaleStatus):
 * `POST|PUT /v1/job/:id/scale` sets one group's count as a new version of the job (checked against the group's
 * scaling policy, refused while the job's deployment runs), evaluated with `TriggeredBy: job-scaling`, and records a
 * scaling event; a request without a Count (an autoscaler's report) only records its event. `GET /v1/job/:id/scale`
 * answers each group's desired, placed, running, healthy and unhealthy allocations and its events, blocking on them.
 * Nomad's texts; a request's fault answers 400, an unknown job 404.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { withoutDefaults } from '../job-canonical.ts';
import { blockingQuery, HttpError, type ApiContext } from '../context.ts';
import type { JobEntry, RegisterResult } from '../job-registry.ts';
import { taskGroupsOf, type Json } from '../job-json.ts';
import { commitVisibleInOrder } from '../ordered-commit.ts';
import { goBody, blockingQuery as blockingQuerySchema } from '../schemas.ts';
import { scalingEvents, scalingEventsKey, withScalingEvent, type ScalingEvent } from '../scaling-events.ts';
import { latestDeploymentOf } from './deployments.ts';
import { loadApiJob } from './jobs.ts';

const idParams = z.object({ id: z.string().min(1) });

/** Nomad's api.ScalingRequest. */
const scaleBody = goBody({
  Count: z.number({ error: 'Count: expected the new count, a whole number' }).int('Count: expected a whole number').optional(),
  Target: z.record(z.string(), z.string(), { error: 'Target: expected { "Group": "<group>" }' }).optional(),
  Message: z.string().optional(),
  Error: z.boolean().optional(),
  Meta: z.record(z.string(), z.unknown()).optional(),
  PolicyOverride: z.boolean().optional(),
  EnforceIndex: z.boolean().optional(),
  JobModifyIndex: z.number().int().min(0).optional(),
}, { emptyIsObject: false });
type ScaleBody = z.output<typeof scaleBody>;

/** Nomad's JobScaleRequest.Validate, and the HTTP handler's check of the job in the payload. */
function requestRefusal(id: string, namespace: string, body: ScaleBody): string | undefined {
  const target = body.Target ?? {};
  if (target['Namespace'] && target['Namespace'] !== namespace) return 'namespace in payload did not match header';
  if (target['Job'] && target['Job'] !== id) return 'job ID in payload did not match URL';
  if (!target['Group']) return 'missing task group name for scaling action';
  if (body.Count !== undefined) {
    if (body.Count < 0) return "scaling action count can't be negative";
    if (body.Error) return 'scaling action should not contain count if error is true';
  }
  return undefined;
}

/** Nomad's refusals that need the job: its type, the group, the scaling policy's bounds, a running deployment. */
function jobRefusal(ctx: ApiContext, entry: JobEntry, group: string, tg: Json | undefined, count: number | undefined): { status: number; message: string } | undefined {
  if (count !== undefined && entry.versions.at(-1)!.job['Type'] === 'system' && count > 1) return { status: 400, message: 'jobs of type "system" can only be scaled to 1 or 0' };
  if (!tg) return { status: 400, message: `task group ${JSON.stringify(group)} specified for scaling does not exist in job` };
  if (count === undefined) return undefined;
  // Nomad registers the new count into the stopped job, which stays stopped; allocrun's registration of a version
  // starts a job, so it refuses rather than start what was stopped (a report without a count is still recorded).
  if (entry.stop) return { status: 400, message: `job ${JSON.stringify(entry.id)} is stopped: register it again (job run) to start it, then scale it` };
  const scaling = tg['Scaling'] as { Min?: number; Max?: number } | undefined;
  if (scaling && typeof scaling.Min === 'number' && count < scaling.Min) return { status: 400, message: `group count was less than scaling policy minimum: ${count} < ${scaling.Min}` };
  if (scaling && typeof scaling.Max === 'number' && scaling.Max < count) return { status: 400, message: `group count was greater than scaling policy maximum: ${count} > ${scaling.Max}` };
  if (latestDeploymentOf(ctx, entry)?.['Status'] === 'running') return { status: 400, message: 'job scaling blocked due to active deployment' };
  return undefined;
}

/** The job's current version with `group`'s count set to `count`, as a registration sends it. */
function scaledJob(entry: JobEntry, group: string, count: number): Json {
  const job = entry.versions.at(-1)!.job;
  const groups = taskGroupsOf(job).map((g) => (g['Name'] === group ? { ...g, Count: count } : g));
  return { ...job, TaskGroups: groups };
}

/** Nomad's JobScaleStatus of `entry`: per group its counts and events, and the index they are at. */
function scaleStatus(ctx: ApiContext, entry: JobEntry): { status: Json; index: number } {
  const job = ctx.registry.jobJson(entry);
  const events = scalingEvents(ctx.store, entry.id, entry.createIndex);
  const groups: Record<string, Json & { Placed: number; Running: number; Healthy: number; Unhealthy: number }> = {};
  for (const tg of taskGroupsOf(job)) {
    const name = String(tg['Name']);
    groups[name] = { Desired: tg['Count'], Placed: 0, Running: 0, Healthy: 0, Unhealthy: 0, Events: events.groups[name] ?? null };
  }
  let allocsIndex = 0;
  for (const a of ctx.registry.allocsOfJob(entry.id)) {
    const alloc = ctx.registry.allocJson(a);
    const health = alloc['DeploymentStatus'] as { Healthy?: boolean | null; Canary?: boolean } | null | undefined;
    // Nomad leaves canaries out, and allocations that are stopping or finished (TerminalStatus).
    if (health?.Canary) continue;
    if (alloc['DesiredStatus'] !== 'run' || ['complete', 'failed', 'lost'].includes(String(alloc['ClientStatus']))) continue;
    const g = groups[a.group];
    if (!g) continue;
    g.Placed++;
    if (alloc['ClientStatus'] === 'running') g.Running++;
    if (health?.Healthy === true) g.Healthy++;
    else if (health?.Healthy === false) g.Unhealthy++;
    allocsIndex = Math.max(allocsIndex, a.modifyIndex);
  }
  const status = {
    JobID: entry.id, Namespace: entry.namespace, JobCreateIndex: entry.createIndex, JobModifyIndex: entry.modifyIndex,
    JobStopped: entry.stop, TaskGroups: groups,
  };
  return { status, index: Math.max(entry.modifyIndex, events.modifyIndex, allocsIndex) };
}

/** Registers the routes. */
export function jobScaleRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { registry } = ctx;

  app.get('/v1/job/:id/scale', { schema: { params: idParams, querystring: blockingQuerySchema } }, async (req, reply) => {
    const { id } = req.params as { id: string };
    const now = () => {
      const entry = registry.getJob(id);
      return entry ? scaleStatus(ctx, entry).index : ctx.index.current;
    };
    await blockingQuery(ctx, req, reply, now);
    const entry = registry.getJob(id);
    if (!entry) throw new HttpError(404, 'job not found');
    return scaleStatus(ctx, entry).status;
  });

  app.route({
    method: ['PUT', 'POST'],
    url: '/v1/job/:id/scale',
    schema: { params: idParams, body: scaleBody },
    handler: async (req) => {
      const { id } = req.params as { id: string };
      const body = req.body as ScaleBody;
      return registry.serialize(id, async () => {
        const entry = registry.getJob(id);
        const refused = requestRefusal(id, entry?.namespace ?? 'default', body);
        if (refused) throw new HttpError(400, refused);
        if (!entry) throw new HttpError(404, `job ${JSON.stringify(id)} not found`);
        const group = body.Target!['Group']!;
        const tg = taskGroupsOf(entry.versions.at(-1)!.job).find((g) => g['Name'] === group);
        const jobRefused = jobRefusal(ctx, entry, group, tg, body.Count);
        if (jobRefused) throw new HttpError(jobRefused.status, jobRefused.message);
        if (body.JobModifyIndex !== undefined && body.JobModifyIndex > 0 && body.JobModifyIndex !== entry.jobModifyIndex) {
          throw new HttpError(400, `Enforcing job modify index ${body.JobModifyIndex}: job exists with conflicting job modify index: ${entry.jobModifyIndex}`);
        }
        const previous = Number(tg!['Count']);
        let result: RegisterResult = { EvalID: '', EvalCreateIndex: 0, JobModifyIndex: entry.jobModifyIndex, Warnings: '', Index: entry.modifyIndex };
        if (body.Count !== undefined) {
          const job = scaledJob(entry, group, body.Count);
          const loaded = await loadApiJob(withoutDefaults(job));
          // Nomad's scale answers no warnings: the job's were said when it was registered.
          // Nomad's upsertJobImpl: the scaled version keeps the current one's job file.
          result = await registry.register(job, loaded.allocs, '', { trigger: 'job-scaling', submission: { version: entry.versions.at(-1)!.version } });
          // Nomad evaluates a scale whether or not the count moved (an unchanged job is no new version).
          if (!result.EvalID) result = { ...(await registry.evaluateJob(id, false, 'job-scaling'))!, JobModifyIndex: entry.jobModifyIndex };
        }
        const event: Omit<ScalingEvent, 'CreateIndex'> = {
          Time: Date.now() * 1e6, Count: body.Count ?? null, PreviousCount: previous, Message: body.Message ?? '', Error: body.Error ?? false,
          Meta: body.Meta ?? null, EvalID: result.EvalID || null,
        };
        // The event is its own write after the job's, as in Nomad; answered once it is durable too.
        const index = ctx.index.order.take();
        const now = registry.getJob(id) ?? entry;
        await commitVisibleInOrder(ctx, index, (tx) => tx.put('meta', scalingEventsKey(id), withScalingEvent(scalingEvents(ctx.store, id, now.createIndex), group, event, index)));
        return { ...result, Index: index, KnownLeader: true, LastContact: 0 };
      });
    },
  });
}
