/**
 * Allocations in Nomad's API shape (`GET /v1/allocation/:id`, the list stubs, event payloads): PascalCase,
 * times as Nomad writes them (task event times in nanoseconds, task state times as RFC 3339).
 */
import type { AllocSpec, AllocState, TaskEvent, TaskState } from '../jobspec/types.ts';
import { ZERO_TIME, type Json } from './job-json.ts';
import type { RescheduleTracker } from './reschedule-policy.ts';

/** What the registry knows of one allocation besides its runner's state. */
export interface AllocView {
  id: string;
  spec: AllocSpec;
  jobId: string;
  namespace: string;
  group: string;
  /** The instance number within its group (`web.api[0]`). */
  index: number;
  jobVersion: number;
  desired: 'run' | 'stop' | 'evict';
  desiredDescription: string;
  createIndex: number;
  modifyIndex: number;
  allocModifyIndex: number;
  /** Milliseconds since the epoch. */
  createTime: number;
  modifyTime: number;
  previousAllocation?: string;
  nextAllocation?: string;
  /** The evaluation whose write placed it. */
  evalId?: string;
  /** The pending evaluation that reschedules it, once it failed (Nomad's FollowupEvalID). */
  followupEvalId?: string;
  /** When the agent's clock saw it fail (ms): what its next reschedule delay is counted from. */
  failedAt?: number;
  /** The reschedule attempts that led to it (Nomad's RescheduleTracker), on a replacement of a failed allocation. */
  rescheduleTracker?: RescheduleTracker;
  /** Placed as a canary of its deployment (Nomad's DeploymentStatus.Canary, shown until the deployment is promoted). */
  canary?: boolean;
  /** The node it runs on (this agent's). */
  nodeId?: string;
  nodeName?: string;
  state: AllocState;
}

/** Nomad's zero time, for task states that have not started or finished. */
const iso = (ms: number | undefined): string => (ms === undefined ? ZERO_TIME : new Date(ms).toISOString());
const nanos = (ms: number): number => Math.round(ms * 1e6);

function eventJson(e: TaskEvent): Json {
  return {
    Type: e.type,
    Time: nanos(e.time),
    Message: e.message ?? '',
    DisplayMessage: e.displayMessage,
    Details: e.details ?? {},
    FailsTask: e.failsTask ?? false,
    ExitCode: e.exitCode ?? 0,
    Signal: e.signal ?? 0,
    RestartReason: e.restartReason ?? '',
    StartDelay: e.startDelay !== undefined ? nanos(e.startDelay) : 0,
    KillTimeout: e.killTimeout !== undefined ? nanos(e.killTimeout) : 0,
    // Nomad's TaskEvent.DownloadError: the reason of a Failed Artifact Download (also in Details).
    DownloadError: e.details?.['download_error'] ?? '',
  };
}

function taskStateJson(ts: TaskState): Json {
  return {
    State: ts.state,
    Failed: ts.failed,
    Restarts: ts.restarts,
    LastRestart: iso(ts.lastRestart),
    StartedAt: iso(ts.startedAt),
    FinishedAt: iso(ts.finishedAt),
    Events: ts.events.map(eventJson),
  };
}

/**
 * Nomad's DeploymentStatus: null for an allocation outside a deployment (no update block, or a batch job);
 * otherwise the health_watcher's verdict, with `Healthy` null until it has one.
 */
function deploymentStatus(a: AllocView): Json | null {
  if (!a.spec.update || (a.spec.type !== 'service' && a.spec.type !== 'system')) return null;
  const verdict = a.state.deploymentStatus;
  return {
    Healthy: verdict ? verdict.healthy : null,
    Timestamp: new Date(verdict ? verdict.timestamp : a.modifyTime).toISOString(),
    Canary: a.canary === true,
    ModifyIndex: a.modifyIndex,
  };
}

/** `job.group[index]`, Nomad's allocation name. */
export function allocName(a: Pick<AllocView, 'jobId' | 'group' | 'index'>): string {
  return `${a.jobId}.${a.group}[${a.index}]`;
}

