/**
 * Issue 26: the new endpoints' response bodies checked against the `components/schemas` of HashiCorp's
 * OpenAPI description of Nomad's API (hashicorp/nomad-openapi, v1/openapi.yaml, Nomad 1.1.4). The types
 * below are the spec's, written down property by property for the schemas these endpoints answer with
 * (uint64 indexes as `uint`, int64 durations and times as `integer`, `format: date-time` as `date-time`).
 * Every property the agent sends that the spec defines must have the spec's type, all the way down; Go's
 * nil maps, slices and pointers (`RevertedJobVersion`, a `*uint64`) are JSON null, as Nomad sends them. Properties newer than the spec (NodePool,
 * ...) are not in it and not checked. Each endpoint must also send the properties Nomad's clients read.
 * The spec has no schema for HostStats, AllocFileInfo or the agent's members: those are checked elsewhere.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, waitForAllocs } from './agent-process.ts';
import { cleanUp, mockJob, runJob, serve, until, type Served } from './in-process-agent.ts';

type T = 'string' | 'integer' | 'uint' | 'number' | 'boolean' | 'date-time' | 'object' | { ref: string } | { array: T } | { map: T } | { nullable: T };

const S = 'string', I = 'integer', U = 'uint', N = 'number', B = 'boolean', D = 'date-time';
const ref = (name: string): T => ({ ref: name });
const arr = (t: T): T => ({ array: t });
const map = (t: T): T => ({ map: t });
/** A Go pointer to a scalar (`*uint64`): null when unset. */
const ptr = (t: T): T => ({ nullable: t });

