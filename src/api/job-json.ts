/**
 * A checked jobspec as Nomad's API Job JSON (what `POST /v1/jobs/parse` answers and `nomad job inspect`
 * prints): PascalCase fields, durations in nanoseconds, groups and tasks as named lists. Blocks allocrun
 * ignores keep their content with PascalCase keys, so they survive a parse → register round trip.
 */
import { constraintsOf } from '../jobspec/constraints.ts';
import { apiFieldOf, type GroupBody, type JobBody, type TaskBody } from '../jobspec/index.ts';
import { artifactSpecOf } from '../jobspec/artifact-rules.ts';
import { servicesJson } from './service-job-json.ts';
import { templatesJson } from './template-job-json.ts';
import { periodicJson } from '../jobspec/periodic.ts';
import { parameterizedJson } from '../jobspec/parameterized.ts';

/** A Nomad API JSON object. */
export type Json = Record<string, unknown>;

/** The time Nomad's JSON shows for one never set (Go's zero `time.Time`). */
export const ZERO_TIME = '0001-01-01T00:00:00Z';

/** A job's groups, from its API JSON (none when it has no `TaskGroups`). */
export const taskGroupsOf = (job: Json): Json[] => (job['TaskGroups'] as Json[] | undefined) ?? [];

const NS_PER_MS = 1e6;
const ns = (ms: number | undefined): number | undefined => (ms === undefined ? undefined : Math.round(ms * NS_PER_MS));

/** `max_parallel` → `MaxParallel`, for the content of blocks allocrun does not model. */
function pascal(key: string): string {
  return key.replace(/(^|_)([a-z0-9])/g, (_, __, c: string) => c.toUpperCase());
}

function pascalDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(pascalDeep);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [pascal(k), pascalDeep(v)]));
  return value;
}

/** Copies the keys of `body` that `modelled` does not cover, under their API names. */
function ignoredFields(level: 'job' | 'group' | 'task' | 'resources' | 'network', body: Record<string, unknown>, modelled: readonly string[]): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(body)) {
    if (modelled.includes(key) || value === undefined) continue;
    // In Nomad's own shape (LTarget, Operand, RTarget), whichever shape the file wrote: placement reads it so.
    if (key === 'constraint') {
      out['Constraints'] = constraintsOf(value) as unknown as Json[];
      continue;
    }
    const name = apiFieldOf(level, key) ?? pascal(key);
    // HCL writes a block as a list of bodies; the API has a list only where the name is plural (Constraints).
    const single = Array.isArray(value) && value.length === 1 && typeof value[0] === 'object' && !name.endsWith('s');
    out[name] = pascalDeep(single ? value[0] : value);
  }
  return out;
}

/** Drops undefined fields so the JSON says only what the job says. */
function compact(obj: Json): Json {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined));
}

function restartJson(r: GroupBody['restart']): Json | undefined {
  if (!r) return undefined;
  return compact({ Attempts: r.attempts, Interval: ns(r.interval), Delay: ns(r.delay), Mode: r.mode, RenderTemplates: r.render_templates });
}

function updateJson(u: GroupBody['update']): Json | undefined {
  if (!u) return undefined;
  return compact({
    MaxParallel: u.max_parallel, HealthCheck: u.health_check, MinHealthyTime: ns(u.min_healthy_time), HealthyDeadline: ns(u.healthy_deadline),
    ProgressDeadline: ns(u.progress_deadline), AutoRevert: u.auto_revert, AutoPromote: u.auto_promote, Canary: u.canary, Stagger: ns(u.stagger),
  });
}

/** A reschedule block as Nomad's ReschedulePolicy (the group's) or Reschedule (the job's): durations in ns. */
function rescheduleJson(r: GroupBody['reschedule']): Json | undefined {
  if (!r) return undefined;
  return compact({ Attempts: r.attempts, Interval: ns(r.interval), Delay: ns(r.delay), DelayFunction: r.delay_function, MaxDelay: ns(r.max_delay), Unlimited: r.unlimited });
}

/** One artifact block as Nomad's TaskArtifact, its defaults (mode, destination) filled as Nomad's Canonicalize does. */
function artifactJson(a: NonNullable<TaskBody['artifact']>[number]): Json {
  const spec = artifactSpecOf(a);
  return {
    GetterSource: spec.source,
    GetterOptions: spec.options ?? null,
    GetterHeaders: spec.headers ?? null,
    GetterMode: spec.mode,
    GetterInsecure: spec.insecure ?? false,
    RelativeDest: spec.destination,
    Chown: spec.chown ?? false,
  };
}

