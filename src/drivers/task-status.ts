/**
 * SwarmKit's task model (api/types.proto, trimmed): states are ordered numbers so that a higher value always
 * wins, and a task's observed state only moves forward. Compare states with `<` and `>=`, never by name.
 *
 * The names carry a `Swarm` prefix because Nomad's `TaskState` and `TaskStatus` already mean something else
 * in allocrun's public surface.
 */
import type { ContainerStatus, PortStatus } from './controller.ts';
import type { TaskSpec } from '../jobspec/types.ts';

/** SwarmKit's TaskState values; the gaps are SwarmKit's, kept so persisted numbers stay comparable. */
export const SwarmTaskState = {
  NEW: 0,
  PENDING: 64,
  ASSIGNED: 192,
  ACCEPTED: 256,
  PREPARING: 320,
  READY: 384,
  STARTING: 448,
  RUNNING: 512,
  COMPLETE: 576,
  SHUTDOWN: 640,
  FAILED: 704,
  REJECTED: 768,
  REMOVE: 800,
  ORPHANED: 832,
} as const;

/** One of the SwarmKit task states, as its number. */
export type SwarmTaskState = (typeof SwarmTaskState)[keyof typeof SwarmTaskState];

/** The state's name (`RUNNING`), for messages and logs; `STATE(n)` for a number SwarmKit does not define. */
export function swarmTaskStateName(state: number): string {
  for (const [name, value] of Object.entries(SwarmTaskState)) if (value === state) return name;
  return `STATE(${state})`;
}

/** What the agent observed of a task. `err` is user-facing and set for FAILED and REJECTED. */
export interface SwarmTaskStatus {
  /** Milliseconds on the agent's clock; 0 when never set. Only moves forward. */
  timestamp: number;
  state: SwarmTaskState;
  /** A routine note such as "preparing" or "started". */
  message: string;
  err?: string;
  runtimeStatus?: { container?: ContainerStatus };
  portStatus?: PortStatus;
  /** Set by the manager, never by the agent. */
  appliedBy?: string;
  appliedAt?: number;
}

/** Object metadata (SwarmKit's Meta): ignored when deciding whether an update changes a task. */
export interface SwarmTaskMeta {
  version?: number;
  createdAt?: number;
  updatedAt?: number;
}

/** A task as the agent sees it: the manager writes `spec` and `desiredState`, the agent writes `status`. */
export interface SwarmTask {
  id: string;
  /** RUNNING when created; SHUTDOWN or REMOVE to stop it. Only ever raised. */
  desiredState: SwarmTaskState;
  status: SwarmTaskStatus;
  spec: TaskSpec;
  meta?: SwarmTaskMeta;
  serviceId?: string;
  nodeId?: string;
  slot?: number;
}

/** A fresh status in `state` with no message and no timestamp. */
export function newSwarmTaskStatus(state: SwarmTaskState = SwarmTaskState.NEW, message = ''): SwarmTaskStatus {
  return { timestamp: 0, state, message };
}
