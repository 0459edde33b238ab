/** Nomad's job endpoints: register, parse, validate, read, list, versions, summary, stop and purge. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { BUILTIN_DRIVER_CHECKS } from '../../drivers/config-checks.ts';
import { formatProblem, isSpecError, parseJob, type LoadedJob } from '../../jobspec/index.ts';
import { parameterizedUpdateRefusal } from '../../jobspec/parameterized.ts';
import { blockingQuery, HttpError, notFound, type ApiContext } from '../context.ts';
import { canonicalJob, withoutDefaults } from '../job-canonical.ts';
import { jobToApiJson, type Json } from '../job-json.ts';
import { enforceIndexRefusal } from '../enforce-index.ts';
import { blockingList, ListCache, StubMemo } from '../list-cache.ts';
import { refuseNonexistentNodePool } from '../node-pools.ts';
import type { AllocEntry, JobEntry } from '../job-registry.ts';
import { blockingQuery as blockingQuerySchema, deregisterQuery, parseBody, queryDuration, registerBody } from '../schemas.ts';
import { admitSubmission, DEFAULT_JOB_MAX_SOURCE_SIZE, readSubmission, type SubmissionInput, type SubmissionSource } from '../job-submissions.ts';

const idParams = z.object({ id: z.string().min(1) });
/** Nomad parses `version` with strconv.ParseUint: required, a whole number. */
const submissionQuery = z.looseObject({
  version: z.string({ error: 'Unable to parse job submission version parameter: give ?version=N, a job version' })
    .regex(/^\d+$/, 'Unable to parse job submission version parameter: expected a whole number').transform(Number),
  index: z.coerce.number().int().min(0).optional(),
  wait: queryDuration,
  namespace: z.string().optional(),
});

/**
 * A SpecError's problems as `allocrun validate` prints them. The request has no file name; positions are
 * kept only where they point into text the user wrote (HCL), not into a re-serialised request.
 */
function problemLines(err: unknown, positions: boolean): string[] | undefined {
  if (!isSpecError(err)) return undefined;
  return err.problems.map((p) => formatProblem({ ...p, file: undefined, ...(!positions && { line: undefined, column: undefined }) }));
}

/**
 * Checks an API Job through the job-file loader, with the agent's drivers and their config rules (the
 * built-in ones); a 400 listing every problem when it is invalid.
 */
export async function loadApiJob(job: Json): Promise<LoadedJob> {
  try {
    return await parseJob(JSON.stringify({ Job: job }), { format: 'json', drivers: BUILTIN_DRIVER_CHECKS });
  } catch (err) {
    const lines = problemLines(err, false);
    if (!lines) throw err;
    throw new HttpError(400, lines.join('\n'));
  }
}

/**
 * Where the new version's job file comes from: the request's, or (Nomad's upsertJobImpl) without one, that of the
 * version the body's `Job.Version` names when the job exists: a job read back and sent again keeps its file. One
 * difference, on purpose: Nomad reads an absent Version as 0 and gives such a job version 0's file, which is not
 * what it was registered from (a YAML file, which has no Nomad format, would show version 0's HCL); here it has none.
 */
function submissionSource(given: SubmissionInput | undefined, job: Json, exists: boolean): SubmissionSource | undefined {
  if (given) return { given };
  const version = job['Version'];
  return exists && typeof version === 'number' && Number.isInteger(version) && version >= 0 ? { version } : undefined;
}

export const warningText = (loaded: LoadedJob): string => loaded.warnings.map((w) => formatProblem({ ...w, file: undefined, line: undefined, column: undefined })).join('\n');

