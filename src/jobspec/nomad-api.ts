/**
 * Nomad's API JSON (`nomad job run -output`, `nomad job inspect`: `{ "Job": { "ID", "TaskGroups": [...] } }`)
 * translated into the jobspec structure, so such files load like HCL. Durations there are nanoseconds.
 * Server bookkeeping fields are dropped; fields allocrun does not implement keep their jobspec names so
 * they are warned about; unknown fields keep their own names so they are reported. Every translated path
 * remembers where it came from, so problems still point at the right line.
 */
import { isPlainObject } from './normalize.ts';
import type { PathSegment } from './spec-error.ts';

/** A translation: the jobspec-shaped value, and how to map its paths back to the file's. */
export interface TranslatedJob {
  value: unknown;
  mapPath(path: readonly PathSegment[]): PathSegment[];
}

type Conv = 'ns' | 'networks' | 'list' | Table | undefined;
type Table = Record<string, [string, Conv?] | null>;

/** `null`: dropped (server state, or an identity already used as a label). */
const BOOKKEEPING = [
  'Status', 'StatusDescription', 'Stable', 'Version', 'SubmitTime', 'CreateIndex', 'ModifyIndex', 'JobModifyIndex',
  'Stop', 'ParentID', 'Dispatched', 'DispatchIdempotencyToken', 'Payload', 'ConsulToken', 'VaultToken',
  'ConsulNamespace', 'VaultNamespace', 'NomadTokenID', 'VersionTag', 'Name', 'ID',
];

const RESTART: Table = {
  Attempts: ['attempts'], Interval: ['interval', 'ns'], Delay: ['delay', 'ns'], Mode: ['mode'], RenderTemplates: ['render_templates'],
};

const UPDATE: Table = {
  MaxParallel: ['max_parallel'], HealthCheck: ['health_check'], MinHealthyTime: ['min_healthy_time', 'ns'],
  HealthyDeadline: ['healthy_deadline', 'ns'], ProgressDeadline: ['progress_deadline', 'ns'], AutoRevert: ['auto_revert'],
  AutoPromote: ['auto_promote'], Canary: ['canary'], Stagger: ['stagger', 'ns'],
};

const CHECK_RESTART: Table = { Limit: ['limit'], Grace: ['grace', 'ns'], IgnoreWarnings: ['ignore_warnings'] };

const CHECK: Table = {
  Name: ['name'], Type: ['type'], Command: ['command'], Args: ['args'], Path: ['path'], Protocol: ['protocol'],
  PortLabel: ['port'], Expose: ['expose'], AddressMode: ['address_mode'], Advertise: ['advertise'], Interval: ['interval', 'ns'],
  Timeout: ['timeout', 'ns'], InitialStatus: ['initial_status'], Notes: ['notes'], TLSServerName: ['tls_server_name'],
  TLSSkipVerify: ['tls_skip_verify'], Method: ['method'], Header: ['header'], CheckRestart: ['check_restart', CHECK_RESTART],
  GRPCService: ['grpc_service'], GRPCUseTLS: ['grpc_use_tls'], TaskName: ['task'], SuccessBeforePassing: ['success_before_passing'],
  FailuresBeforeCritical: ['failures_before_critical'], FailuresBeforeWarning: ['failures_before_warning'], Body: ['body'], OnUpdate: ['on_update'],
};

/** Nomad's Service; its Namespace is the job's, filled by the server. */
const SERVICE: Table = {
  Name: ['name'], TaskName: ['task'], PortLabel: ['port'], AddressMode: ['address_mode'], Address: ['address'],
  EnableTagOverride: ['enable_tag_override'], Tags: ['tags'], CanaryTags: ['canary_tags'], Checks: ['check', CHECK],
  CheckRestart: ['check_restart', CHECK_RESTART], Connect: ['connect'], Meta: ['meta'], CanaryMeta: ['canary_meta'],
  Weights: ['weights'], TaggedAddresses: ['tagged_addresses'], OnUpdate: ['on_update'], Provider: ['provider'],
  Cluster: ['cluster'], Identity: ['identity'], Kind: ['kind'], Namespace: null,
};

