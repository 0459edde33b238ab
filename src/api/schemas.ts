/**
 * The request shapes of the HTTP API as zod schemas (the validator the job files already use), wired into
 * Fastify's validation so every route gets checked, typed input and a 400 naming the field otherwise.
 */
import { constants as osConstants } from 'node:os';
import { z, type ZodType } from 'zod';
import type { FastifySchemaCompiler } from 'fastify';
import { parseDuration } from '../jobspec/duration.ts';
import { SUBMISSION_FORMATS } from './job-submissions.ts';

/** What Go's `strconv.ParseBool` reads as true and as false: Nomad parses every query flag with it. */
const GO_TRUE = ['1', 't', 'T', 'TRUE', 'true', 'True'];
const GO_FALSE = ['0', 'f', 'F', 'FALSE', 'false', 'False'];

/** A query parameter as Go's `URL.Query().Get` reads it: the first value when it is repeated. */
const firstValue = z.union([z.string(), z.array(z.string())]).optional().transform((v) => (Array.isArray(v) ? v[0] : v));

/** Go's `strconv.ParseBool`; undefined for anything else. */
export function parseGoBool(text: string): boolean | undefined {
  if (GO_TRUE.includes(text)) return true;
  if (GO_FALSE.includes(text)) return false;
  return undefined;
}

/**
 * Nomad's query booleans, parsed as Go's `strconv.ParseBool` parses them; absent or empty is false (Nomad
 * reads a flag only when its value is not empty).
 */
export const queryBool = firstValue.transform((v, ctx) => {
  if (v === undefined || v === '') return false;
  const b = parseGoBool(v);
  if (b !== undefined) return b;
  ctx.addIssue({ code: 'custom', message: `${JSON.stringify(v)} is not a boolean: use one of ${[...GO_TRUE, ...GO_FALSE].join(', ')}` });
  return z.NEVER;
});

/** A Go duration in a query string (`wait=30s`, `1m30s`, `500ms`), as Go's `time.ParseDuration` reads it, in ms. */
export const queryDuration = firstValue.transform((v, ctx) => {
  if (v === undefined || v === '') return undefined;
  try {
    return parseDuration(v);
  } catch {
    ctx.addIssue({ code: 'custom', message: `${JSON.stringify(v)} is not a Go duration such as "30s", "1m30s" or "500ms"` });
    return z.NEVER;
  }
});
const waitSchema = queryDuration;

/** A blocking query's parameters (`?index=&wait=`), with the namespace and prefix every list takes. */
export const blockingQuery = z.looseObject({
  index: z.coerce.number().int().min(0).optional(),
  wait: waitSchema,
  prefix: z.string().optional(),
  namespace: z.string().optional(),
});

/**
 * A request body decoded as Go's `encoding/json` decodes into Nomad's request structs: field names match
 * case-insensitively, a `null` field is its zero value (absent here), and an empty or `null` body, where
 * Nomad accepts one, is an empty object.
 */
export function goBody<S extends z.core.$ZodLooseShape>(shape: S, opts: { emptyIsObject: boolean }) {
  const names = new Map(Object.keys(shape).map((k) => [k.toLowerCase(), k]));
  return z.preprocess((body) => {
    if ((body === undefined || body === null) && opts.emptyIsObject) return {};
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(body)) {
      if (v === null) continue;
      const name = names.get(k.toLowerCase()) ?? k;
      if (!(name in out) || name === k) out[name] = v;
    }
    return out;
  }, z.looseObject(shape, {
    error: (issue) => (issue.input === undefined || issue.input === null ? `the request body is empty: expected a JSON object with ${Object.keys(shape).join(', ')}` : 'the request body must be a JSON object'),
  }));
}

/**
 * `Submission`: the job file the job was read from (Nomad 1.6+, job-submissions.ts), as `nomad job run` sends it.
 * Nomad's shape; `VariableFlags` and `Variables` are those of an HCL2 file (absent: none).
 */