/** The spec's schemas the new endpoints answer with. */
const SCHEMAS: Record<string, Record<string, T>> = {
  Node: {
    Attributes: map(S), CSIControllerPlugins: map('object'), CSINodePlugins: map('object'), CgroupParent: S, CreateIndex: U, Datacenter: S,
    Drain: B, DrainStrategy: ref('DrainStrategy'), Drivers: map(ref('DriverInfo')), Events: arr(ref('NodeEvent')), HTTPAddr: S,
    HostNetworks: map('object'), HostVolumes: map('object'), ID: S, LastDrain: ref('DrainMetadata'), Links: map(S), Meta: map(S), ModifyIndex: U,
    Name: S, NodeClass: S, NodeResources: ref('NodeResources'), Reserved: 'object', ReservedResources: ref('NodeReservedResources'),
    Resources: 'object', SchedulingEligibility: S, Status: S, StatusDescription: S, StatusUpdatedAt: I, TLSEnabled: B,
  },
  NodeListStub: {
    Address: S, CreateIndex: U, Datacenter: S, Drain: B, Drivers: map(ref('DriverInfo')), ID: S, LastDrain: ref('DrainMetadata'), ModifyIndex: U,
    Name: S, NodeClass: S, NodeResources: ref('NodeResources'), ReservedResources: ref('NodeReservedResources'), SchedulingEligibility: S,
    Status: S, StatusDescription: S, Version: S,
  },
  DrainStrategy: { Deadline: I, ForceDeadline: D, IgnoreSystemJobs: B, StartedAt: D },
  DrainMetadata: { AccessorID: S, Meta: map(S), StartedAt: D, Status: S, UpdatedAt: D },
  DriverInfo: { Attributes: map(S), Detected: B, HealthDescription: S, Healthy: B, UpdateTime: D },
  NodeEvent: { CreateIndex: U, Details: map(S), Message: S, Subsystem: S, Timestamp: D },
  NodeResources: { Cpu: ref('NodeCpuResources'), Devices: arr('object'), Disk: ref('NodeDiskResources'), MaxDynamicPort: I, Memory: ref('NodeMemoryResources'), MinDynamicPort: I, Networks: arr('object') },
  NodeCpuResources: { CpuShares: I, ReservableCpuCores: arr(U), TotalCpuCores: U },
  NodeDiskResources: { DiskMB: I },
  NodeMemoryResources: { MemoryMB: I },
  NodeReservedResources: { Cpu: ref('NodeReservedCpuResources'), Disk: ref('NodeReservedDiskResources'), Memory: ref('NodeReservedMemoryResources'), Networks: ref('NodeReservedNetworkResources') },
  NodeReservedCpuResources: { CpuShares: U },
  NodeReservedDiskResources: { DiskMB: U },
  NodeReservedMemoryResources: { MemoryMB: U },
  NodeReservedNetworkResources: { ReservedHostPorts: S },
  Namespace: { Capabilities: 'object', CreateIndex: U, Description: S, Meta: map(S), ModifyIndex: U, Name: S, Quota: S },
  Evaluation: {
    AnnotatePlan: B, BlockedEval: S, ClassEligibility: map(B), CreateIndex: U, CreateTime: I, DeploymentID: S, EscapedComputedClass: B,
    FailedTGAllocs: map('object'), ID: S, JobID: S, JobModifyIndex: U, ModifyIndex: U, ModifyTime: I, Namespace: S, NextEval: S, NodeID: S,
    NodeModifyIndex: U, PreviousEval: S, Priority: I, QueuedAllocations: map(I), QuotaLimitReached: S, RelatedEvals: arr('object'),
    SnapshotIndex: U, Status: S, StatusDescription: S, TriggeredBy: S, Type: S, Wait: I, WaitUntil: D,
  },
  JobRegisterResponse: { EvalCreateIndex: U, EvalID: S, JobModifyIndex: U, KnownLeader: B, LastContact: I, LastIndex: U, NextToken: S, RequestTime: I, Warnings: S },
  JobPlanResponse: { Annotations: ref('PlanAnnotations'), CreatedEvals: arr(ref('Evaluation')), Diff: ref('JobDiff'), FailedTGAllocs: map('object'), JobModifyIndex: U, NextPeriodicLaunch: D, Warnings: S },
  PlanAnnotations: { DesiredTGUpdates: map(ref('DesiredUpdates')), PreemptedAllocs: arr('object') },
  DesiredUpdates: { Canary: U, DestructiveUpdate: U, Ignore: U, InPlaceUpdate: U, Migrate: U, Place: U, Preemptions: U, Stop: U },
  JobDiff: { Fields: arr(ref('FieldDiff')), ID: S, Objects: arr(ref('ObjectDiff')), TaskGroups: arr(ref('TaskGroupDiff')), Type: S },
  TaskGroupDiff: { Fields: arr(ref('FieldDiff')), Name: S, Objects: arr(ref('ObjectDiff')), Tasks: arr(ref('TaskDiff')), Type: S, Updates: map(U) },
  TaskDiff: { Annotations: arr(S), Fields: arr(ref('FieldDiff')), Name: S, Objects: arr(ref('ObjectDiff')), Type: S },
  FieldDiff: { Annotations: arr(S), Name: S, New: S, Old: S, Type: S },
  ObjectDiff: { Fields: arr(ref('FieldDiff')), Name: S, Objects: arr(ref('ObjectDiff')), Type: S },
  Deployment: {
    CreateIndex: U, ID: S, IsMultiregion: B, JobCreateIndex: U, JobID: S, JobModifyIndex: U, JobSpecModifyIndex: U, JobVersion: U, ModifyIndex: U,
    Namespace: S, Status: S, StatusDescription: S, TaskGroups: map(ref('DeploymentState')),
  },
  DeploymentState: {
    AutoRevert: B, DesiredCanaries: I, DesiredTotal: I, HealthyAllocs: I, PlacedAllocs: I, PlacedCanaries: arr(S), ProgressDeadline: I,
    Promoted: B, RequireProgressBy: D, UnhealthyAllocs: I,
  },
  DeploymentUpdateResponse: { DeploymentModifyIndex: U, EvalCreateIndex: U, EvalID: S, LastIndex: U, RequestTime: I, RevertedJobVersion: ptr(U) },
  MetricsSummary: { Counters: arr(ref('SampledValue')), Gauges: arr(ref('GaugeValue')), Points: arr(ref('PointValue')), Samples: arr(ref('SampledValue')), Timestamp: S },
  GaugeValue: { Labels: map(S), Name: S, Value: N },
  PointValue: { Name: S, Points: arr(N) },
  SampledValue: { Count: I, Labels: map(S), Max: N, Mean: N, Min: N, Name: S, Rate: N, Stddev: N, Sum: N },
  Job: {
    AllAtOnce: B, ConsulNamespace: S, ConsulToken: S, CreateIndex: U, Datacenters: arr(S), Dispatched: B, ID: S, JobModifyIndex: U, Meta: map(S),
    Migrate: ref('MigrateStrategy'), ModifyIndex: U, Name: S, Namespace: S, NomadTokenID: S, ParentID: S, Priority: I, Region: S,
    Reschedule: ref('ReschedulePolicy'), Stable: B, Status: S, StatusDescription: S, Stop: B, SubmitTime: I, TaskGroups: arr(ref('TaskGroup')),
    Type: S, Update: ref('UpdateStrategy'), VaultNamespace: S, VaultToken: S, Version: U,
  },
  TaskGroup: {
    Count: I, EphemeralDisk: ref('EphemeralDisk'), MaxClientDisconnect: I, Meta: map(S), Migrate: ref('MigrateStrategy'), Name: S,
    ReschedulePolicy: ref('ReschedulePolicy'), RestartPolicy: ref('RestartPolicy'), ShutdownDelay: I, StopAfterClientDisconnect: I,
    Tasks: arr(ref('Task')), Update: ref('UpdateStrategy'),
  },
  Task: {
    Config: 'object', Driver: S, Env: map(S), KillSignal: S, KillTimeout: I, Kind: S, Leader: B, Lifecycle: ref('TaskLifecycle'),
    LogConfig: ref('LogConfig'), Meta: map(S), Name: S, Resources: ref('Resources'), RestartPolicy: ref('RestartPolicy'), ShutdownDelay: I, User: S,
  },
  TaskLifecycle: { Hook: S, Sidecar: B },
  LogConfig: { MaxFileSizeMB: I, MaxFiles: I },
  Resources: { CPU: I, Cores: I, DiskMB: I, IOPS: I, MemoryMB: I, MemoryMaxMB: I },
  RestartPolicy: { Attempts: I, Delay: I, Interval: I, Mode: S },
  ReschedulePolicy: { Attempts: I, Delay: I, DelayFunction: S, Interval: I, MaxDelay: I, Unlimited: B },
  EphemeralDisk: { Migrate: B, SizeMB: I, Sticky: B },
  MigrateStrategy: { HealthCheck: S, HealthyDeadline: I, MaxParallel: I, MinHealthyTime: I },
  UpdateStrategy: { AutoPromote: B, AutoRevert: B, Canary: I, HealthCheck: S, HealthyDeadline: I, MaxParallel: I, MinHealthyTime: I, ProgressDeadline: I, Stagger: I },
};

