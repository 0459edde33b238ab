/**
 * The `service` block and its `check` and `check_restart` blocks (Nomad's Service / ServiceCheck /
 * CheckRestart), over the normalised structure: services and checks always lists (normalize.ts).
 * Values come out converted (durations in ms, ports as strings); rules across fields (provider, ports of
 * the network block, check needs) are in service-rules.ts.
 */
import { z } from 'zod';
import { durationSchema, int, stringMapSchema } from './schema-primitives.ts';
import type { PathSegment } from './spec-error.ts';
import { describeValue } from './zod-problems.ts';

/**
 * Service and check fields allocrun accepts and warns about (Consul-only settings that change nothing for
 * Nomad-native services), and those it refuses (the rules say why: they need Consul or a script runner).
 */
export const SERVICE_IGNORED = {
  service: ['enable_tag_override', 'tagged_addresses', 'identity', 'cluster', 'weights', 'kind'],
  check: ['notes', 'tls_server_name', 'failures_before_warning', 'advertise'],
} as const;
/** Accepted by the schema so the rules can refuse them with a reason, not as unknown keys. */
export const SERVICE_REFUSED = {
  service: ['connect'],
  check: ['expose', 'command', 'args', 'grpc_service', 'grpc_use_tls'],
} as const;

/** Nomad's on_update values for services and checks. */
export const ON_UPDATE = ['require_healthy', 'ignore_warnings', 'ignore'] as const;
/** The check types the Nomad provider runs. */
export const CHECK_TYPES = ['http', 'tcp'] as const;

const loose = (keys: readonly string[]): Record<string, z.ZodOptional<z.ZodUnknown>> =>
  Object.fromEntries(keys.map((k) => [k, z.unknown().optional()]));

/** A port: a label of the group's network block, or a number (HCL writes `port = 8080` as a number). */
const portRefSchema = z.unknown().transform((value, ctx) => {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65535) return String(value);
  ctx.issues.push({ code: 'custom', message: `expected a port label of the group's network block or a port number from 1 to 65535, got ${describeValue(value)}`, input: value });
  return z.NEVER;
});

/** A list of strings (tags); numbers convert, as HCL2's type conversion would. */
const stringListSchema = z.array(
  z.unknown().transform((value, ctx) => {
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    ctx.issues.push({ code: 'custom', message: `expected a string, got ${describeValue(value)}`, input: value });
    return z.NEVER;
  }),
);

/** `check_restart { limit grace ignore_warnings }` (service or check level; a check's fields win). */
export const checkRestartSchema = z.strictObject({
  limit: int(0).optional(),
  grace: durationSchema.optional(),
  ignore_warnings: z.boolean().optional(),
});

const checkTypeSchema = z.string().transform((raw, ctx) => {
  const type = raw.toLowerCase();
  if ((CHECK_TYPES as readonly string[]).includes(type)) return type as (typeof CHECK_TYPES)[number];
  const why =
    type === 'script' || type === 'grpc'
      ? `check type ${JSON.stringify(raw)} is not supported: Nomad-native service checks are "http" or "tcp" (${type} checks need Consul)`
      : `check type ${JSON.stringify(raw)} is not supported: use "http" or "tcp"`;
  ctx.issues.push({ code: 'custom', message: why, input: raw });
  return z.NEVER;
});

/** One `check` block. */
export const checkSchema = z.strictObject({
  name: z.string().optional(),
  type: checkTypeSchema,
  port: portRefSchema.optional(),
  path: z.string().optional(),
  method: z.string().optional(),
  header: z.record(z.string(), z.array(z.string())).optional(),
  body: z.string().optional(),
  protocol: z.enum(['http', 'https']).optional(),
  tls_skip_verify: z.boolean().optional(),
  interval: durationSchema.optional(),
  timeout: durationSchema.optional(),
  initial_status: z.enum(['passing', 'warning', 'critical']).optional(),
  success_before_passing: int(0).optional(),
  failures_before_critical: int(0).optional(),
  check_restart: checkRestartSchema.optional(),
  on_update: z.enum(ON_UPDATE).optional(),
  address_mode: z
    .string()
    .refine((m) => m === '' || m === 'host', {
      error: (issue) => `check address_mode ${JSON.stringify(issue.input)} is not supported: allocrun runs tasks in host networking mode, so checks reach the host address ("host")`,
    })
    .optional(),
  task: z.string().optional(),
  ...loose(SERVICE_IGNORED.check),
  ...loose(SERVICE_REFUSED.check),
});

/** One `service` block. */
export const serviceSchema = z.strictObject({
  name: z.string().optional(),
  provider: z.string().optional(),
  port: portRefSchema.optional(),
  tags: stringListSchema.optional(),
  canary_tags: stringListSchema.optional(),
  meta: stringMapSchema.optional(),
  canary_meta: stringMapSchema.optional(),
  address: z.string().optional(),
  address_mode: z
    .string()
    .refine((m) => m === 'auto' || m === 'host', {
      error: (issue) => `service address_mode ${JSON.stringify(issue.input)} is not supported: allocrun runs tasks in host networking mode, so a service is registered at the host address ("auto" or "host")`,
    })
    .optional(),
  task: z.string().optional(),
  on_update: z.enum(ON_UPDATE).optional(),
  check: z.array(checkSchema).optional(),
  check_restart: checkRestartSchema.optional(),
  ...loose(SERVICE_IGNORED.service),
  ...loose(SERVICE_REFUSED.service),
});

/** The `service` blocks of a group or task (always a list once normalised). */
export const serviceListSchema = z.array(serviceSchema);

/** One parsed service block. */
export type ServiceBody = z.output<typeof serviceSchema>;
/** One parsed check block. */
export type CheckBody = z.output<typeof checkSchema>;
/** One parsed check_restart block. */
export type CheckRestartBody = z.output<typeof checkRestartSchema>;

/** The keys of each block, for "did you mean" suggestions. */
export const SERVICE_KEYS = {
  service: Object.keys(serviceSchema.shape),
  check: Object.keys(checkSchema.shape),
  check_restart: Object.keys(checkRestartSchema.shape),
};

/**
 * The service-block level `path` leads to from a group or task (`service`, 0, `check`, 1, ...), or
 * undefined when it leaves the service blocks; used by jobKeysAt.
 */
export function serviceKeysAt(path: readonly PathSegment[]): readonly string[] | undefined {
  let level: keyof typeof SERVICE_KEYS = 'service';
  let i = typeof path[0] === 'number' ? 1 : 0;
  while (i < path.length) {
    const seg = path[i];
    if (level === 'service' && seg === 'check') [level, i] = ['check', typeof path[i + 1] === 'number' ? i + 2 : i + 1];
    else if ((level === 'service' || level === 'check') && seg === 'check_restart') [level, i] = ['check_restart', i + 1];
    else return undefined;
  }
  return SERVICE_KEYS[level];
}