/** Nomad's Template; durations in nanoseconds. */
const TEMPLATE: Table = {
  SourcePath: ['source'], DestPath: ['destination'], EmbeddedTmpl: ['data'], ChangeMode: ['change_mode'],
  ChangeSignal: ['change_signal'], ChangeScript: ['change_script', { Command: ['command'], Args: ['args'], Timeout: ['timeout', 'ns'], FailOnError: ['fail_on_error'] }],
  Splay: ['splay', 'ns'], Perms: ['perms'], Uid: ['uid'], Gid: ['gid'], LeftDelim: ['left_delimiter'], RightDelim: ['right_delimiter'],
  Envvars: ['env'], ErrMissingKey: ['error_on_missing_key'], Wait: ['wait', { Min: ['min', 'ns'], Max: ['max', 'ns'] }],
  VaultGrace: ['vault_grace', 'ns'], Once: null,
};

const TASK: Table = {
  Driver: ['driver'], Config: ['config'], Env: ['env'], Meta: ['meta'], Leader: ['leader'],
  Lifecycle: ['lifecycle', { Hook: ['hook'], Sidecar: ['sidecar'] }],
  RestartPolicy: ['restart', RESTART], KillTimeout: ['kill_timeout', 'ns'], KillSignal: ['kill_signal'],
  ShutdownDelay: ['shutdown_delay', 'ns'],
  LogConfig: ['logs', { MaxFiles: ['max_files'], MaxFileSizeMB: ['max_file_size'], Disabled: ['disabled'], Enabled: null }],
  Resources: ['resources', {
    CPU: ['cpu'], Cores: ['cores'], MemoryMB: ['memory'], MemoryMaxMB: ['memory_max'], DiskMB: ['disk'], IOPS: ['iops'],
    Networks: ['network'], Devices: ['device'], NUMA: ['numa'], SecretsMB: ['secrets'],
  }],
  User: ['user'], Services: ['service', SERVICE], Templates: ['template', TEMPLATE], Artifacts: ['artifact', 'list'], Vault: ['vault'],
  Consul: ['consul'], Constraints: ['constraint'], Affinities: ['affinity'], VolumeMounts: ['volume_mount'],
  Identity: ['identity'], Identities: ['identity'], DispatchPayload: ['dispatch_payload', { File: ['file'] }], CSIPluginConfig: ['csi_plugin'],
  ScalingPolicies: ['scaling'], Kind: ['kind'], Actions: ['action'], Schedule: ['schedule'],
};

/** Nomad's ScalingPolicy of a group; its Target (the job, group, namespace) and ID are the server's. */
const SCALING: Table = {
  Min: ['min'], Max: ['max'], Enabled: ['enabled'], Policy: ['policy'], Type: ['type'], Target: null, ID: null,
};

/** Nomad's ReschedulePolicy (the group's) and the job's Reschedule: durations in ns. */
const RESCHEDULE: Table = {
  Attempts: ['attempts'], Interval: ['interval', 'ns'], Delay: ['delay', 'ns'], DelayFunction: ['delay_function'], MaxDelay: ['max_delay', 'ns'], Unlimited: ['unlimited'],
};

const GROUP: Table = {
  Count: ['count'], RestartPolicy: ['restart', RESTART], ShutdownDelay: ['shutdown_delay', 'ns'], Meta: ['meta'],
  Networks: ['network', 'networks'], Services: ['service', SERVICE], Update: ['update', UPDATE], ReschedulePolicy: ['reschedule', RESCHEDULE],
  EphemeralDisk: ['ephemeral_disk'], Constraints: ['constraint'], Affinities: ['affinity'], Spreads: ['spread'],
  Migrate: ['migrate'], Scaling: ['scaling', SCALING], Volumes: ['volume'], Consul: ['consul'], Vault: ['vault'],
  StopAfterClientDisconnect: ['stop_after_client_disconnect', 'ns'], MaxClientDisconnect: ['max_client_disconnect', 'ns'],
  Disconnect: ['disconnect'], PreventRescheduleOnLost: ['prevent_reschedule_on_lost'],
};