/** Where `value` does not have type `t`, each naming its path. */
function problems(value: unknown, t: T, path: string): string[] {
  const isObj = typeof value === 'object' && value !== null && !Array.isArray(value);
  if (typeof t === 'string') {
    switch (t) {
      case 'string':
        return typeof value === 'string' ? [] : [`${path}: expected a string, got ${JSON.stringify(value)}`];
      case 'integer':
        return Number.isInteger(value) ? [] : [`${path}: expected an integer, got ${JSON.stringify(value)}`];
      case 'uint':
        return Number.isInteger(value) && (value as number) >= 0 ? [] : [`${path}: expected an unsigned integer, got ${JSON.stringify(value)}`];
      case 'number':
        return typeof value === 'number' && Number.isFinite(value) ? [] : [`${path}: expected a number, got ${JSON.stringify(value)}`];
      case 'boolean':
        return typeof value === 'boolean' ? [] : [`${path}: expected true or false, got ${JSON.stringify(value)}`];
      case 'date-time':
        return typeof value === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(value) ? [] : [`${path}: expected an RFC 3339 time, got ${JSON.stringify(value)}`];
      case 'object':
        return value === null || isObj ? [] : [`${path}: expected an object, got ${JSON.stringify(value)}`];
    }
  }
  // Go's nil pointers, maps and slices are null.
  if (value === null) return [];
  if ('nullable' in t) return problems(value, t.nullable, path);
  if ('array' in t) return Array.isArray(value) ? value.flatMap((v, i) => problems(v, t.array, `${path}[${i}]`)) : [`${path}: expected an array, got ${JSON.stringify(value)}`];
  if ('map' in t) return isObj ? Object.entries(value).flatMap(([k, v]) => problems(v, t.map, `${path}.${k}`)) : [`${path}: expected a map, got ${JSON.stringify(value)}`];
  if (!isObj) return [`${path}: expected a ${t.ref} object, got ${JSON.stringify(value)}`];
  const schema = SCHEMAS[t.ref]!;
  return Object.entries(value).flatMap(([k, v]) => (k in schema ? problems(v, schema[k]!, `${path}.${k}`) : []));
}