function taskJson(name: string, t: TaskBody): Json {
  const r = t.resources;
  return compact({
    Name: name,
    Driver: t.driver,
    Config: t.config,
    Env: t.env,
    Meta: t.meta,
    Leader: t.leader,
    Lifecycle: t.lifecycle && compact({ Hook: t.lifecycle.hook, Sidecar: t.lifecycle.sidecar ?? false }),
    RestartPolicy: restartJson(t.restart),
    KillTimeout: ns(t.kill_timeout),
    KillSignal: t.kill_signal,
    ShutdownDelay: ns(t.shutdown_delay),
    LogConfig: t.logs && compact({ MaxFiles: t.logs.max_files, MaxFileSizeMB: t.logs.max_file_size, Disabled: t.logs.disabled }),
    Resources: r && compact({
      CPU: r.cpu, Cores: r.cores, MemoryMB: r.memory, MemoryMaxMB: r.memory_max,
      ...ignoredFields('resources', r, ['cpu', 'cores', 'memory', 'memory_max']),
    }),
    Artifacts: t.artifact?.map(artifactJson),
    Services: servicesJson(t.service),
    Templates: templatesJson(t.template),
    DispatchPayload: t.dispatch_payload && { File: t.dispatch_payload.file },
    ...ignoredFields('task', t, ['driver', 'config', 'env', 'meta', 'leader', 'lifecycle', 'restart', 'kill_timeout', 'kill_signal', 'shutdown_delay', 'logs', 'resources', 'artifact', 'service', 'template', 'dispatch_payload']),
  });
}

/**
 * The group's network block as Nomad's API writes it: one NetworkResource, static ports in ReservedPorts and
 * dynamic ones in DynamicPorts (Value 0 until placed), HostNetwork "default" as Nomad canonicalises it.
 */
function networksJson(n: GroupBody['network']): Json[] | undefined {
  if (!n) return undefined;
  const port = (label: string, p: (typeof n.port)[string]): Json => ({ Label: label, Value: p.static ?? 0, To: p.to ?? 0, HostNetwork: p.host_network ?? 'default', IgnoreCollision: p.ignore_collision ?? false });
  const entries = Object.entries(n.port);
  return [compact({
    Mode: n.mode,
    ReservedPorts: entries.filter(([, p]) => p.static !== undefined).map(([l, p]) => port(l, p)),
    DynamicPorts: entries.filter(([, p]) => p.static === undefined).map(([l, p]) => port(l, p)),
    // Under the network block's own API names (`mbits` is MBits, `dns` DNS), as Nomad's NetworkResource has them.
    ...ignoredFields('network', n, ['mode', 'port']),
  })];
}

/**
 * A group's scaling policy as Nomad's server canonicalises it: Min defaults to the count, Enabled to true, the
 * Target names the group; the policy's own block is the autoscaler's, kept with its keys as written.
 */
function scalingJson(g: GroupBody, target: { Namespace: string; Job: string; Group: string }): Json | undefined {
  const s = g.scaling;
  if (!s) return undefined;
  return { Type: 'horizontal', Target: target, Min: s.min ?? g.count, Max: s.max, Enabled: s.enabled ?? true, Policy: s.policy ?? null };
}

function groupJson(name: string, g: GroupBody, job: { id: string; namespace: string }): Json {
  return compact({
    Name: name,
    Count: g.count,
    RestartPolicy: restartJson(g.restart),
    ShutdownDelay: ns(g.shutdown_delay),
    Meta: g.meta,
    Update: updateJson(g.update),
    ReschedulePolicy: rescheduleJson(g.reschedule),
    Scaling: scalingJson(g, { Namespace: job.namespace, Job: job.id, Group: name }),
    Networks: networksJson(g.network),
    Services: servicesJson(g.service),
    Tasks: Object.entries(g.task).map(([taskName, t]) => taskJson(taskName, t)),
    ...ignoredFields('group', g, ['count', 'restart', 'shutdown_delay', 'meta', 'update', 'reschedule', 'scaling', 'task', 'network', 'service']),
  });
}

/** The job `name` with body `job` as Nomad's API Job. */
export function jobToApiJson(name: string, job: JobBody): Json {
  return compact({
    ID: name,
    Name: name,
    Type: job.type,
    Namespace: job.namespace,
    Datacenters: job.datacenters,
    NodePool: job.node_pool,
    Meta: job.meta,
    Update: updateJson(job.update),
    Reschedule: rescheduleJson(job.reschedule),
    Periodic: job.periodic && periodicJson(job.periodic),
    ParameterizedJob: job.parameterized && (parameterizedJson(job.parameterized) as unknown as Json),
    TaskGroups: Object.entries(job.group).map(([groupName, g]) => groupJson(groupName, g, { id: name, namespace: job.namespace ?? 'default' })),
    ...ignoredFields('job', job, ['type', 'namespace', 'datacenters', 'node_pool', 'meta', 'update', 'reschedule', 'periodic', 'parameterized', 'group', 'id', 'name']),
  });
}
