/**
 * Rules across fields that a per-field schema cannot state (Nomad's Job/TaskGroup/RestartPolicy
 * Validate): a job has groups, a group has tasks and at most one leader, a restart policy can be met.
 * They run on the normalised body whether or not the schema passed, reading it defensively, so every
 * problem is reported in one pass.
 */
import { defaultRestartPolicy, formatDuration } from '../../machines/model.ts';
import type { JobType, RestartPolicy } from './types.ts';
import type { DriverChecks } from './driver-config.ts';
import { checkArtifacts } from './artifact-rules.ts';
import { envKeyProblem } from './env-names.ts';
import { IGNORED_KEYS, JOB_TYPES, MAX_COUNT, restartSchema, updateSchema, type UpdateBody } from './jobspec-schema.ts';
import { DEFAULT_UPDATE, ROLLOUT_FIELDS, STAGGER_IGNORED, deploymentsEnabled, mergeUpdate, updateProblems } from './update-strategy.ts';
import { isPlainObject, type NormalizedJob, type Report } from './normalize.ts';
import type { PathSegment } from './spec-error.ts';
import { checkGroupServices } from './service-rules.ts';
import { checkReschedule } from './reschedule-rules.ts';

/** Nomad's RestartPolicyMinInterval. */
const MIN_RESTART_INTERVAL_MS = 5_000;
/** The most allocations one job places on this one node: a group's count cap holds for the job's sum too. */
export const MAX_JOB_ALLOCS = MAX_COUNT;
/** The most task instances (allocations × their tasks) one job starts: each is a process and a directory. */
export const MAX_JOB_TASKS = 10 * MAX_COUNT;

/**
 * Checks the cross-field rules of a normalised job, adding to `report`; with `drivers`, also that each
 * task names one of them and that its config is one that driver runs.
 */
export function checkJobRules(job: NormalizedJob, report: Report, drivers?: DriverChecks): void {
  const path: PathSegment[] = ['job', job.name];
  const rawType = job.body['type'];
  const type: JobType | undefined =
    rawType === undefined ? 'service' : (JOB_TYPES as readonly unknown[]).includes(rawType) ? (rawType as JobType) : undefined;
  const groups = job.body['group'] ?? {};
  if (!isPlainObject(groups)) return; // mistyped: the schema reports it
  if (Object.keys(groups).length === 0 && !reported(report, [...path, 'group'])) {
    report.problems.push({ path: [...path, 'group'], message: 'a job needs at least one group' });
  }
  for (const [name, group] of Object.entries(groups)) {
    if (isPlainObject(group)) checkGroup(group, [...path, 'group', name], type, report, drivers);
    if (isPlainObject(group)) checkGroupServices(job.name, name, group, [...path, 'group', name], report);
  }
  checkSize(groups, path, report);
  checkUpdates(job.body, path, type, report);
  checkReschedule(job.body, groups, path, type, report);
  const periodic = job.body['periodic'];
  // Nomad's Job.Validate: a periodic job launches children that run to completion.
  if (isPlainObject(periodic) && periodic['enabled'] !== false && type !== undefined && type !== 'batch' && type !== 'sysbatch') {
    report.problems.push({ path: [...path, 'periodic'], message: `periodic can only be used with "batch" or "sysbatch" jobs; this job's type is "${type}"` });
  }
  // Nomad's Job.Validate: a parameterized job's dispatches run to completion.
  if (isPlainObject(job.body['parameterized']) && type !== undefined && type !== 'batch' && type !== 'sysbatch') {
    report.problems.push({ path: [...path, 'parameterized'], message: `Parameterized job can only be used with "batch" or "sysbatch" jobs; this job's type is "${type}"` });
  }
}

/**
 * Nomad's update rules on each merged block (group over job): only service and system jobs may have
 * deployments, and the health timings must fit (UpdateStrategy.Validate). Rollout fields are warned about.
 */
