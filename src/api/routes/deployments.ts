/**
 * Nomad's deployments on one node, read from what the agent already tracks: each version of a service job
 * whose groups have an update block is a deployment of the allocations running that version, its status
 * following their health as the health_watcher reports it (`running` until every wanted allocation is
 * healthy, then `successful`; `failed` once one is unhealthy; `cancelled` when a newer version or a stop
 * replaced it first). A group whose update block asks for canaries shows them (`DesiredCanaries`,
 * `PlacedCanaries`, `Promoted`) and the deployment waits for its promotion. `fail` marks the running deployment
 * failed as Nomad's does; `promote` accepts its canaries once they are healthy (Nomad's refusals otherwise).
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { blockingQuery, HttpError, notFound, type ApiContext } from '../context.ts';
import type { StreamEvent } from '../event-broker.ts';
import type { EvalRecord, JobEntry, JobVersion } from '../job-registry.ts';
import { taskGroupsOf, ZERO_TIME, type Json } from '../job-json.ts';
import { blockingQuery as blockingQuerySchema } from '../schemas.ts';
import { blockingList, ListCache } from '../list-cache.ts';
import { commitInOrder } from '../ordered-commit.ts';
import { deploymentId } from '../deployment-id.ts';
import { deploymentsMarkedFailed, deploymentsPromoted, FAILED_KEY } from '../deployment-marks.ts';
import { PROGRESS_DEADLINE_FAILED, progressRecord, requireProgressBy } from '../progress-deadline.ts';
import { ProgressWatcher } from '../progress-watcher.ts';
import { realClock } from '../../drivers/clock.ts';

const idParams = z.object({ id: z.string().min(1) });

/** The deployments marked failed through the API (`nomad deployment fail`): ID → index. */
const failedByUser = (ctx: ApiContext): Map<string, number> => deploymentsMarkedFailed(ctx.store);

/** Whether version `v` of `job` has a deployment: a service job's groups with an update block, not the stop itself. */
export function hasDeployment(job: JobEntry, v: JobVersion): boolean {
  // A stopped job's last version is the stop itself: Nomad makes no deployment of it.
  return v.allocs.some((s) => s.update && s.type === 'service') && !(job.stop && v === job.versions.at(-1));
}

