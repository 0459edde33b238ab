/**
 * Nomad's canonical job (its API's `Job.Canonicalize`): the defaults Nomad fills in before it stores a job
 * (Namespace, Region, Priority, Count, KillTimeout, restart and reschedule policies, ...), so a job read
 * back and registered unchanged compares equal to the one stored, as Nomad compares them.
 *
 * Not filled: the default `Update` block Nomad gives every service job. Here an update block is what puts
 * an allocation under deployment health tracking, so one is never invented.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Json } from './job-json.ts';
import { defaultDestination } from '../jobspec/artifact-source.ts';
import { canonicalServices } from './service-job-json.ts';
import { canonicalTemplates } from './template-job-json.ts';

const S = 1e9;
const MIN = 60 * S;
const HOUR = 60 * MIN;

/** Job fields the server owns: a client's copy of them never counts as a change. */
export const SERVER_FIELDS = ['Status', 'StatusDescription', 'Stable', 'Version', 'SubmitTime', 'CreateIndex', 'ModifyIndex', 'JobModifyIndex', 'Stop'];

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isBatch = (type: string) => type === 'batch' || type === 'sysbatch';

/** Nomad's restart policy per job type (service/system 2 / 30m / 15s / fail; batch/sysbatch 3 / 24h / 15s / fail). */
const restartDefault = (type: string): Json => (isBatch(type) ? { Attempts: 3, Interval: 24 * HOUR, Delay: 15 * S, Mode: 'fail' } : { Attempts: 2, Interval: 30 * MIN, Delay: 15 * S, Mode: 'fail' });

/** Nomad's reschedule policy per job type; system jobs have none. */
function rescheduleDefault(type: string): Json | undefined {
  if (type === 'service') return { Attempts: 0, Interval: 0, Delay: 30 * S, DelayFunction: 'exponential', MaxDelay: HOUR, Unlimited: true };
  if (type === 'batch') return { Attempts: 1, Interval: 24 * HOUR, Delay: 5 * S, DelayFunction: 'constant', MaxDelay: 0, Unlimited: false };
  return undefined;
}

const EPHEMERAL_DISK: Json = { Sticky: false, Migrate: false, SizeMB: 300 };
const MIGRATE: Json = { MaxParallel: 1, HealthCheck: 'checks', MinHealthyTime: 10 * S, HealthyDeadline: 5 * MIN };
const LOG_CONFIG: Json = { MaxFiles: 10, MaxFileSizeMB: 10, Disabled: false };
const RESOURCES: Json = { CPU: 100, Cores: 0, MemoryMB: 300, MemoryMaxMB: 0 };

const listOrNull = (v: unknown): unknown => (Array.isArray(v) && v.length > 0 ? v : null);

/** Sets `key` to `value` where it is absent or null. */
function fill(obj: Json, key: string, value: unknown): void {
  if (obj[key] === undefined || obj[key] === null) obj[key] = structuredClone(value);
}

/** `defaults` with what `given` says on top (a block written in part keeps Nomad's values for the rest). */
function merged(defaults: Json, given: unknown): Json {
  if (!isObject(given)) return structuredClone(defaults);
  const out: Json = { ...structuredClone(defaults) };
  for (const [k, v] of Object.entries(given)) if (v !== null && v !== undefined) out[k] = v;
  return out;
}

/** The job with Nomad's defaults filled and without server fields; the input is not changed. */
export function canonicalJob(job: Json): Json {
  const j: Json = structuredClone(Object.fromEntries(Object.entries(job).filter(([k, v]) => !SERVER_FIELDS.includes(k) && v !== null)));
  fill(j, 'Name', j['ID']);
  fill(j, 'Namespace', 'default');
  fill(j, 'Region', 'global');
  fill(j, 'Priority', 50);
  fill(j, 'Type', 'service');
  fill(j, 'AllAtOnce', false);
  fill(j, 'NodePool', 'default');
  if (!Array.isArray(j['Datacenters']) || j['Datacenters'].length === 0) j['Datacenters'] = ['*'];
  if (isObject(j['Meta']) && Object.keys(j['Meta']).length === 0) delete j['Meta'];
  // Nomad's ParameterizedJobConfig.Canonicalize: payload `optional`; unset key lists are null.
  if (isObject(j['ParameterizedJob'])) {
    const p = j['ParameterizedJob'];
    j['ParameterizedJob'] = { Payload: p['Payload'] || 'optional', MetaRequired: listOrNull(p['MetaRequired']), MetaOptional: listOrNull(p['MetaOptional']) };
  }
  const type = String(j['Type']);
  const ids = { job: String(j['Name'] ?? j['ID']), namespace: String(j['Namespace']) };
  // Nomad's TaskGroup.Canonicalize: the type's reschedule policy, then the job's block, then the group's.
  const reschedule = rescheduleDefault(type);
  const jobReschedule = reschedule && merged(reschedule, j['Reschedule']);
  if (Array.isArray(j['TaskGroups'])) j['TaskGroups'] = j['TaskGroups'].map((g) => (isObject(g) ? canonicalGroup(g, type, ids, jobReschedule) : g));
  return j;
}