function checkUpdates(body: Record<string, unknown>, path: PathSegment[], type: JobType | undefined, report: Report): void {
  const jobUpdate = partialUpdate(body['update']);
  if (jobUpdate === null) return; // its own fields are wrong: the schema reports them
  const blocks: [PathSegment[], UpdateBody | undefined][] = [];
  if (body['update'] !== undefined) blocks.push([[...path, 'update'], undefined]);
  const groups = isPlainObject(body['group']) ? body['group'] : {};
  for (const [name, group] of Object.entries(groups)) {
    if (!isPlainObject(group) || group['update'] === undefined) continue;
    const own = partialUpdate(group['update']);
    if (own !== null) blocks.push([[...path, 'group', name, 'update'], own]);
  }
  for (const [at, own] of blocks) {
    const merged = mergeUpdate(jobUpdate, own)!;
    const written = own ?? jobUpdate ?? {};
    for (const field of ROLLOUT_FIELDS) {
      if (written[field] !== undefined && written[field] !== DEFAULT_UPDATE[field]) report.warnings.push({ path: [...at, field], message: STAGGER_IGNORED });
    }
    if (!deploymentsEnabled(merged)) continue;
    if (type && type !== 'service' && type !== 'system') {
      report.problems.push({ path: at, message: `job type "${type}" does not allow an update block (only service and system jobs have deployments)` });
      continue;
    }
    for (const p of updateProblems(merged)) {
      report.problems.push({ path: p.field && written[p.field] !== undefined ? [...at, p.field] : at, message: p.message });
    }
  }
}

/**
 * The job's size on this node: every group's count is capped by the schema, but a body of many groups
 * (or many tasks) could still ask for millions of processes; the sums are capped too.
 */
function checkSize(groups: Record<string, unknown>, path: PathSegment[], report: Report): void {
  let allocs = 0;
  let tasks = 0;
  for (const group of Object.values(groups)) {
    if (!isPlainObject(group)) continue;
    const count = typeof group['count'] === 'number' && Number.isInteger(group['count']) && group['count'] >= 0 ? Math.min(group['count'], MAX_COUNT) : 1;
    allocs += count;
    tasks += count * (isPlainObject(group['task']) ? Object.keys(group['task']).length : 0);
  }
  if (allocs > MAX_JOB_ALLOCS) {
    report.problems.push({ path: [...path, 'group'], message: `the groups' counts add up to ${allocs} allocations; a job may place at most ${MAX_JOB_ALLOCS} on this node` });
  } else if (tasks > MAX_JOB_TASKS) {
    report.problems.push({ path: [...path, 'group'], message: `the job would start ${tasks} tasks (each group's count times its tasks); a job may start at most ${MAX_JOB_TASKS} on this node` });
  }
}

/** The fields an update block sets; undefined for no block, null when the block itself is invalid. */
function partialUpdate(raw: unknown): UpdateBody | undefined | null {
  if (raw === undefined) return undefined;
  const parsed = updateSchema.safeParse(raw);
  return parsed.success ? parsed.data : null;
}