/** Every deployment of `job`, oldest first. */
function deploymentsOf(ctx: ApiContext, job: JobEntry): Json[] {
  const failed = failedByUser(ctx);
  const promoted = deploymentsPromoted(ctx.store);
  const allocs = ctx.registry.allocsOfJob(job.id);
  const versions = job.versions.filter((v) => hasDeployment(job, v));
  return versions.map((v, i): Json => {
    const id = deploymentId(job, v.version);
    const mine = allocs.filter((a) => a.jobVersion === v.version && a.spec.update);
    const progress = progressRecord(ctx.store, id);
    const jobJson = ctx.registry.jobJson(job, v);
    const groupsJson = new Map(taskGroupsOf(jobJson).map((g) => [String(g['Name']), g]));
    const groups: Record<string, Json> = {};
    let wanted = 0;
    for (const s of v.allocs) {
      if (!s.update) continue;
      const update = (groupsJson.get(s.group)?.['Update'] ?? {}) as Json;
      const g = (groups[s.group] ??= {
        AutoRevert: update['AutoRevert'] ?? false, AutoPromote: update['AutoPromote'] ?? false, ProgressDeadline: update['ProgressDeadline'] ?? 600e9,
        RequireProgressBy: ZERO_TIME, Promoted: false, PlacedCanaries: null, DesiredCanaries: 0, DesiredTotal: 0, PlacedAllocs: 0, HealthyAllocs: 0, UnhealthyAllocs: 0,
      });
      g['DesiredTotal'] = (g['DesiredTotal'] as number) + 1;
      wanted++;
    }
    // Each group's progress deadline: what its placement or promotion set, pushed out by each healthy verdict.
    for (const [group, g] of Object.entries(groups)) {
      const healthyAt = mine.flatMap((a) => (a.group === group && a.spec.deploymentId === id && a.lastState.deploymentStatus?.healthy === true ? [a.lastState.deploymentStatus.timestamp] : []));
      const by = requireProgressBy(Number(g['ProgressDeadline']) / 1e6, progress.requireBy[group], healthyAt);
      if (by !== undefined) g['RequireProgressBy'] = new Date(by).toISOString();
    }
    let healthy = 0;
    let unhealthy = 0;
    for (const a of mine) {
      const g = groups[a.group];
      if (!g) continue;
      g['PlacedAllocs'] = (g['PlacedAllocs'] as number) + 1;
      const verdict = a.lastState.deploymentStatus;
      if (verdict?.healthy === true) (g['HealthyAllocs'] = (g['HealthyAllocs'] as number) + 1), healthy++;
      // An allocation stopped before it was healthy (replaced by a newer version, or stopped) ends with an unhealthy
      // verdict; Nomad gives an allocation the server stops no health, so that verdict fails no deployment. One that
      // failed on its own did, also once a later version (an auto-revert) has stopped it.
      if (verdict?.healthy === false && (a.desired === 'run' || a.lastState.clientStatus === 'failed')) (g['UnhealthyAllocs'] = (g['UnhealthyAllocs'] as number) + 1), unhealthy++;
    }
    // Canaries: placed for an update whose group asks for them, waiting for the deployment's promotion.
    const isPromoted = promoted.has(id);
    // What an unpromoted deployment waits for: canaries still to be healthy, then a promotion (by hand, or its own).
    let awaiting: 'canaries' | 'manual' | 'automatic' | undefined;
    for (const [group, c] of ctx.registry.deployments.canariesOf(job.id, id)) {
      const g = groups[group];
      if (!g) continue;
      Object.assign(g, { DesiredCanaries: c.wanted, PlacedCanaries: c.placed.map((a) => a.id), Promoted: isPromoted });
      if (isPromoted) continue;
      const ready = c.placed.length >= c.wanted && c.placed.every((a) => a.desired !== 'run' || a.lastState.deploymentStatus?.healthy === true);
      if (!ready) awaiting = 'canaries';
      else if (!g['AutoPromote'] && awaiting !== 'canaries') awaiting = 'manual';
      else awaiting ??= 'automatic';
    }
    const newer = versions[i + 1] !== undefined;
    const stopped = job.stop && !newer;
    let status: string;
    let description: string;
    if (failed.has(id)) [status, description] = ['failed', 'Deployment marked as failed'];
    else if (progress.failed !== undefined) [status, description] = ['failed', PROGRESS_DEADLINE_FAILED];
    // Marked stable when it succeeded: it stays successful once its allocations are replaced or collected.
    else if (v.stable) [status, description] = ['successful', 'Deployment completed successfully'];
    else if (unhealthy > 0) [status, description] = ['failed', 'Failed due to unhealthy allocations'];
    else if (healthy >= wanted && wanted > 0 && awaiting === undefined) [status, description] = ['successful', 'Deployment completed successfully'];
    else if (newer) [status, description] = ['cancelled', 'Cancelled due to newer version of job'];
    else if (stopped) [status, description] = ['cancelled', 'Cancelled because job is stopped'];
    else if (awaiting === 'manual') [status, description] = ['running', 'Deployment is running but requires manual promotion'];
    else if (awaiting === 'automatic') [status, description] = ['running', 'Deployment is running pending automatic promotion'];
    else [status, description] = ['running', 'Deployment is running'];
    // Moved when what it shows moves (its status, its allocations' placement and health), as Nomad updates a
    // deployment, not by every update of its allocations.
    const modifyIndex = Math.max(v.jobModifyIndex, failed.get(id) ?? 0, promoted.get(id) ?? 0, progress.failed ?? 0, announced.get(ctx)?.get(id)?.at ?? 0);
    return {
      ID: id, Namespace: job.namespace, JobID: job.id, JobVersion: v.version, JobModifyIndex: v.jobModifyIndex, JobSpecModifyIndex: v.jobModifyIndex,
      JobCreateIndex: job.createIndex, IsMultiregion: false, TaskGroups: groups, Status: status, StatusDescription: description,
      EvalPriority: Number(jobJson['Priority'] ?? 50), CreateIndex: v.jobModifyIndex, ModifyIndex: modifyIndex,
    };
  });
}

/** The newest deployment of `job` (Nomad's LatestDeploymentByJobID), if it has any. */
export function latestDeploymentOf(ctx: ApiContext, job: JobEntry): Json | undefined {
  return deploymentsOf(ctx, job).at(-1);
}

/**
 * An evaluation as Nomad's API answers it: with the deployment its job version started (`DeploymentID`,
 * which `nomad job run` follows after the evaluation), and the fields a one-node scheduler leaves empty.
 */