/** Registers the job routes. */
export function jobRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { registry } = ctx;
  const lists = new ListCache();
  // Allocation stubs (an allocation's ModifyIndex moves with everything its stub shows) and job stubs (the
  // job's and its allocations' newest index: the stub's summary and status come from the allocations).
  const allocStubs = new StubMemo((a: AllocEntry) => registry.allocStubJson(a));
  const jobStubs = new StubMemo((j: JobEntry) => registry.jobStubJson(j));
  const jobAllocsIndex = (id: string) => Math.max(0, ...registry.allocsOfJob(id).map((a) => a.modifyIndex));

  const register = async (body: z.output<typeof registerBody>, pathId?: string) => {
    const job = body.Job as Json & { ID: string };
    if (pathId !== undefined && pathId !== job.ID) throw new HttpError(400, `Job ID does not match name: ${JSON.stringify(job.ID)} in the body, ${JSON.stringify(pathId)} in the path`);
    // Checked inside the job's queue, so registrations are applied in the order they arrived.
    return registry.serialize(job.ID, async () => {
      const loaded = await loadApiJob(withoutDefaults(job));
      refuseNonexistentNodePool(job, registry.node);
      const current = registry.getJob(job.ID);
      const transition = current && parameterizedUpdateRefusal(current.versions.at(-1)!.job, job);
      if (transition) throw new HttpError(400, transition);
      const refused = body.EnforceIndex ? enforceIndexRefusal(body.JobModifyIndex ?? 0, current?.jobModifyIndex) : undefined;
      if (refused) throw new HttpError(400, refused);
      const { submission, warning } = admitSubmission(body.Submission, DEFAULT_JOB_MAX_SOURCE_SIZE);
      const warnings = [warningText(loaded), warning].filter(Boolean).join('\n');
      const { Index, ...result } = await registry.register(job, loaded.allocs, warnings, { submission: submissionSource(submission, job, current !== undefined) });
      return { ...result, Index, KnownLeader: true, LastContact: 0 };
    });
  };

  for (const method of ['PUT', 'POST'] as const) {
    app.route({ method, url: '/v1/jobs', schema: { body: registerBody }, handler: async (req) => register(req.body as z.output<typeof registerBody>) });
  }
  app.route({
    method: ['PUT', 'POST'],
    url: '/v1/job/:id',
    schema: { params: idParams, body: registerBody },
    handler: async (req) => register(req.body as z.output<typeof registerBody>, (req.params as { id: string }).id),
  });

  app.post('/v1/jobs/parse', { schema: { body: parseBody } }, async (req) => {
    const { JobHCL, Canonicalize, Variables, HCLv1 } = req.body as z.output<typeof parseBody>;
    if (HCLv1) throw new HttpError(400, 'HCLv1: allocrun parses job files as HCL2 only; send the job without HCLv1');
    try {
      // As Nomad's agent: Variables is one var file, and values for undeclared variables are ignored (not strict).
      const variables = Variables ? { files: [{ file: 'Variables', text: Variables }], strict: false } : {};
      const loaded = await parseJob(JobHCL, { format: 'hcl', drivers: BUILTIN_DRIVER_CHECKS, variables });
      const job = jobToApiJson(loaded.job.name, loaded.job.body);
      return Canonicalize ? canonicalJob(job) : job;
    } catch (err) {
      const lines = problemLines(err, true);
      if (!lines) throw err;
      throw new HttpError(400, lines.join('\n'));
    }
  });

  app.route({
    method: ['PUT', 'POST'],
    url: '/v1/validate/job',
    schema: { body: registerBody },
    handler: async (req) => {
      try {
        const loaded = await loadApiJob(withoutDefaults((req.body as z.output<typeof registerBody>).Job));
        refuseNonexistentNodePool((req.body as z.output<typeof registerBody>).Job, registry.node);
        return { DriverConfigValidated: true, ValidationErrors: [], Error: '', Warnings: warningText(loaded) };
      } catch (err) {
        if (!(err instanceof HttpError)) throw err;
        const errors = err.message.split('\n');
        return { DriverConfigValidated: false, ValidationErrors: errors, Error: errors.join('\n'), Warnings: '' };
      }
    },
  });

  app.get('/v1/jobs', { schema: { querystring: blockingQuerySchema } }, async (req, reply) => {
    // Nomad's jobs list answers at the newest index of the jobs and job_summary tables: a stub shows the job,
    // its summary and its status, so an allocation update that changes none of them (a task event, a health
    // verdict) wakes no one here.
    return blockingList(ctx, lists, req, reply, 'jobs', () => Math.max(registry.jobsIndex, registry.summaryIndex), () => registry.listJobs().map((j) => jobStubs.of(j, Math.max(j.modifyIndex, registry.summaryIndexOf(j.id)))));
  });

  const idOf = (req: { params: unknown }) => (req.params as { id: string }).id;

  // An unknown job's reads answer as Nomad's (command/agent/job_endpoint.go over nomad/job_endpoint.go): the job,
  // its summary and its versions are 404s at the index of their table (jobs, job_summary, job_version), after a
  // blocking wait like any read, since the job may be registered meanwhile; its allocations are a list like any.
  app.get('/v1/job/:id', { schema: { params: idParams, querystring: blockingQuerySchema } }, async (req, reply) => {
    const id = idOf(req);
    await blockingQuery(ctx, req, reply, () => registry.getJob(id)?.modifyIndex ?? registry.jobsIndex);
    const job = registry.getJob(id);
    if (!job) throw notFound('job');
    return registry.jobJson(job);
  });

  app.get('/v1/job/:id/allocations', { schema: { params: idParams, querystring: blockingQuerySchema } }, async (req, reply) => {
    const id = idOf(req);
    // Its scope is the job's allocations: a change to another job's allocation does not wake it. Those of a job
    // purged or never registered are listed as well (none, or what the purge left), as Nomad's AllocsByJob does.
    return blockingList(ctx, lists, req, reply, `job-allocs:${id}`, () => jobAllocsIndex(id), () => registry.allocsOfJob(id).map((a) => allocStubs.of(a, a.modifyIndex)));
  });

  app.get('/v1/job/:id/summary', { schema: { params: idParams, querystring: blockingQuerySchema } }, async (req, reply) => {
    const id = idOf(req);
    const indexOf = () => {
      const job = registry.getJob(id);
      return job ? Math.max(job.modifyIndex, registry.summaryIndexOf(id)) : registry.summaryIndex;
    };
    await blockingQuery(ctx, req, reply, indexOf);
    const job = registry.getJob(id);
    if (!job) throw notFound('job');
    return registry.summaryJson(job);
  });

  app.get('/v1/job/:id/versions', { schema: { params: idParams, querystring: blockingQuerySchema } }, async (req, reply) => {
    const id = idOf(req);
    await blockingQuery(ctx, req, reply, () => registry.getJob(id)?.modifyIndex ?? registry.jobsIndex);
    const job = registry.getJob(id);
    // Nomad's words for a job without versions (unknown, or purged).
    if (!job) throw new HttpError(404, 'job versions not found');
    return { Versions: [...job.versions].reverse().map((v) => registry.jobJson(job, v)), Diffs: null, Index: job.modifyIndex, KnownLeader: true, LastContact: 0 };
  });

  // Nomad's GetJobSubmission: the version is required (a 400 otherwise); none kept is its 404, whether the job,
  // the version or only its source is missing.
  app.get('/v1/job/:id/submission', { schema: { params: idParams, querystring: submissionQuery } }, async (req, reply) => {
    const id = idOf(req);
    const { version } = req.query as z.output<typeof submissionQuery>;
    await blockingQuery(ctx, req, reply, () => registry.getJob(id)?.modifyIndex ?? registry.jobsIndex);
    const job = registry.getJob(id);
    const submission = job && readSubmission(ctx.store, job, version);
    if (!submission) throw new HttpError(404, 'job source not found');
    return submission;
  });

  app.delete('/v1/job/:id', { schema: { params: idParams, querystring: deregisterQuery } }, async (req) => {
    const { id } = req.params as { id: string };
    const { purge } = req.query as z.output<typeof deregisterQuery>;
    const result = await registry.serialize(id, () => registry.deregister(id, purge));
    if (!result) throw notFound('job');
    return result;
  });
}