function checkGroup(group: Record<string, unknown>, path: PathSegment[], type: JobType | undefined, report: Report, drivers?: DriverChecks): void {
  const tasks = group['task'] ?? {};
  const taskEntries = isPlainObject(tasks) ? Object.entries(tasks).filter(([, t]) => isPlainObject(t)) : [];
  if (isPlainObject(tasks) && Object.keys(tasks).length === 0 && !reported(report, [...path, 'task'])) {
    report.problems.push({ path: [...path, 'task'], message: 'a group needs at least one task' });
  }

  const leaders = taskEntries.filter(([, t]) => (t as Record<string, unknown>)['leader'] === true).map(([n]) => n);
  for (const extra of leaders.slice(1)) {
    report.problems.push({
      path: [...path, 'task', extra, 'leader'],
      message: `only one task of a group can be the leader; "${leaders[0]}" already is`,
    });
  }

  for (const [name, task] of taskEntries) {
    const env = (task as Record<string, unknown>)['env'];
    if (isPlainObject(env)) {
      for (const key of Object.keys(env)) {
        const why = envKeyProblem(key);
        if (why) report.problems.push({ path: [...path, 'task', name, 'env', key], message: why });
      }
    }
    if (drivers) checkDriver(task as Record<string, unknown>, [...path, 'task', name], drivers, report);
    checkArtifacts(task as Record<string, unknown>, [...path, 'task', name], report);
    const logs = (task as Record<string, unknown>)['logs'];
    if (isPlainObject(logs) && logs['disabled'] === true) {
      report.warnings.push({ path: [...path, 'task', name, 'logs', 'disabled'], message: 'ignored: allocrun always keeps task logs' });
    }
  }

  checkNetwork(group['network'], [...path, 'network'], report);
  checkScaling(group, [...path, 'scaling'], report);

  if (!type) return;
  const groupRestart = partialRestart(group['restart']);
  if (!groupRestart) return; // its own fields are wrong: the schema reports them
  const groupPolicy: RestartPolicy = { ...defaultRestartPolicy(type), ...groupRestart };
  if (group['restart'] !== undefined && !checkRestart(groupPolicy, groupRestart, [...path, 'restart'], report)) return;
  for (const [name, task] of taskEntries) {
    const raw = (task as Record<string, unknown>)['restart'];
    const own = partialRestart(raw);
    if (raw === undefined || !own) continue;
    checkRestart({ ...groupPolicy, ...own }, own, [...path, 'task', name, 'restart'], report);
  }
}

/**
 * Nomad's scaling policy rules (ScalingPolicy.Validate, TaskGroup.validateScalingPolicy): min ≤ max, and the
 * group's count within them (min defaults to the count). Mistyped fields are the schema's to report.
 */
function checkScaling(group: Record<string, unknown>, path: PathSegment[], report: Report): void {
  const scaling = group['scaling'];
  if (!isPlainObject(scaling)) return;
  const count = typeof group['count'] === 'number' ? group['count'] : 1;
  const { min, max } = scaling;
  if (max === undefined) report.problems.push({ path, message: 'maximum count must be specified: max is the most instances `job scale` may set' });
  if (typeof max !== 'number') return;
  const lowest = typeof min === 'number' ? min : count;
  if (max < lowest && typeof min === 'number') report.problems.push({ path: [...path, 'max'], message: `maximum count must not be less than minimum count (${max} < ${min})` });
  if (count > max) report.problems.push({ path: [...path, 'max'], message: `task group count must not be greater than maximum count in scaling policy (count ${count} > max ${max})` });
  if (count < lowest) report.problems.push({ path: [...path, 'min'], message: `task group count must not be less than minimum count in scaling policy (count ${count} < min ${lowest})` });
}

/**
 * The task's driver is one the runtime has, and its config (and the task fields it acts on, such as `user`)
 * one that driver runs; mistyped ones are the schema's to report.
 */
function checkDriver(task: Record<string, unknown>, path: PathSegment[], drivers: DriverChecks, report: Report): void {
  const driver = task['driver'];
  if (typeof driver !== 'string' || driver === '') return;
  const check = Object.hasOwn(drivers, driver) ? drivers[driver] : undefined;
  if (!check) {
    const known = Object.keys(drivers).sort().map((d) => JSON.stringify(d)).join(', ');
    report.problems.push({ path: [...path, 'driver'], message: `unknown driver ${JSON.stringify(driver)}: this runtime has ${known}` });
    return;
  }
  const config = task['config'] ?? {};
  if (!isPlainObject(config)) return;
  const fields = task['user'] !== undefined ? { user: task['user'] } : {};
  for (const p of check(config, String(path[path.length - 1]), fields)) report.problems.push({ path: [...path, ...p.path], message: p.message });
}

/** A port label becomes part of variable names (NOMAD_PORT_<label>): Nomad's rule for labels. */
const PORT_LABEL = /^[A-Za-z0-9_]+$/;