export function evalJson(ctx: ApiContext, e: EvalRecord): Json {
  const job = ctx.registry.getJob(e.JobID);
  const version = job?.versions.find((v) => v.jobModifyIndex === e.JobModifyIndex);
  // Without building the deployment: its ID is fixed by the job and version, and it exists for the versions deploymentsOf keeps.
  // A registration's evaluation starts its version's deployment; so does a scale's that made a new version (one that
  // left the count as it was evaluated the job as it stands, at a later index, and started none).
  const starts = e.TriggeredBy === 'job-register' || (e.TriggeredBy === 'job-scaling' && e.CreateIndex === version?.jobModifyIndex);
  const deployed = job && version && starts && hasDeployment(job, version);
  return {
    ...e, DeploymentID: deployed ? deploymentId(job, version.version) : '', NodeID: '', NodeModifyIndex: 0, Wait: 0, WaitUntil: '0001-01-01T00:00:00Z',
    NextEval: '', PreviousEval: e.PreviousEval ?? '', BlockedEval: e.BlockedEval ?? '', FailedTGAllocs: e.FailedTGAllocs ?? null, ClassEligibility: null, EscapedComputedClass: false,
    QueuedAllocations: { ...Object.fromEntries([...new Set((version ?? job?.versions.at(-1))?.allocs.map((a) => a.group) ?? [])].map((g) => [g, 0])), ...e.QueuedAllocations },
    SnapshotIndex: e.CreateIndex,
  };
}

/** What a deployment event reports: its status and its allocations' health. */
const signature = (d: Json): string => {
  const groups = Object.values(d['TaskGroups'] as Record<string, Json>);
  return `${String(d['Status'])}|${groups.map((g) => `${g['PlacedAllocs']}/${g['HealthyAllocs']}/${g['UnhealthyAllocs']}`).join(',')}`;
};

/** The deployments already announced on the event stream, by ID, with what was announced and at which index. */
const announced = new WeakMap<ApiContext, Map<string, { sig: string; at: number; job: string }>>();
/** Per agent, the index of the newest deployment change: the scope of the deployment lists. */
const changedAt = new WeakMap<ApiContext, number>();
/**
 * Per agent, while a fail is being committed: the jobs whose deployments the watcher reads once it is announced.
 * The fail takes its index before its commit; the watcher, reading the mark as soon as the store has it, would
 * announce the same change a second time, and other changes, at later indexes the fail's own announcement would
 * then come after, so a reader of the lists at one of those would never be woken by the fail.
 */
const held = new WeakMap<ApiContext, Set<string>>();
/** Per agent, what stops its deployment watch (`closeDeploymentWatch`). */
const stops = new WeakMap<ApiContext, () => void>();

/**
 * Stops the deployment watch: the progress deadlines' timers, and the reads after each change (a write still
 * settling as the agent shuts down would have them read a store about to close).
 */
export function closeDeploymentWatch(ctx: ApiContext): void {
  stops.get(ctx)?.();
}

/** Per agent, the watcher's read of some jobs' deployments (watchDeployments' readAgain). */
const reads = new WeakMap<ApiContext, (jobs: Set<string>) => void>();

/** The index of the newest change to any deployment (its creation, status, placement or health). */
export function deploymentsIndex(ctx: ApiContext): number {
  return Math.max(changedAt.get(ctx) ?? 0, 1);
}

function deploymentEvent(d: Json, type: string, index: number): StreamEvent {
  return { Topic: 'Deployment', Type: type, Key: String(d['ID']), Namespace: String(d['Namespace']), FilterKeys: [String(d['JobID'])], Index: index, Payload: { Deployment: d } };
}

/**
 * Announces deployments on the event stream (`Deployment` topic) as they change: after every job or
 * allocation event, the deployments of the jobs it touched are read again, and each new one or each whose
 * status changed is a `DeploymentStatusUpdate`, each whose allocations' health changed a
 * `DeploymentAllocHealth`, at an index of their own. Call once, when the API starts.
 */