/** Checks `body` against the schema `name` and that it sends `wanted` (properties Nomad's clients read). */
function conforms(body: unknown, name: string, wanted: string[] = []): void {
  expect(problems(body, ref(name), name)).toEqual([]);
  const missing = wanted.filter((k) => !(k in (body as Record<string, unknown>)));
  expect(missing, `${name} lacks ${missing.join(', ')}`).toEqual([]);
}

let s: Served;
let nodeId: string;
let deployment: Record<string, unknown>;

beforeAll(async () => {
  s = await serve();
  nodeId = s.store.get('meta', 'nodeId') as string;
  const body = mockJob('conf', undefined, { Meta: { v: '1' } });
  (body.Job.TaskGroups[0] as Record<string, unknown>).Update = { MinHealthyTime: 100e6, HealthyDeadline: 300e9 };
  await runJob(s, body);
  await waitForAllocs(s.socket, '/v1/job/conf/allocations', (l) => l.length === 1);
  deployment = await until(async () => (await call(s.socket, 'GET', '/v1/job/conf/deployment')).json(), (d) => d.Status === 'successful', 'the deployment to succeed');
}, 60_000);
afterAll(cleanUp);

const get = async (path: string) => {
  const res = await call(s.socket, 'GET', path);
  expect(res.status, res.text).toBe(200);
  return res.json();
};