/**
 * Nomad's TaskGroup.validateNetworks on the group's network block: labels usable in variable names, no
 * static port asked twice; fields allocrun's one host network makes meaningless are warned about.
 */
function checkNetwork(network: unknown, path: PathSegment[], report: Report): void {
  if (!isPlainObject(network)) return; // absent, or mistyped: the schema reports it
  for (const key of IGNORED_KEYS.network) {
    if (network[key] !== undefined) report.warnings.push({ path: [...path, key], message: `ignored: allocrun does not implement "${key}" in the network block` });
  }
  const ports = network['port'];
  if (!isPlainObject(ports)) return;
  const statics = new Map<number, string>();
  for (const [label, port] of Object.entries(ports)) {
    const at = [...path, 'port', label];
    if (!PORT_LABEL.test(label)) {
      report.problems.push({ path: at, message: `port label ${JSON.stringify(label)} is not valid: use ASCII letters, digits and "_" only (it names the variables NOMAD_PORT_${label} and NOMAD_ADDR_${label})` });
    }
    if (!isPlainObject(port)) continue;
    const value = port['static'];
    if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65535) {
      const other = statics.get(value);
      if (other !== undefined) report.problems.push({ path: [...at, 'static'], message: `static port ${value} is already reserved by port ${JSON.stringify(other)}` });
      else statics.set(value, label);
    }
    const hostNetwork = port['host_network'];
    if (typeof hostNetwork === 'string' && hostNetwork !== '' && hostNetwork !== 'default') {
      report.warnings.push({ path: [...at, 'host_network'], message: `ignored: allocrun has one host network, so port ${JSON.stringify(label)} is on the default one` });
    }
    if (port['ignore_collision'] === true) {
      report.warnings.push({ path: [...at, 'ignore_collision'], message: `ignored: allocrun never gives one host port to two allocations` });
    }
    const to = port['to'];
    if (typeof to === 'number' && to > 0) {
      report.warnings.push({ path: [...at, 'to'], message: `in host mode "to" maps nothing: NOMAD_PORT_${label} is ${to}, as in Nomad, but the task is reached at the host port (NOMAD_HOST_PORT_${label})` });
    }
  }
}

/** The fields a restart block sets, or undefined when any of them is invalid. */
function partialRestart(raw: unknown): Partial<RestartPolicy> | undefined {
  if (raw === undefined) return {};
  const parsed = restartSchema.safeParse(raw);
  if (!parsed.success) return undefined;
  const { attempts, interval, delay, mode } = parsed.data;
  return Object.fromEntries(Object.entries({ attempts, interval, delay, mode }).filter(([, v]) => v !== undefined));
}

/** Nomad's RestartPolicy.Validate on the merged policy; problems point at the field the block sets. */
function checkRestart(policy: RestartPolicy, own: Partial<RestartPolicy>, path: PathSegment[], report: Report): boolean {
  const at = (field: keyof RestartPolicy): PathSegment[] => (own[field] !== undefined ? [...path, field] : path);
  const before = report.problems.length;
  if (policy.attempts === 0 && policy.mode !== 'fail') {
    report.problems.push({ path: at('mode'), message: `restart mode "${policy.mode}" with 0 attempts is ambiguous; use mode "fail" or allow attempts` });
  }
  if (policy.interval < MIN_RESTART_INTERVAL_MS) {
    report.problems.push({ path: at('interval'), message: `interval can not be less than ${formatDuration(MIN_RESTART_INTERVAL_MS)} (got ${formatDuration(policy.interval)})` });
  }
  if (policy.attempts * policy.delay > policy.interval) {
    report.problems.push({
      path,
      message: `cannot restart ${policy.attempts} times in an interval of ${formatDuration(policy.interval)} with a delay of ${formatDuration(policy.delay)}`,
    });
  }
  return report.problems.length === before;
}

/** True when a problem was already reported at `path` or inside it (so a rule does not repeat it). */
function reported(report: Report, path: PathSegment[]): boolean {
  return report.problems.some((p) => path.every((seg, i) => p.path[i] === seg));
}