export function watchDeployments(ctx: ApiContext): void {
  if (announced.has(ctx)) return;
  const known = new Map<string, { sig: string; at: number; job: string }>();
  announced.set(ctx, known);
  // The indexes the last agent announced deployments at are not stored: the deployments found at the start count
  // as changed at the index this agent starts from, past every index the last one handed out, so neither a
  // deployment's ModifyIndex nor the lists' index goes back over a restart.
  const start = ctx.index.current;
  // The progress deadlines' timers (progress-watcher.ts): armed from what the store holds, each deployment looked at
  // again whenever it is read again below.
  const watcher = new ProgressWatcher({
    clock: ctx.clock ?? realClock,
    read: (id) => {
      const jobId = known.get(id)?.job;
      const job = jobId === undefined ? undefined : ctx.registry.getJob(jobId);
      return job && deploymentsOf(ctx, job).find((d) => d['ID'] === id);
    },
    // Its write carries an evaluation and no job or allocation event: the deployment is read again (and announced) after it.
    fail: (d, rollback, still) => ctx.registry.deployments.failByProgressDeadline(String(d['JobID']), String(d['ID']), Number(d['JobVersion']), rollback, still).then(() => readAgain(new Set([String(d['JobID'])]))),
    log: (line) => ctx.registry.log(line),
  });
  for (const j of ctx.registry.listJobs()) for (const d of deploymentsOf(ctx, j)) known.set(String(d['ID']), { sig: signature(d), at: start, job: j.id });
  for (const j of ctx.registry.listJobs()) for (const d of deploymentsOf(ctx, j)) watcher.look(d);
  changedAt.set(ctx, Math.max(0, ...[...known.values()].map((k) => k.at)));
  let stopped = false;
  const following = ctx.events.subscribe({ fromIndex: 0, topics: [{ topic: 'Job', key: '*' }, { topic: 'Allocation', key: '*' }], namespace: '*' }).subscribe((batch) => {
    const jobs = new Set(batch.Events.map((e) => (e.Topic === 'Job' ? e.Key : e.FilterKeys[0])).filter((k): k is string => k !== undefined));
    // After the batch has reached every subscriber: these events come after it, at a later index.
    queueMicrotask(() => readAgain(jobs));
  });

  stops.set(ctx, () => {
    stopped = true;
    following.unsubscribe();
    watcher.close();
  });

  /** Reads the deployments of `jobs` again and announces what changed, or holds them while a fail is committed. */
  function readAgain(jobs: Set<string>): void {
    if (stopped) return;
    const holding = held.get(ctx);
    if (holding) {
      for (const id of jobs) holding.add(id);
      return;
    }
    const events: ((index: number) => StreamEvent)[] = [];
    const changed: { id: string; sig: string; job: string }[] = [];
    let purged = false;
    for (const id of jobs) {
      const job = ctx.registry.getJob(id);
      if (!job) {
        // A purged job's deployments go with it: no event (Nomad's are garbage collected), but the lists change.
        for (const [d, k] of known) if (k.job === id) purged = known.delete(d);
        continue;
      }
      for (const d of deploymentsOf(ctx, job)) {
        watcher.look(d);
        const before = known.get(String(d['ID']))?.sig;
        const now = signature(d);
        if (before === now) continue;
        changed.push({ id: String(d['ID']), sig: now, job: id });
        const statusChanged = before === undefined || before.split('|')[0] !== now.split('|')[0];
        events.push((index) => deploymentEvent({ ...d, ModifyIndex: index }, statusChanged ? 'DeploymentStatusUpdate' : 'DeploymentAllocHealth', index));
      }
    }
    if (events.length === 0 && !purged) return;
    const index = ctx.index.next();
    for (const c of changed) known.set(c.id, { sig: c.sig, at: index, job: c.job });
    changedAt.set(ctx, index);
    if (events.length === 0) {
      ctx.index.changed(index);
      return;
    }
    ctx.events.publish({ Index: index, Events: events.map((e) => e(index)) });
    ctx.index.changed(index);
  }
  reads.set(ctx, readAgain);
}