/** Nomad's PeriodicConfig; `Enabled: false` is kept (a disabled periodic job is not an enabled one). */
const PERIODIC: Table = {
  Enabled: ['enabled'], Spec: ['cron'], Specs: ['crons'], SpecType: ['spec_type'], ProhibitOverlap: ['prohibit_overlap'], TimeZone: ['time_zone'],
};

const JOB: Table = {
  Type: ['type'], Namespace: ['namespace'], Datacenters: ['datacenters'], Meta: ['meta'], Region: ['region'],
  Priority: ['priority'], AllAtOnce: ['all_at_once'], Update: ['update', UPDATE], Constraints: ['constraint'],
  Affinities: ['affinity'], Spreads: ['spread'], Migrate: ['migrate'], Reschedule: ['reschedule', RESCHEDULE],
  Multiregion: ['multiregion'], Periodic: ['periodic', PERIODIC], ParameterizedJob: ['parameterized', { Payload: ['payload'], MetaRequired: ['meta_required'], MetaOptional: ['meta_optional'] }], Vault: ['vault'],
  Consul: ['consul'], NodePool: ['node_pool'], UI: ['ui'],
};

/** True for Nomad API JSON: `{ "Job": {...} }`, or a bare job object with `TaskGroups`. */
export function isNomadApiJob(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  if (isPlainObject(value['Job'])) return true;
  return 'TaskGroups' in value && !('job' in value);
}

/**
 * Nomad's canonical job says "not asked" with zeros (`Cores: 0`, `MemoryMaxMB: 0`, and `CPU: 0` beside cores),
 * so a job read back from `GET /v1/job/:id` or `/v1/jobs/parse` with `Canonicalize` registers as it is.
 */
function withoutUnsetResources(task: Record<string, unknown>): Record<string, unknown> {
  const r = task['resources'];
  if (!isPlainObject(r)) return task;
  const asked: Record<string, unknown> = { ...r };
  if (asked['cores'] === 0) delete asked['cores'];
  if (asked['memory_max'] === 0) delete asked['memory_max'];
  if (asked['cpu'] === 0 && typeof asked['cores'] === 'number') delete asked['cpu'];
  return { ...task, resources: asked };
}

/** Translates API JSON into the jobspec structure (see the module comment). */
export function fromNomadApi(value: Record<string, unknown>): TranslatedJob {
  const origins = new Map<string, PathSegment[]>();
  const remember = (to: PathSegment[], from: PathSegment[]): void => void origins.set(JSON.stringify(to), from);
  const wrapped = isPlainObject(value['Job']);
  const job = (wrapped ? value['Job'] : value) as Record<string, unknown>;
  const jobFrom: PathSegment[] = wrapped ? ['Job'] : [];
  const out: Record<string, unknown> = {};
  if (wrapped) for (const key of Object.keys(value)) if (key !== 'Job') out[key] = value[key];

  const id = typeof job['ID'] === 'string' ? job['ID'] : typeof job['Name'] === 'string' ? job['Name'] : '';
  const jobTo: PathSegment[] = ['job', id];
  remember(jobTo, jobFrom);
  const body = translate(job, JOB, jobTo, jobFrom, remember);

  const groupsRaw = job['TaskGroups'];
  if (Array.isArray(groupsRaw)) {
    remember([...jobTo, 'group'], [...jobFrom, 'TaskGroups']);
    body['group'] = labelled(groupsRaw, [...jobTo, 'group'], [...jobFrom, 'TaskGroups'], remember, (group, to, from) => {
      const g = translate(group, GROUP, to, from, remember);
      const tasksRaw = group['Tasks'];
      if (Array.isArray(tasksRaw)) {
        remember([...to, 'task'], [...from, 'Tasks']);
        g['task'] = labelled(tasksRaw, [...to, 'task'], [...from, 'Tasks'], remember, (task, tTo, tFrom) =>
          withoutUnsetResources(translate(task, TASK, tTo, tFrom, remember, ['Name'])),
        );
      } else if (tasksRaw !== undefined && tasksRaw !== null) g['task'] = tasksRaw;
      return g;
    });
  } else if (groupsRaw !== undefined && groupsRaw !== null) body['group'] = groupsRaw;

  out['job'] = { [id]: body };
  return {
    value: out,
    mapPath(path) {
      for (let k = path.length; k >= 0; k--) {
        const from = origins.get(JSON.stringify(path.slice(0, k)));
        if (from) return [...from, ...path.slice(k)];
      }
      return [...path];
    },
  };
}