describe("the new endpoints against Nomad's OpenAPI schemas", { timeout: 60_000 }, () => {
  it('GET /v1/nodes: NodeListStub[]', async () => {
    const list = await get('/v1/nodes');
    expect(list).toHaveLength(1);
    conforms(list[0], 'NodeListStub', ['ID', 'Name', 'Datacenter', 'Status', 'SchedulingEligibility', 'Drivers', 'Drain', 'NodeClass', 'Version', 'Address', 'CreateIndex', 'ModifyIndex']);
  });

  it('GET /v1/node/:id: Node', async () => {
    conforms(await get(`/v1/node/${nodeId}`), 'Node', ['ID', 'Name', 'Datacenter', 'Attributes', 'NodeResources', 'ReservedResources', 'Drivers', 'Events', 'Status', 'StatusUpdatedAt', 'SchedulingEligibility', 'HTTPAddr']);
  });

  it('GET /v1/namespaces and /v1/namespace/:name: Namespace', async () => {
    for (const ns of await get('/v1/namespaces')) conforms(ns, 'Namespace', ['Name', 'Description', 'Quota', 'CreateIndex', 'ModifyIndex']);
    conforms(await get('/v1/namespace/default'), 'Namespace', ['Name']);
  });

  it('GET /v1/evaluations and /v1/evaluation/:id: Evaluation', async () => {
    const evals = await get('/v1/evaluations');
    expect(evals.length).toBeGreaterThan(0);
    for (const e of evals) conforms(e, 'Evaluation', ['ID', 'Priority', 'Type', 'TriggeredBy', 'JobID', 'JobModifyIndex', 'Status', 'DeploymentID', 'QueuedAllocations', 'CreateIndex', 'ModifyIndex']);
    conforms(await get(`/v1/evaluation/${evals[0].ID}`), 'Evaluation');
  });

  it('POST /v1/job/:id/plan: JobPlanResponse with a JobDiff', async () => {
    const body = mockJob('conf', undefined, { Meta: { v: '2' } });
    (body.Job.TaskGroups[0] as Record<string, unknown>).Update = { MinHealthyTime: 100e6, HealthyDeadline: 300e9 };
    const res = await call(s.socket, 'POST', '/v1/job/conf/plan', { ...body, Diff: true });
    expect(res.status, res.text).toBe(200);
    const plan = res.json();
    expect(plan.Diff.Type).toBe('Edited');
    conforms(plan, 'JobPlanResponse', ['Annotations', 'Diff', 'JobModifyIndex', 'Warnings', 'FailedTGAllocs', 'CreatedEvals']);
  });

  it('POST /v1/job/:id/evaluate: JobRegisterResponse', async () => {
    const res = await call(s.socket, 'POST', '/v1/job/conf/evaluate', {});
    expect(res.status).toBe(200);
    conforms(res.json(), 'JobRegisterResponse', ['EvalID', 'EvalCreateIndex', 'JobModifyIndex']);
  });

  it('POST /v1/jobs/parse with Canonicalize: Job', async () => {
    const hcl = 'job "p" {\n  group "g" {\n    update { min_healthy_time = "1s" }\n    task "t" {\n      driver = "mock"\n      config { run_for = "1h" }\n      lifecycle { hook = "prestart" }\n    }\n  }\n}\n';
    const res = await call(s.socket, 'POST', '/v1/jobs/parse', { JobHCL: hcl, Canonicalize: true });
    expect(res.status, res.text).toBe(200);
    conforms(res.json(), 'Job', ['ID', 'Name', 'Namespace', 'Region', 'Priority', 'Type', 'Datacenters', 'TaskGroups']);
    conforms(await get('/v1/job/conf'), 'Job', ['ID', 'Version', 'Status', 'SubmitTime', 'JobModifyIndex']);
  });

  it('GET /v1/deployments, /v1/deployment/:id, /v1/job/:id/deployment(s): Deployment', async () => {
    conforms(deployment, 'Deployment', ['ID', 'Namespace', 'JobID', 'JobVersion', 'JobModifyIndex', 'JobCreateIndex', 'TaskGroups', 'Status', 'StatusDescription', 'CreateIndex', 'ModifyIndex']);
    for (const d of await get('/v1/deployments')) conforms(d, 'Deployment');
    for (const d of await get('/v1/job/conf/deployments')) conforms(d, 'Deployment');
    conforms(await get(`/v1/deployment/${String(deployment['ID'])}`), 'Deployment');
  });

  it('POST /v1/deployment/fail/:id: DeploymentUpdateResponse', async () => {
    const body = mockJob('slowdep');
    (body.Job.TaskGroups[0] as Record<string, unknown>).Update = { MinHealthyTime: 200e9, HealthyDeadline: 300e9 };
    await runJob(s, body);
    const d = await get('/v1/job/slowdep/deployment');
    const res = await call(s.socket, 'POST', `/v1/deployment/fail/${d.ID}`, {});
    expect(res.status, res.text).toBe(200);
    conforms(res.json(), 'DeploymentUpdateResponse', ['DeploymentModifyIndex', 'EvalID']);
  });

  it('GET /v1/metrics: MetricsSummary', async () => {
    conforms(await get('/v1/metrics'), 'MetricsSummary', ['Timestamp', 'Gauges', 'Counters', 'Samples']);
  });

  it('the checker finds a wrong type (a self-test: this file can fail)', () => {
    expect(problems({ ID: 7, Drivers: { mock: { Healthy: 'yes' } }, Events: [{ Timestamp: 'now' }] }, ref('Node'), 'Node')).toEqual([
      'Node.ID: expected a string, got 7',
      'Node.Drivers.mock.Healthy: expected true or false, got "yes"',
      'Node.Events[0].Timestamp: expected an RFC 3339 time, got "now"',
    ]);
  });
});
