/**
 * Nomad API allocations read back into the records the status views print (src/cli/status.ts), so an
 * allocation looks the same whether read from a data dir or from a running agent.
 */
import type { AllocSpec, ClientStatus, TaskEvent, TaskLifecycle, TaskSpec, TaskState, TaskStatus } from '../jobspec/types.ts';
import type { AllocRecord } from '../state/store.ts';

/** The fields of Nomad's Allocation JSON the views read. */
export interface ApiAllocation {
  ID: string;
  Name: string;
  JobID: string;
  JobType?: string;
  TaskGroup: string;
  DesiredStatus: 'run' | 'stop';
  ClientStatus: ClientStatus;
  Namespace?: string;
  CreateTime: number;
  ModifyTime: number;
  JobVersion?: number;
  EvalID?: string;
  NodeID?: string;
  NodeName?: string;
  ClientDescription?: string;
  DesiredDescription?: string;
  TaskStates?: Record<string, { State: TaskStatus; Failed: boolean; Restarts: number; LastRestart?: string; StartedAt?: string; FinishedAt?: string; Events?: ApiTaskEvent[] }> | null;
  Job?: { Type?: string; TaskGroups?: { Name: string; Tasks?: { Name: string; Driver: string; Leader?: boolean; Lifecycle?: { Hook: string; Sidecar?: boolean } | null }[] }[] } | null;
  AllocatedResources?: { Shared?: { Networks?: ApiNetwork[] | null } | null } | null;
}

type ApiPort = { Label: string; Value: number; To?: number };
interface ApiNetwork {
  IP?: string;
  DynamicPorts?: ApiPort[] | null;
  ReservedPorts?: ApiPort[] | null;
}

/** The ports the allocation holds and which were static, from its shared network (Nomad's AllocatedResources). */
function portsOf(a: ApiAllocation): Pick<AllocSpec, 'network' | 'ports'> {
  const nw = a.AllocatedResources?.Shared?.Networks?.[0];
  if (!nw) return {};
  const dynamic = nw.DynamicPorts ?? [];
  const reserved = nw.ReservedPorts ?? [];
  if (dynamic.length + reserved.length === 0) return {};
  return {
    network: { mode: 'host', ports: [...dynamic.map((p) => ({ label: p.Label })), ...reserved.map((p) => ({ label: p.Label, static: p.Value }))] },
    ports: [...dynamic, ...reserved].map((p) => ({ label: p.Label, value: p.Value, to: p.To ?? 0, hostIP: nw.IP ?? '' })),
  };
}

interface ApiTaskEvent {
  Type: string;
  Time: number;
  DisplayMessage: string;
  Message?: string;
  ExitCode?: number;
  Signal?: number;
}

const ms = (iso: string | undefined): number | undefined => {
  if (!iso || iso.startsWith('0001-')) return undefined;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? undefined : t;
};

function taskEventOf(e: ApiTaskEvent): TaskEvent {
  return { type: e.Type, time: Math.round(e.Time / 1e6), displayMessage: e.DisplayMessage, ...(e.Message && { message: e.Message }) };
}

function taskStateOf(ts: NonNullable<ApiAllocation['TaskStates']>[string]): TaskState {
  const lastRestart = ms(ts.LastRestart);
  const startedAt = ms(ts.StartedAt);
  const finishedAt = ms(ts.FinishedAt);
  return {
    state: ts.State, failed: ts.Failed, restarts: ts.Restarts,
    ...(lastRestart !== undefined && { lastRestart }), ...(startedAt !== undefined && { startedAt }), ...(finishedAt !== undefined && { finishedAt }),
    events: (ts.Events ?? []).map(taskEventOf),
  };
}

/** The record `formatAllocList`/`formatAllocDetail` print, from an API allocation (full or stub). */
export function recordOfApiAlloc(a: ApiAllocation): AllocRecord {
  const group = a.Job?.TaskGroups?.find((g) => g.Name === a.TaskGroup);
  type ApiTask = NonNullable<NonNullable<ApiAllocation['Job']>['TaskGroups']>[number]['Tasks'] & object;
  const apiTasks: ApiTask = group?.Tasks ?? Object.keys(a.TaskStates ?? {}).map((Name) => ({ Name, Driver: '-' }));
  const tasks: TaskSpec[] = apiTasks.map((t) => ({
    name: t.Name,
    driver: t.Driver,
    config: {},
    ...(t.Leader ? { leader: true } : {}),
    ...(t.Lifecycle ? { lifecycle: { hook: t.Lifecycle.Hook as TaskLifecycle['hook'], ...(t.Lifecycle.Sidecar ? { sidecar: true } : {}) } } : {}),
  }));
  const spec: AllocSpec = {
    id: a.ID, job: a.JobID, group: a.TaskGroup, type: (a.Job?.Type ?? a.JobType ?? 'service') as AllocSpec['type'],
    ...(a.Namespace && a.Namespace !== 'default' && { namespace: a.Namespace }), desiredStatus: a.DesiredStatus, tasks, ...portsOf(a),
    index: Number(/\[(\d+)\]$/.exec(a.Name ?? '')?.[1] ?? 0),
  };
  const taskStates = Object.fromEntries(Object.entries(a.TaskStates ?? {}).map(([name, ts]) => [name, taskStateOf(ts)]));
  return { spec, state: { clientStatus: a.ClientStatus, taskStates }, createdAt: Math.round(a.CreateTime / 1e6), updatedAt: Math.round(a.ModifyTime / 1e6) };
}

/** What an agent says of an allocation beyond its record (Nomad's Eval ID, Node, Job Version, descriptions). */
export interface Placement {
  evalId: string;
  nodeId: string;
  nodeName: string;
  jobVersion: number;
  clientDescription: string;
  desiredDescription: string;
  /** `alloc status`'s rescheduling lines (alloc-reschedule.ts), after Created and Modified. */
  reschedule?: [string, string][];
}

/** What the agent knows of an allocation beyond its record: the header lines Nomad's `alloc status` has besides. */
export function placementOfApiAlloc(a: ApiAllocation): Placement {
  return {
    evalId: a.EvalID ?? '', nodeId: a.NodeID ?? '', nodeName: a.NodeName ?? '', jobVersion: a.JobVersion ?? 0,
    clientDescription: a.ClientDescription ?? '', desiredDescription: a.DesiredDescription ?? '',
  };
}