function canonicalGroup(group: Json, type: string, ids: { job: string; namespace: string }, reschedule: Json | undefined): Json {
  const g: Json = { ...group };
  const groupIds = { ...ids, group: String(g['Name']) };
  if (g['Services'] !== undefined) g['Services'] = canonicalServices(g['Services'], groupIds);
  fill(g, 'Count', 1);
  g['EphemeralDisk'] = merged(EPHEMERAL_DISK, g['EphemeralDisk']);
  g['RestartPolicy'] = merged(restartDefault(type), g['RestartPolicy']);
  if (reschedule) g['ReschedulePolicy'] = merged(reschedule, g['ReschedulePolicy']);
  if (type === 'service') g['Migrate'] = merged(MIGRATE, g['Migrate']);
  if (isObject(g['Meta']) && Object.keys(g['Meta']).length === 0) delete g['Meta'];
  const restart = g['RestartPolicy'] as Json;
  if (Array.isArray(g['Tasks'])) g['Tasks'] = g['Tasks'].map((t) => (isObject(t) ? canonicalTask(t, restart, groupIds) : t));
  return g;
}

function canonicalTask(task: Json, groupRestart: Json, ids: { job: string; group: string; namespace: string }): Json {
  const t: Json = { ...task };
  if (t['Services'] !== undefined) t['Services'] = canonicalServices(t['Services'], { ...ids, task: String(t['Name']) });
  if (t['Templates'] !== undefined) t['Templates'] = canonicalTemplates(t['Templates']);
  fill(t, 'KillTimeout', 5 * S);
  t['LogConfig'] = merged(LOG_CONFIG, t['LogConfig']);
  t['Resources'] = merged(RESOURCES, t['Resources']);
  // A task's restart policy is its group's with the task's own settings on top.
  t['RestartPolicy'] = merged(groupRestart, t['RestartPolicy']);
  if (isObject(t['Lifecycle']) && !t['Lifecycle']['Hook']) delete t['Lifecycle'];
  for (const k of ['Meta', 'Env']) if (isObject(t[k]) && Object.keys(t[k]).length === 0) delete t[k];
  if (Array.isArray(t['Artifacts'])) t['Artifacts'] = t['Artifacts'].map((a) => (isObject(a) ? canonicalArtifact(a) : a));
  return t;
}

/** Nomad's TaskArtifact.Canonicalize: mode `any`, insecure false, empty maps null, the destination by mode. */
function canonicalArtifact(artifact: Json): Json {
  const a: Json = { ...artifact };
  fill(a, 'GetterSource', '');
  fill(a, 'GetterMode', 'any');
  fill(a, 'GetterInsecure', false);
  fill(a, 'Chown', false);
  for (const k of ['GetterOptions', 'GetterHeaders']) if (!isObject(a[k]) || Object.keys(a[k]).length === 0) a[k] = null;
  if (a['RelativeDest'] === undefined || a['RelativeDest'] === null || a['RelativeDest'] === '') a['RelativeDest'] = defaultDestination(String(a['GetterMode']), String(a['GetterSource']));
  return a;
}

/** Go's zero values (and empty lists and maps) dropped: what decoding into Nomad's structs makes equal. */
function withoutZeroes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutZeroes);
  if (!isObject(value)) return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) {
    const inner = withoutZeroes(v);
    if (inner === null || inner === undefined || inner === false || inner === 0 || inner === '') continue;
    if (Array.isArray(inner) && inner.length === 0) continue;
    if (isObject(inner) && Object.keys(inner).length === 0) continue;
    out[k] = inner;
  }
  return out;
}

/** Whether two jobs are the same job to Nomad: equal once both are canonical, server fields and zero values aside. */
export function sameJob(a: Json, b: Json): boolean {
  return isDeepStrictEqual(withoutZeroes(canonicalJob(a)), withoutZeroes(canonicalJob(b)));
}

/** Removes `obj[key]` when it says no more than `defaults` (zero values aside). */
function dropIfDefault(obj: Json, key: string, defaults: Json | unknown): void {
  if (obj[key] === undefined) return;
  const given = isObject(defaults) ? merged(defaults, obj[key]) : obj[key];
  if (isDeepStrictEqual(withoutZeroes({ v: given }), withoutZeroes({ v: defaults }))) delete obj[key];
}

/**
 * The job without the fields that only restate Nomad's defaults (what `canonicalJob` fills): loaded this way,
 * a job read back from the API gives the same allocations as the job first written, and its defaults are
 * not reported as features allocrun ignores.
 */
export function withoutDefaults(job: Json): Json {
  const j: Json = { ...job };
  const type = typeof j['Type'] === 'string' ? j['Type'] : 'service';
  for (const [key, value] of Object.entries({ Region: 'global', Priority: 50, AllAtOnce: false, NodePool: 'default' })) dropIfDefault(j, key, value);
  if (Array.isArray(j['Datacenters']) && isDeepStrictEqual(j['Datacenters'], ['*'])) delete j['Datacenters'];
  if (j['Name'] === j['ID']) delete j['Name'];
  if (!Array.isArray(j['TaskGroups'])) return j;
  j['TaskGroups'] = j['TaskGroups'].map((group) => {
    if (!isObject(group)) return group;
    const g: Json = { ...group };
    const restart = merged(restartDefault(type), g['RestartPolicy']);
    dropIfDefault(g, 'EphemeralDisk', EPHEMERAL_DISK);
    dropIfDefault(g, 'RestartPolicy', restartDefault(type));
    const reschedule = rescheduleDefault(type);
    if (reschedule) dropIfDefault(g, 'ReschedulePolicy', reschedule);
    if (type === 'service') dropIfDefault(g, 'Migrate', MIGRATE);
    if (Array.isArray(g['Tasks'])) {
      g['Tasks'] = g['Tasks'].map((task) => {
        if (!isObject(task)) return task;
        const t: Json = { ...task };
        dropIfDefault(t, 'KillTimeout', 5 * S);
        dropIfDefault(t, 'LogConfig', LOG_CONFIG);
        dropIfDefault(t, 'Resources', RESOURCES);
        dropIfDefault(t, 'RestartPolicy', restart);
        return t;
      });
    }
    return g;
  });
  return j;
}
