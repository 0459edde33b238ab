/**
 * The zod schema of the Nomad jobspec subset allocrun runs, over the normalised file structure (blocks
 * already unwrapped from hcl2json's lists, see normalize.ts). Keys are Nomad's (`kill_timeout`); values
 * come out converted: durations in ms, log sizes in bytes.
 */
import { constants as osConstants } from 'node:os';
import { z } from 'zod';
import type { PathSegment } from './spec-error.ts';
import { durationSchema, int, stringMapSchema } from './schema-primitives.ts';
import { serviceKeysAt, serviceListSchema } from './service-schema.ts';
import { templateKeysAt, templateListSchema } from './template-schema.ts';
import { periodicSchema } from './periodic.ts';
import { dispatchPayloadSchema, parameterizedSchema } from './parameterized.ts';

export { durationSchema, stringMapSchema };

/** Nomad's job types. */
export const JOB_TYPES = ['service', 'batch', 'system', 'sysbatch'] as const;
/** Nomad's lifecycle hooks. */
export const LIFECYCLE_HOOKS = ['prestart', 'poststart', 'poststop'] as const;
/** Nomad's restart modes. */
export const RESTART_MODES = ['fail', 'delay'] as const;
/** More instances than this is a typo, not a local run; the cap also bounds memory. */
export const MAX_COUNT = 1000;

/**
 * Nomad blocks and attributes allocrun accepts but does not act on (scheduling, networking, service
 * discovery, secrets): a job file written for Nomad still loads, with a warning naming each.
 */
export const IGNORED_KEYS = {
  job: ['id', 'name', 'region', 'priority', 'all_at_once', 'constraint', 'affinity', 'spread', 'migrate',
    'multiregion', 'vault', 'consul', 'ui', 'vault_token',
    'consul_token'],
  group: ['ephemeral_disk', 'constraint', 'affinity', 'spread', 'migrate',
    'volume', 'consul', 'vault', 'stop_after_client_disconnect', 'max_client_disconnect', 'disconnect',
    'prevent_reschedule_on_lost'],
  task: ['vault', 'consul', 'constraint', 'affinity', 'volume_mount', 'identity',
    'csi_plugin', 'scaling', 'kind', 'action', 'schedule'],
  resources: ['network', 'device', 'numa', 'disk', 'iops', 'secrets'],
  network: ['hostname', 'dns', 'cni', 'mbits'],
} as const;

const ignored = (keys: readonly string[]): Record<string, z.ZodOptional<z.ZodUnknown>> =>
  Object.fromEntries(keys.map((k) => [k, z.unknown().optional()]));

const SIGNALS = new Set(Object.keys(osConstants.signals));

/** A signal name as Nomad writes it (`SIGINT`). */
const signalSchema = z.string().refine((s) => SIGNALS.has(s), {
  message: `must be a signal name such as "SIGTERM", "SIGINT" or "SIGQUIT"`,
});

/** The `restart` block; every field optional because it is merged over the group's or the job type's. */
export const restartSchema = z.strictObject({
  attempts: int(0).optional(),
  interval: durationSchema.optional(),
  delay: durationSchema.optional(),
  mode: z.enum(RESTART_MODES).optional(),
  render_templates: z.boolean().optional(),
});

const logsSchema = z.strictObject({
  max_files: int(1).default(10),
  /** Megabytes in the file; bytes in the spec. */
  max_file_size: int(1, 1024 * 1024).default(10),
  disabled: z.boolean().optional(),
});

const resourcesSchema = z.strictObject({
  cpu: int(1).optional(),
  cores: int(1).optional(),
  memory: int(10).optional(),
  memory_max: int(10).optional(),
  ...ignored(IGNORED_KEYS.resources),
});

/** go-getter's client modes. */
export const ARTIFACT_MODES = ['any', 'file', 'dir'] as const;

/**
 * One `artifact` block (Nomad's TaskArtifact). Its source, options and destination rules are checked by
 * artifact-rules.ts (which can name the option at fault); `destination` defaults in job-to-allocs.ts.
 */
export const artifactSchema = z.strictObject({
  source: z.string().min(1, 'must not be empty: write the URL or the absolute path to fetch'),
  destination: z.string().min(1, 'must not be empty (leave "destination" out for "local/")').optional(),
  mode: z.enum(ARTIFACT_MODES).optional(),
  options: stringMapSchema.optional(),
  headers: stringMapSchema.optional(),
  insecure: z.boolean().optional(),
  chown: z.boolean().optional(),
});

