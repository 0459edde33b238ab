/**
 * Nomad's job dispatch (`nomad/job_endpoint.go` Dispatch) on the agent: a parameterized job places nothing;
 * each dispatch registers a child job `<parent>/dispatch-<unix seconds>-<8 hex>` (ParentID set, Dispatched,
 * the parent's meta with the dispatch's merged over it, the payload), evaluated and placed like any job.
 *
 * Durable as a registration is: the child, its evaluation and its allocations are one store commit, answered
 * after it. A dispatch with an idempotency token that a child of the job already carries answers with that
 * child and registers nothing, so a client retrying after a lost answer (or an agent restart) never runs the
 * work twice. Dispatches of one job are applied one at a time, in the job's queue, so two concurrent
 * requests with one token make one child.
 */
import { randomBytes } from 'node:crypto';
import type { AllocSpec } from '../jobspec/types.ts';
import { isParameterizedParent, parameterizedOf } from '../jobspec/parameterized.ts';
import { unsafeNameReason } from '../jobspec/names.ts';
import { HttpError } from './context.ts';
import type { JobEntry, JobRegistry } from './job-registry.ts';
import { taskGroupsOf, type Json } from './job-json.ts';

/** Nomad's DispatchPayloadSizeLimit: 16 KiB. */
export const DISPATCH_PAYLOAD_LIMIT = 16 * 1024;

/** What a dispatch asks (Nomad's JobDispatchRequest, the payload decoded). */
export interface DispatchRequest {
  payload: Uint8Array;
  meta: Readonly<Record<string, string>>;
  idempotencyToken?: string;
  idPrefixTemplate?: string;
}

/** What a dispatch answers (Nomad's JobDispatchResponse). */
export interface DispatchResult {
  DispatchedJobID: string;
  EvalID: string;
  EvalCreateIndex: number;
  JobCreateIndex: number;
  Index: number;
}

/** Go's `%v` of a string slice, sorted so the message does not depend on map order. */
const goList = (keys: string[]): string => `[${[...keys].sort().join(' ')}]`;

/**
 * Why Nomad refuses this dispatch of `parent` (its current version's job, `stopped` or not), or undefined:
 * the job's kind and state, then validateDispatchRequest's rules (payload rule and size, meta keys).
 */
export function dispatchRefusal(id: string, job: Json, stopped: boolean, req: Pick<DispatchRequest, 'payload' | 'meta'>): string | undefined {
  const config = parameterizedOf(job);
  if (!config || !isParameterizedParent(job)) return `Specified job ${JSON.stringify(id)} is not a parameterized job`;
  if (stopped) return `Specified job ${JSON.stringify(id)} is stopped`;
  const hasPayload = req.payload.length > 0;
  if (config.Payload === 'required' && !hasPayload) return 'Payload is not provided but required by parameterized job';
  if (config.Payload === 'forbidden' && hasPayload) return 'Payload provided but forbidden by parameterized job';
  if (req.payload.length > DISPATCH_PAYLOAD_LIMIT) return `Payload exceeds maximum size; ${req.payload.length} > ${DISPATCH_PAYLOAD_LIMIT}`;
  const required = config.MetaRequired ?? [];
  const allowed = new Set([...required, ...(config.MetaOptional ?? [])]);
  const unpermitted = Object.keys(req.meta).filter((k) => !allowed.has(k));
  if (unpermitted.length > 0) return `Dispatch request included unpermitted metadata keys: ${goList(unpermitted)}`;
  const missing = required.filter((k) => !Object.hasOwn(req.meta, k));
  if (missing.length > 0) return `Dispatch did not provide required meta keys: ${goList(missing)}`;
  return undefined;
}

/** Nomad's DispatchedID: `<parent>/dispatch-[<prefix>-]<unix seconds>-<8 hex>`. */
export function dispatchedIdOf(parentId: string, nowMs: number, prefix = '', suffix = randomBytes(4).toString('hex')): string {
  return `${parentId}/dispatch-${prefix ? `${prefix}-` : ''}${Math.floor(nowMs / 1000)}-${suffix}`;
}

/** The child a dispatch registers: the parent's job as Nomad's Dispatch copies it, and its instances. */
export function dispatchedJob(parent: JobEntry, childId: string, req: DispatchRequest): { job: Json; allocs: AllocSpec[] } {
  const current = parent.versions.at(-1)!;
  const jobMeta = { ...((current.job['Meta'] as Record<string, string> | undefined) ?? {}), ...req.meta };
  const payload = req.payload.length > 0 ? Buffer.from(req.payload).toString('base64') : undefined;
  const job: Json = {
    ...current.job,
    ID: childId,
    Name: childId,
    ParentID: parent.id,
    Dispatched: true,
    ...(Object.keys(jobMeta).length > 0 && { Meta: jobMeta }),
    ...(req.idempotencyToken && { DispatchIdempotencyToken: req.idempotencyToken }),
    ...(payload && { Payload: payload }),
  };
  // Each instance's meta is the job's under its group's, as the job loader merges them (job-to-allocs.ts).
  const groupMeta = new Map(taskGroupsOf(current.job).map((g) => [String(g['Name']), (g['Meta'] as Record<string, string> | undefined) ?? {}]));
  const allocs = current.allocs.map((s): AllocSpec => {
    const meta = { ...jobMeta, ...groupMeta.get(s.group) };
    return { ...s, job: childId, parentJob: parent.id, ...(Object.keys(meta).length > 0 && { meta }), ...(payload && { payload }) };
  });
  return { job, allocs };
}

/** Dispatches job `id` (Nomad's Job.Dispatch), answered once the child is durable; a refusal is an HttpError in Nomad's words. */
export function dispatch(registry: JobRegistry, id: string, req: DispatchRequest, now: () => number = Date.now): Promise<DispatchResult> {
  return registry.serialize(id, async () => {
    const parent = registry.getJob(id);
    if (!parent) throw new HttpError(404, 'parameterized job not found');
    const refused = dispatchRefusal(id, parent.versions.at(-1)!.job, parent.stop, req);
    if (refused) throw new HttpError(400, refused);
    if (req.idempotencyToken) {
      const earlier = registry.listJobs().find((j) => {
        const job = j.versions.at(-1)!.job;
        return job['ParentID'] === id && job['DispatchIdempotencyToken'] === req.idempotencyToken;
      });
      // Nomad: the child with this token has not been garbage collected; registering another would break the token.
      if (earlier) return { DispatchedJobID: earlier.id, EvalID: '', EvalCreateIndex: 0, JobCreateIndex: earlier.createIndex, Index: earlier.modifyIndex };
    }
    const childId = dispatchedIdOf(id, now(), req.idPrefixTemplate);
    const badId = unsafeNameReason(childId, 'job id');
    if (badId) throw new HttpError(400, `the dispatched job's ID ${JSON.stringify(childId)} ${badId}: give a shorter -id-prefix-template without "\\" or whitespace`);
    const { job, allocs } = dispatchedJob(parent, childId, req);
    const result = await registry.register(job, allocs, '');
    return { DispatchedJobID: childId, EvalID: result.EvalID, EvalCreateIndex: result.EvalCreateIndex, JobCreateIndex: result.JobModifyIndex, Index: result.Index };
  });
}