/** A list of named API objects as jobspec labelled blocks (repeats become a list, reported as repeats). */
function labelled(
  list: unknown[],
  to: PathSegment[],
  from: PathSegment[],
  remember: (to: PathSegment[], from: PathSegment[]) => void,
  each: (item: Record<string, unknown>, to: PathSegment[], from: PathSegment[]) => Record<string, unknown>,
): Record<string, unknown> {
  // A Map, not an object: a group or task named "constructor" or "toString" must not find Object's own.
  const out = new Map<string, Record<string, unknown>[]>();
  list.forEach((item, i) => {
    const obj = isPlainObject(item) ? item : {};
    const name = typeof obj['Name'] === 'string' ? obj['Name'] : '';
    const bodies = out.get(name) ?? [];
    out.set(name, bodies);
    const at = [...to, name];
    remember(bodies.length === 0 ? at : [...at, bodies.length], [...from, i]);
    bodies.push(each(obj, at, [...from, i]));
  });
  return Object.fromEntries([...out].map(([name, bodies]) => [name, bodies.length === 1 ? bodies[0] : bodies]));
}

/** Renames one API object's fields by `table`, recursing into nested tables and converting nanoseconds. */
function translate(
  obj: Record<string, unknown>,
  table: Table,
  to: PathSegment[],
  from: PathSegment[],
  remember: (to: PathSegment[], from: PathSegment[]) => void,
  skip: string[] = [],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj)) {
    if (key === 'TaskGroups' || key === 'Tasks' || skip.includes(key)) continue;
    const rule = table[key];
    if (rule === null || (rule === undefined && BOOKKEEPING.includes(key))) continue;
    if (rule === undefined) {
      // Unknown to allocrun: keep the name so the schema names it.
      out[key] = value;
      remember([...to, key], [...from, key]);
      continue;
    }
    const [name, conv] = rule;
    // The API fills every field; an empty one says nothing, so it neither warns nor counts as set.
    // An empty ParameterizedJob is still one (Nomad: a non-nil block, every field defaulted).
    // A reschedule policy's 0 and false are said: `attempts = 0` turns rescheduling off, over the type's default of 1.
    if (isEmpty(value) && !(value === false && (table === PERIODIC || table === SCALING)) && !(table === RESCHEDULE && (value === 0 || value === false)) && !(key === 'ParameterizedJob' && isPlainObject(value))) continue;
    remember([...to, name], [...from, key]);
    if (conv === 'ns') out[name] = typeof value === 'number' ? value / 1e6 : value;
    else if (conv === 'networks') out[name] = networksFromApi(value, [...to, name], [...from, key], remember);
    else if (conv === 'list') out[name] = listFromApi(value, LISTS[key] ?? {}, [...to, name], [...from, key], remember);
    else if (conv && isPlainObject(value)) out[name] = translate(value, conv, [...to, name], [...from, key], remember);
    else if (conv && Array.isArray(value)) {
      // A list of API objects (Services, Checks): each translated, its paths remembered by index.
      out[name] = value.map((item, i) => {
        remember([...to, name, i], [...from, key, i]);
        return isPlainObject(item) ? translate(item, conv, [...to, name, i], [...from, key, i], remember) : item;
      });
    }    else out[name] = value;
  }
  return out;
}