const taskSchema = z.strictObject({
  driver: z.string().min(1, 'must not be empty'),
  config: z.record(z.string(), z.unknown()).default({}),
  env: stringMapSchema.optional(),
  meta: stringMapSchema.optional(),
  leader: z.boolean().optional(),
  lifecycle: z.strictObject({ hook: z.enum(LIFECYCLE_HOOKS), sidecar: z.boolean().optional() }).optional(),
  restart: restartSchema.optional(),
  kill_timeout: durationSchema.optional(),
  kill_signal: signalSchema.optional(),
  shutdown_delay: durationSchema.optional(),
  logs: logsSchema.optional(),
  resources: resourcesSchema.optional(),
  /** The account the task runs as; whether the agent can switch to it is the driver's check (rules.ts). */
  user: z.string().min(1, 'must not be empty (leave "user" out to run as the agent\'s user)').optional(),
  /** Normalised to a list (normalize.ts): a task may have many artifact blocks. */
  artifact: z.array(artifactSchema).optional(),
  service: serviceListSchema.optional(),
  /** Normalised to a list (normalize.ts): a task may have many template blocks. */
  template: templateListSchema.optional(),
  dispatch_payload: dispatchPayloadSchema.optional(),
  ...ignored(IGNORED_KEYS.task),
});

/**
 * The `reschedule` block (job or group level; the group's fields win, over the job type's defaults): how the
 * scheduler replaces a failed allocation (src/api/reschedule-policy.ts). `delay_function` is checked by the rules,
 * in Nomad's words, on the merged policy.
 */
export const rescheduleSchema = z.strictObject({
  attempts: int(0).optional(),
  interval: durationSchema.optional(),
  delay: durationSchema.optional(),
  delay_function: z.string().optional(),
  max_delay: durationSchema.optional(),
  unlimited: z.boolean().optional(),
});

/** Nomad's `health_check` modes for deployments. */
export const HEALTH_CHECKS = ['checks', 'task_states', 'manual'] as const;

/**
 * The `update` block (job or group level; the group's fields win). The client acts on the health fields
 * (min_healthy_time, healthy_deadline, health_check); the rollout fields are the server's and are warned
 * about by the rules when set. `max_parallel = 0` turns deployments off, as in Nomad.
 */
export const updateSchema = z.strictObject({
  max_parallel: int(0).optional(),
  health_check: z.enum(HEALTH_CHECKS).optional(),
  min_healthy_time: durationSchema.optional(),
  healthy_deadline: durationSchema.optional(),
  progress_deadline: durationSchema.optional(),
  auto_revert: z.boolean().optional(),
  auto_promote: z.boolean().optional(),
  canary: int(0).optional(),
  stagger: durationSchema.optional(),
});

/** Nomad's network modes allocrun runs: host only (no network namespace, so no bridge, CNI or none). */
export const NETWORK_MODES = ['host'] as const;

/** One `port "label" {}`: `static` reserves that host port, otherwise one is picked from the dynamic range. */
const portSchema = z.strictObject({
  static: int(1, 65535).optional(),
  to: z.number().int('expected a whole number').min(-1, 'must be at least -1').max(65535, 'must be at most 65535').optional(),
  /** Accepted, warned about by the rules: allocrun has one host network. */
  host_network: z.string().optional(),
  ignore_collision: z.boolean().optional(),
});

/** The group's `network` block (host mode): its ports, keyed by label. */
export const networkSchema = z.strictObject({
  mode: z
    .string()
    .refine((m) => (NETWORK_MODES as readonly string[]).includes(m), {
      error: (issue) => `network mode ${JSON.stringify(issue.input)} is not supported: allocrun runs tasks in "host" networking mode only (no bridge or CNI network namespace)`,
    })
    .default('host'),
  port: z.record(z.string(), portSchema).default({}),
  ...ignored(IGNORED_KEYS.network),
});

/**
 * The group's `scaling` block (Nomad's horizontal scaling policy): the bounds `job scale` keeps the group's count
 * in, as Nomad's server does. `policy` is an external autoscaler's (Nomad itself does not read it either): kept as
 * written. `min` defaults to the group's count (rules.ts), `enabled` to true.
 */
export const scalingSchema = z.strictObject({
  min: int(0, MAX_COUNT).optional(),
  // Required, as in Nomad: rules.ts says so in Nomad's words.
  max: int(0, MAX_COUNT).optional(),
  enabled: z.boolean().optional(),
  policy: z.record(z.string(), z.unknown()).optional(),
  // Nomad's API JSON says which kind of policy it is; a group's is always horizontal.
  type: z.literal('horizontal').optional(),
});