const submissionBody = z.object({
  Source: z.string({ error: (issue) => (issue.input === undefined ? 'missing: the job file\'s text' : 'must be a string: the job file\'s text') }),
  Format: z.enum(SUBMISSION_FORMATS, { error: (issue) => `must be one of ${SUBMISSION_FORMATS.map((f) => JSON.stringify(f)).join(', ')} (how Source is written), not ${JSON.stringify(issue.input)}` }),
  VariableFlags: z.record(z.string(), z.string({ error: 'must be a string: the value of a -var flag' }), { error: 'must be an object of -var flags, { "name": "value" }' }).nullish().transform((v) => v ?? null),
  Variables: z.string({ error: 'must be a string: the var files\' content' }).nullish().transform((v) => v ?? ''),
}, { error: (issue) => (issue.input === undefined ? 'missing' : 'must be a JSON object: { Source, Format, VariableFlags, Variables }') }).loose();

/** `{ "Job": {...} }`: the job's own fields are checked by the job loader, which names every problem. */
export const registerBody = goBody({
  Job: z.looseObject({ ID: z.string().min(1, 'must not be empty') }, {
    error: (issue) => (issue.input === undefined ? 'missing: send the job as { "Job": { "ID": …, "TaskGroups": [ … ] } }' : 'must be a JSON object: the job'),
  }),
  EnforceIndex: z.boolean().optional(),
  JobModifyIndex: z.number().int().optional(),
  Submission: submissionBody.optional(),
}, { emptyIsObject: false });

/** `POST /v1/jobs/parse`: `Variables` is var-file content (HCL `name = value` lines) for the job's input variables. */
export const parseBody = goBody({ JobHCL: z.string(), Canonicalize: z.boolean().optional(), Variables: z.string().optional(), HCLv1: z.boolean().optional() }, { emptyIsObject: false });

/** `DELETE /v1/job/:id`. */
export const deregisterQuery = z.looseObject({ purge: queryBool, namespace: z.string().optional() });

/** `POST /v1/client/allocation/:id/restart`: an empty body restarts every running task, as in Nomad. */
export const restartBody = goBody({ TaskName: z.string().optional(), AllTasks: z.boolean().optional() }, { emptyIsObject: true });

const SIGNALS = Object.keys(osConstants.signals);

/** `POST /v1/client/allocation/:id/signal`: no `Task` (or `null`) signals every task. */
export const signalBody = goBody({
  Signal: z.string().refine((s) => s === '' || SIGNALS.includes(s), 'must be a signal name such as "SIGHUP" or "SIGUSR1"').optional(),
  Task: z.string().optional(),
}, { emptyIsObject: true });

/** `GET /v1/client/fs/logs/:id`. */
export const logsQuery = z.looseObject({
  task: z.string().min(1, 'names the task whose logs to read'),
  type: z.enum(['stdout', 'stderr']),
  follow: queryBool,
  plain: queryBool,
  origin: z.enum(['start', 'end']).default('start'),
  offset: z.coerce.number().int().min(0).default(0),
});

/** `GET /v1/event/stream`. */
export const eventStreamQuery = z.looseObject({
  index: z.coerce.number().int().min(0).default(0),
  topic: z.union([z.string(), z.array(z.string())]).optional().transform((t) => (t === undefined ? [] : Array.isArray(t) ? t : [t])),
  namespace: z.string().default('default'),
});

/** Lets Fastify validate with zod schemas: the parsed (and transformed) value replaces the input. */
export const zodValidatorCompiler: FastifySchemaCompiler<ZodType> = ({ schema }) => (data) => {
  const result = schema.safeParse(data);
  if (result.success) return { value: result.data };
  // zod's own type messages open with "Invalid input: "; the field's path already says where.
  const message = result.error.issues.map((i) => `${i.path.length > 0 ? `${i.path.join('.')}: ` : ''}${i.message.replace(/^Invalid input: /, '')}`).join('\n');
  return { error: Object.assign(new Error(message), { statusCode: 400 }) };
};