/** The list form (`AllocationListStub`). */
export function allocStubJson(a: AllocView): Json {
  return {
    ID: a.id,
    EvalID: a.evalId ?? '',
    Name: allocName(a),
    Namespace: a.namespace,
    NodeID: a.nodeId ?? '',
    NodeName: a.nodeName ?? '',
    JobID: a.jobId,
    JobType: a.spec.type,
    JobVersion: a.jobVersion,
    TaskGroup: a.group,
    DesiredStatus: a.desired,
    DesiredDescription: a.desiredDescription,
    ClientStatus: a.state.clientStatus,
    ClientDescription: clientDescription(a.state),
    TaskStates: Object.fromEntries(Object.entries(a.state.taskStates).map(([name, ts]) => [name, taskStateJson(ts)])),
    DeploymentStatus: deploymentStatus(a),
    FollowupEvalID: a.followupEvalId ?? '',
    RescheduleTracker: a.rescheduleTracker ?? null,
    PreviousAllocation: a.previousAllocation ?? '',
    NextAllocation: a.nextAllocation ?? '',
    CreateIndex: a.createIndex,
    ModifyIndex: a.modifyIndex,
    AllocModifyIndex: a.allocModifyIndex,
    CreateTime: nanos(a.createTime),
    ModifyTime: nanos(a.modifyTime),
  };
}

/** The full form (`Allocation`), with the job it runs and the deployment it counts in (empty outside one). */
export function allocJson(a: AllocView, job: Json | undefined): Json {
  return { ...allocStubJson(a), DeploymentID: a.spec.deploymentId ?? '', Job: job ?? null, AllocatedResources: allocatedResources(a.spec), Metrics: null };
}

/**
 * Nomad's AllocatedResources as far as allocrun allocates them: the group's host ports, both as
 * `Shared.Ports` (AllocatedPortMapping) and, for older clients, as the group's `Shared.Networks`
 * (static ports under ReservedPorts, dynamic ones under DynamicPorts, values filled in). Null without ports.
 */
function allocatedResources(spec: AllocSpec): Json | null {
  if (!spec.ports) return null;
  const isStatic = (label: string) => spec.network?.ports.some((p) => p.label === label && p.static !== undefined) ?? false;
  const port = (p: NonNullable<AllocSpec['ports']>[number]): Json => ({ Label: p.label, Value: p.value, To: p.to, HostNetwork: 'default', IgnoreCollision: false });
  return {
    Tasks: {},
    TaskLifecycles: {},
    Shared: {
      DiskMB: 0,
      Networks: [{
        Mode: 'host', Device: '', CIDR: '', IP: spec.ports[0]?.hostIP ?? '', Hostname: '', MBits: 0, DNS: null, CNI: null,
        ReservedPorts: spec.ports.filter((p) => isStatic(p.label)).map(port),
        DynamicPorts: spec.ports.filter((p) => !isStatic(p.label)).map(port),
      }],
      Ports: spec.ports.map((p) => ({ Label: p.label, Value: p.value, To: p.to, HostIP: p.hostIP })),
    },
  };
}

function clientDescription(state: AllocState): string {
  switch (state.clientStatus) {
    case 'pending':
      return 'No tasks have started';
    case 'running':
      return 'Tasks are running';
    case 'complete':
      return 'All tasks have completed';
    case 'failed':
      return 'Failed tasks';
  }
}

/** `AllocResourceUsage` from the runner's latest stats (Nomad's `/v1/client/allocation/:id/stats`). */
export function allocStatsJson(stats: { timestamp: number; usage: { cpuPercent: number; memoryRss: number }; tasks: Record<string, { timestamp: number; cpu: { percent: number; userMs: number; systemMs: number; totalTicks?: number }; memory: { rss: number; swap?: number }; pids?: number[] }> }): Json {
  const usage = (cpu: { percent: number; userMs?: number; systemMs?: number; totalTicks?: number }, memory: { rss: number; swap?: number }): Json => ({
    MemoryStats: { RSS: memory.rss, Cache: 0, Swap: memory.swap ?? 0, Usage: memory.rss, MaxUsage: 0, KernelUsage: 0, KernelMaxUsage: 0, Measured: ['RSS'] },
    CpuStats: { SystemMode: cpu.systemMs ?? 0, UserMode: cpu.userMs ?? 0, TotalTicks: cpu.totalTicks ?? 0, ThrottledPeriods: 0, ThrottledTime: 0, Percent: cpu.percent, Measured: ['Percent', 'System Mode', 'User Mode'] },
    DeviceStats: [],
  });
  return {
    ResourceUsage: usage({ percent: stats.usage.cpuPercent }, { rss: stats.usage.memoryRss }),
    Tasks: Object.fromEntries(
      Object.entries(stats.tasks).map(([name, t]) => [name, { ResourceUsage: usage(t.cpu, t.memory), Timestamp: nanos(t.timestamp), Pids: null }]),
    ),
    Timestamp: nanos(stats.timestamp),
  };
}