/** Registers the deployment routes. */
export function deploymentRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { registry } = ctx;
  const all = () => registry.listJobs().flatMap((j) => deploymentsOf(ctx, j));
  const newest = () => deploymentsIndex(ctx);
  // Built once per deployment change and serialised once per query, as the other lists are.
  const lists = new ListCache();
  const find = (id: string) => {
    const exact = all().find((d) => d['ID'] === id);
    const found = exact ? [exact] : all().filter((d) => String(d['ID']).startsWith(id));
    if (found.length !== 1) throw notFound('deployment');
    return found[0]!;
  };

  app.get('/v1/deployments', { schema: { querystring: blockingQuerySchema } }, async (req, reply) => {
    return blockingList(ctx, lists, req, reply, 'deployments', newest, () => all().sort((a, b) => (b['CreateIndex'] as number) - (a['CreateIndex'] as number)));
  });

  app.get('/v1/deployment/:id', { schema: { params: idParams, querystring: blockingQuerySchema } }, async (req, reply) => {
    const { id } = req.params as { id: string };
    find(id);
    await blockingQuery(ctx, req, reply, newest);
    return find(id);
  });

  app.get('/v1/deployment/allocations/:id', { schema: { params: idParams, querystring: blockingQuerySchema } }, async (req, reply) => {
    const d = find((req.params as { id: string }).id);
    await blockingQuery(ctx, req, reply, () => registry.allocsIndex);
    return registry.allocsOfJob(String(d['JobID'])).filter((a) => a.jobVersion === d['JobVersion'] && a.spec.update).map((a) => registry.allocStubJson(a));
  });

  // Nomad's Job.Deployments and Job.LatestDeployment look no job up: an unknown (or purged) job's deployments are
  // none and its newest is null, at the deployments' index, after a blocking wait like any read.
  const deploymentsOfJob = (id: string): Json[] => {
    const job = registry.getJob(id);
    return job ? deploymentsOf(ctx, job) : [];
  };

  app.get('/v1/job/:id/deployments', { schema: { params: idParams, querystring: blockingQuerySchema } }, async (req, reply) => {
    const { id } = req.params as { id: string };
    return blockingList(ctx, lists, req, reply, `job-deployments:${id}`, newest, () => deploymentsOfJob(id).reverse());
  });

  app.get('/v1/job/:id/deployment', { schema: { params: idParams, querystring: blockingQuerySchema } }, async (req, reply) => {
    const { id } = req.params as { id: string };
    await blockingQuery(ctx, req, reply, newest);
    // Nomad answers null when the job has no deployment.
    const job = registry.getJob(id);
    return reply.type('application/json').send(JSON.stringify((job && latestDeploymentOf(ctx, job)) ?? null));
  });

  app.route({
    method: ['PUT', 'POST'],
    url: '/v1/deployment/fail/:id',
    schema: { params: idParams },
    handler: async (req) => {
      // One mark at a time: each reads and rewrites the same store entry.
      return ctx.registry.serialize('\0deployments', async () => {
        const d = find((req.params as { id: string }).id);
        if (d['Status'] !== 'running') throw new HttpError(400, `can't fail terminal deployment`);
        const failed = failedByUser(ctx);
        const index = ctx.index.order.take();
        const id = String(d['ID']);
        failed.set(id, index);
        const holding = new Set<string>();
        held.set(ctx, holding);
        try {
          // Durable before it is answered, like every write, and announced before any batch of a later index.
          await commitInOrder(ctx, index, (tx) => tx.put('meta', FAILED_KEY, Object.fromEntries(failed)), () => {
            const now = find(id);
            announced.get(ctx)?.set(id, { sig: signature(now), at: index, job: String(d['JobID']) });
            changedAt.set(ctx, index);
            ctx.events.publish({ Index: index, Events: [deploymentEvent(now, 'DeploymentStatusUpdate', index)] });
            ctx.index.changed(index);
          });
        } finally {
          held.delete(ctx);
          // What changed meanwhile, announced after the fail, at later indexes.
          if (holding.size > 0) reads.get(ctx)?.(holding);
        }
        return { EvalID: '', EvalCreateIndex: 0, DeploymentModifyIndex: index, RevertedJobVersion: null, Index: index };
      });
    },
  });

  app.route({
    method: ['PUT', 'POST'],
    url: '/v1/deployment/promote/:id',
    schema: { params: idParams },
    handler: async (req) => {
      const found = find((req.params as { id: string }).id);
      const id = String(found['ID']);
      const jobId = String(found['JobID']);
      return ctx.registry.serialize(jobId, async () => {
        // Looked at again in the job's queue: a write before this one may have moved it.
        const d = find(id);
        if (d['Status'] !== 'running') throw new HttpError(400, `can't promote terminal deployment`);
        const groups = Object.entries(d['TaskGroups'] as Record<string, Json>).filter(([, g]) => (g['DesiredCanaries'] as number) > 0);
        // Nomad's words when a deployment has no canaries to promote, or some are not yet healthy.
        if (groups.length === 0 || groups.every(([, g]) => g['Promoted'] === true)) throw new HttpError(400, `no canaries to promote`);
        for (const [name, g] of groups) {
          const canaries = ctx.registry.deployments.canariesOf(jobId, id).get(name)?.placed ?? [];
          const healthy = canaries.filter((a) => a.lastState.deploymentStatus?.healthy === true).length;
          if (healthy < (g['DesiredCanaries'] as number)) throw new HttpError(400, `Task group ${JSON.stringify(name)} has ${healthy}/${g['DesiredCanaries']} healthy allocations`);
        }
        const result = await ctx.registry.deployments.promote(jobId, id);
        return { EvalID: result.EvalID, EvalCreateIndex: result.EvalCreateIndex, DeploymentModifyIndex: result.Index, Index: result.Index };
      });
    },
  });
}
