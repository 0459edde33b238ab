/**
 * The request shapes of the HTTP API as zod schemas (the validator the job files already use), wired into
 * Fastify's validation so every route gets checked, typed input and a 400 naming the field otherwise.
 */
import { constants as osConstants } from 'node:os';
import { z, type ZodType } from 'zod';
import type { FastifySchemaCompiler } from 'fastify';

/** Nomad's query booleans: `true`/`false`, `1`/`0`, or a bare flag. */
export const queryBool = z
  .enum(['true', 'false', '1', '0', ''])
  .optional()
  .transform((v) => v === 'true' || v === '1' || v === '');

/** Nomad's durations in query strings (`wait=30s`, `5m`, or plain seconds). */
const waitSchema = z
  .string()
  .regex(/^\d+(ms|s|m|h)?$/, 'must be a duration like "30s" or "5m"')
  .optional()
  .transform((v) => {
    if (v === undefined) return undefined;
    const n = Number.parseInt(v, 10);
    const unit = /ms|s|m|h/.exec(v)?.[0] ?? 's';
    return n * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit]!;
  });

/** A blocking query's parameters (`?index=&wait=`), with the namespace and prefix every list takes. */
export const blockingQuery = z.looseObject({
  index: z.coerce.number().int().min(0).optional(),
  wait: waitSchema,
  prefix: z.string().optional(),
  namespace: z.string().optional(),
});

/** `{ "Job": {...} }`: the job's own fields are checked by the job loader, which names every problem. */
export const registerBody = z.looseObject({
  Job: z.looseObject({ ID: z.string().min(1, 'must not be empty') }),
  EnforceIndex: z.boolean().optional(),
  JobModifyIndex: z.number().int().optional(),
});

/** `POST /v1/jobs/parse`. */
export const parseBody = z.looseObject({ JobHCL: z.string(), Canonicalize: z.boolean().optional() });

/** `DELETE /v1/job/:id`. */
export const deregisterQuery = z.looseObject({ purge: queryBool, namespace: z.string().optional() });

/** `POST /v1/client/allocation/:id/restart`. */
export const restartBody = z.looseObject({ TaskName: z.string().optional(), AllTasks: z.boolean().optional() }).optional();

const SIGNALS = Object.keys(osConstants.signals);

/** `POST /v1/client/allocation/:id/signal`. */
export const signalBody = z.looseObject({
  Signal: z.string().refine((s) => SIGNALS.includes(s), 'must be a signal name such as "SIGHUP" or "SIGUSR1"').optional(),
  Task: z.string().optional(),
}).optional();

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
  const message = result.error.issues.map((i) => `${i.path.length > 0 ? `${i.path.join('.')}: ` : ''}${i.message}`).join('\n');
  return { error: Object.assign(new Error(message), { statusCode: 400 }) };
};