/** API lists of blocks a task may repeat (`artifact`), each item's fields by table. */
const LISTS: Record<string, Table> = {
  Artifacts: {
    GetterSource: ['source'], GetterOptions: ['options'], GetterHeaders: ['headers'], GetterMode: ['mode'],
    GetterInsecure: ['insecure'], RelativeDest: ['destination'], Chown: ['chown'],
  },
};

/** `Artifacts: [{ GetterSource, ... }]` as repeated jobspec blocks (`artifact [{ source, ... }]`), paths kept per item. */
function listFromApi(value: unknown, table: Table, to: PathSegment[], from: PathSegment[], remember: (to: PathSegment[], from: PathSegment[]) => void): unknown {
  if (!Array.isArray(value)) return value; // the schema says what it expected
  return value.map((item, i) => {
    remember([...to, i], [...from, i]);
    return isPlainObject(item) ? translate(item, table, [...to, i], [...from, i], remember) : item;
  });
}

const NETWORK: Table = { Mode: ['mode'], Hostname: ['hostname'], DNS: ['dns'], CNI: ['cni'], MBits: ['mbits'], IP: null, CIDR: null, Device: null };
const PORT: Table = { Value: ['static'], To: ['to'], HostNetwork: ['host_network'], IgnoreCollision: ['ignore_collision'] };

/**
 * `Networks: [{ Mode, ReservedPorts: [...], DynamicPorts: [...] }]` as the jobspec's `network { port "l" {} }`:
 * each port becomes a labelled block (a label in both lists is a repeat, reported as one); a dynamic port's
 * Value is dropped (the scheduler's to fill), and HostNetwork "default" is the API's way of saying none.
 */
function networksFromApi(value: unknown, to: PathSegment[], from: PathSegment[], remember: (to: PathSegment[], from: PathSegment[]) => void): unknown {
  if (!Array.isArray(value)) return value; // the schema says what it expected
  const one = (net: unknown, i: number): unknown => {
    const at = value.length === 1 ? to : [...to, i];
    if (!isPlainObject(net)) return net;
    const out = translate(Object.fromEntries(Object.entries(net).filter(([k]) => k !== 'ReservedPorts' && k !== 'DynamicPorts')), NETWORK, at, [...from, i], remember);
    const ports = new Map<string, Record<string, unknown>[]>();
    for (const list of ['ReservedPorts', 'DynamicPorts'] as const) {
      const raw = net[list];
      if (!Array.isArray(raw)) continue;
      raw.forEach((p, j) => {
        const port = isPlainObject(p) ? { ...p } : {};
        const label = typeof port['Label'] === 'string' ? port['Label'] : '';
        delete port['Label'];
        if (list === 'DynamicPorts') delete port['Value'];
        if (port['HostNetwork'] === 'default') delete port['HostNetwork'];
        const bodies = ports.get(label) ?? [];
        ports.set(label, bodies);
        const portTo = [...at, 'port', label];
        remember(bodies.length === 0 ? portTo : [...portTo, bodies.length], [...from, i, list, j]);
        bodies.push(translate(port, PORT, bodies.length === 0 ? portTo : [...portTo, bodies.length], [...from, i, list, j], remember));
      });
    }
    if (ports.size > 0) out['port'] = Object.fromEntries([...ports].map(([label, bodies]) => [label, bodies.length === 1 ? bodies[0] : bodies]));
    return out;
  };
  return value.length === 1 ? one(value[0], 0) : value.map(one);
}

/** The API's zero values (not 0: `Count: 0` and `Attempts: 0` mean something). */
function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined || value === '' || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (isPlainObject(value)) return Object.keys(value).length === 0;
  return false;
}

const LEVELS = { job: JOB, group: GROUP, task: TASK, resources: TASK['Resources']![1] as Table, restart: RESTART, network: NETWORK } as const;

/** The API field a jobspec key is written as at a level (`update` → `Update`): the translation read backwards. */
export function apiFieldOf(level: keyof typeof LEVELS, key: string): string | undefined {
  for (const [api, rule] of Object.entries(LEVELS[level])) if (rule && rule[0] === key) return api;
  return undefined;
}