const groupSchema = z.strictObject({
  network: networkSchema.optional(),
  service: serviceListSchema.optional(),
  count: int(0, MAX_COUNT).default(1),
  restart: restartSchema.optional(),
  shutdown_delay: durationSchema.optional(),
  meta: stringMapSchema.optional(),
  update: updateSchema.optional(),
  reschedule: rescheduleSchema.optional(),
  scaling: scalingSchema.optional(),
  // Optional here so a missing one is reported once, by the rules, as "needs at least one task".
  task: z.record(z.string(), taskSchema).default({}),
  ...ignored(IGNORED_KEYS.group),
});

/** A job's body (what is inside `job "name" { ... }`), normalised. */
export const jobSchema = z.strictObject({
  type: z.enum(JOB_TYPES).default('service'),
  namespace: z.string().min(1, 'must not be empty').optional(),
  datacenters: z.array(z.string()).optional(),
  /** The node pool the job runs in (placement: constraints.ts; whether it exists: the agent, api/node-pools.ts). */
  node_pool: z.string().optional(),
  meta: stringMapSchema.optional(),
  update: updateSchema.optional(),
  reschedule: rescheduleSchema.optional(),
  periodic: periodicSchema.optional(),
  parameterized: parameterizedSchema.optional(),
  group: z.record(z.string(), groupSchema).default({}),
  ...ignored(IGNORED_KEYS.job),
});

/** The parsed job body. */
export type JobBody = z.output<typeof jobSchema>;
/** One parsed group. */
export type GroupBody = z.output<typeof groupSchema>;
/** One parsed network block. */
export type NetworkBody = z.output<typeof networkSchema>;
/** One parsed task. */
export type TaskBody = z.output<typeof taskSchema>;
/** One parsed artifact block. */
export type ArtifactBody = z.output<typeof artifactSchema>;
/** One parsed update block (partial: merged later). */
export type UpdateBody = z.output<typeof updateSchema>;
/** One parsed reschedule block (partial: merged later). */
export type RescheduleBody = z.output<typeof rescheduleSchema>;
/** One parsed restart block (partial: merged later). */
export type RestartBody = z.output<typeof restartSchema>;

const KEYS = {
  job: Object.keys(jobSchema.shape),
  group: Object.keys(groupSchema.shape),
  task: Object.keys(taskSchema.shape),
  restart: Object.keys(restartSchema.shape),
  update: Object.keys(updateSchema.shape),
  reschedule: Object.keys(rescheduleSchema.shape),
  scaling: Object.keys(scalingSchema.shape),
  logs: Object.keys(logsSchema.shape),
  resources: Object.keys(resourcesSchema.shape),
  network: Object.keys(networkSchema.shape),
  port: Object.keys(portSchema.shape),
  artifact: Object.keys(artifactSchema.shape),
  lifecycle: ['hook', 'sidecar'],
};

/** The keys allowed in the block at `path` (relative to the job body), for "did you mean" suggestions. */
export function jobKeysAt(path: readonly PathSegment[]): readonly string[] {
  let level: keyof typeof KEYS = 'job';
  let i = 0;
  while (i < path.length) {
    const seg = path[i];
    if (level === 'job' && seg === 'group') [level, i] = ['group', i + 2];
    else if (level === 'group' && seg === 'task') [level, i] = ['task', i + 2];
    else if ((level === 'group' || level === 'task') && seg === 'restart') [level, i] = ['restart', i + 1];
    else if ((level === 'job' || level === 'group') && seg === 'update') [level, i] = ['update', i + 1];
    else if ((level === 'job' || level === 'group') && seg === 'reschedule') [level, i] = ['reschedule', i + 1];
    else if (level === 'group' && seg === 'network') [level, i] = ['network', i + 1];
    else if (level === 'group' && seg === 'scaling') [level, i] = ['scaling', i + 1];
    else if (level === 'network' && seg === 'port') [level, i] = ['port', i + 2];
    else if (level === 'task' && seg === 'artifact') [level, i] = ['artifact', i + 2];
    else if ((level === 'group' || level === 'task') && seg === 'service') return serviceKeysAt(path.slice(i + 1)) ?? [];
    else if (level === 'task' && seg === 'template') return templateKeysAt(path.slice(i + 1));
    else if (level === 'task' && (seg === 'logs' || seg === 'resources' || seg === 'lifecycle')) [level, i] = [seg, i + 1];
    else return [];
  }
  return KEYS[level];
}
