/**
 * The alloc runner's types: what it is started with (input), what it keeps (context), what it hears
 * (events) and its hook calls. Data only; the machine is in alloc-runner.ts.
 */
import type { CoordinatorState, Stage } from './coordinator.ts';
import type { HookPlan } from './hook-calls.ts';
import type { TaskNews } from './task-news.ts';
import type { AllocCheckReport, AllocCheckStatus, AllocHookError, AllocSpec, ClientStatus, DeploymentStatus, TaskEvent, TaskState } from './model.ts';

export type { AllocCheckReport, AllocCheckStatus } from './model.ts';

/** Nomad's alloc runner hook phases (interfaces/runner_lifecycle.go). */
export type AllocHookPhase = 'prerun' | 'preKill' | 'postrun' | 'destroy' | 'update' | 'preTaskRestart' | 'shutdown';

/** Names of the alloc hooks implementing each phase, in call order. */
export type AllocHookPlan = Partial<Record<AllocHookPhase, string[]>>;

/** What one alloc hook call gets: the phase, the hook and the allocation as it is now. */
export interface AllocHookCallInput {
  phase: AllocHookPhase;
  hook: string;
  alloc: AllocSpec;
}

/** What an alloc runner is started with: the allocation and the hook plans; plain data only. */
export interface AllocRunnerInput {
  alloc: AllocSpec;
  hooks?: AllocHookPlan;
  /** Task hook plans per task name (which task hooks implement which phase). */
  taskHooks?: Record<string, HookPlan>;
  maxKillTimeout?: number;
  seed?: number;
}

/**
 * Why an alloc-level command did not apply: no such task, the alloc is stopping or not set up yet
 * (Nomad's "restart of an alloc that should not run"), its tasks have finished (ErrTaskNotRunning), or a
 * restart is already under way.
 */
export type AllocRejectionCode = 'ErrUnknownTask' | 'ErrAllocNotRunning' | 'ErrTaskNotRunning' | 'ErrRestartInProgress';

/** A restart or signal the alloc could not apply, answered instead of dropped. */
export interface AllocCommandRejection {
  command: string;
  code: AllocRejectionCode;
  message: string;
  time: number;
}

/** A restart of the running tasks (or of all of them) waiting for the preTaskRestart hooks. */
export interface PendingRestart {
  /** RestartAll: every non-poststop task, dead ones too, in lifecycle order. */
  all: boolean;
  failure?: boolean;
  /** The caller's event, recorded on each restarted task instead of the default Restart Signaled. */
  event?: TaskEvent;
}

/** What an alloc runner was started with and keeps unchanged: what each task runner is spawned with. */
export interface AllocRunnerSettings {
  taskHooks: Record<string, HookPlan>;
  maxKillTimeout?: number;
  seed: number;
}

/** What the alloc keeps of each task runner besides its TaskState, by task name. */
export interface TaskFlags {
  /** Dead tasks sent a force restart that their runner has not shown yet; they count as live. */
  restartPending: Record<string, boolean>;
  /** How many rejections each task runner has recorded, to notice a refused restart. */
  rejections: Record<string, number>;
  /** Tasks whose runner has finished for good (stop hooks ran). */
  runComplete: Record<string, boolean>;
  /** Tasks whose runner detached on SHUTDOWN. */
  detached: Record<string, boolean>;
  /**
   * Parked dead tasks already sent their release KILL: every task-state change re-runs the reducer, which
   * names them until their stop hooks have run. Absent in snapshots written before it was kept.
   */
  released?: Record<string, boolean>;
}

/** Nomad's lifecycle coordinator: where it is and which gates it holds open. */
export interface GateState {
  coordinator: CoordinatorState;
  open: Stage[];
  /** Prerun is over: the coordinator may open gates. */
  enabled: boolean;
}

/**
 * What an alloc runner keeps: JSON data, persisted and shown by the inspector. Under 20 top-level keys even
 * with every optional one set: XState copies the context with Object.assign, and V8 makes an object built
 * that way with 20 or more properties a slow dictionary (see TaskRunnerContext).
 */
export interface AllocRunnerContext {
  alloc: AllocSpec;
  hooks: AllocHookPlan;
  settings: AllocRunnerSettings;
  taskStates: Record<string, TaskState>;
  taskFlags: TaskFlags;
  gates: GateState;
  cursor: Partial<Record<AllocHookPhase, number>>;
  clientStatus: ClientStatus;
  /** Nomad's forced client status (a prerun failure). */
  forcedStatus?: ClientStatus;
  /** The reducer's kill event has been sent (it fires once). */
  killEventSent: boolean;
  /** killTasks is under way or done; no second ordered kill. */
  killing: boolean;
  destroyRequested: boolean;
  hookErrors: (AllocHookError & { phase: AllocHookPhase })[];
  /** A restart waiting for the preTaskRestart hooks (Nomad's restartTasks). */
  pendingRestart?: PendingRestart;
  /** The health_watcher's verdict, for allocations with an update block. */
  deploymentStatus?: DeploymentStatus;
  /** The one-slot update queue: only the newest pending update is kept. */
  queuedUpdate?: AllocSpec;
  deadline?: number;
  rejections: AllocCommandRejection[];
  /**
   * The latest status of each service check, by check ID, for the inspector (the agent's check store keeps
   * Nomad's full results). Absent until a check reports, and in snapshots written before it was kept.
   */
  checks?: Record<string, AllocCheckStatus>;
}

/** The events an alloc runner hears: the public commands (CONTRACT.md) and its children's news and answers. */
export type AllocRunnerEvent =
  | { type: 'UPDATE'; alloc: AllocSpec }
  | { type: 'KILL' }
  | { type: 'RESTART'; task?: string; all?: boolean; failure?: boolean; event?: TaskEvent }
  /** The health_watcher's verdict, with an Alloc Unhealthy event for each task that held health back. */
  | { type: 'DEPLOYMENT_HEALTH'; status: DeploymentStatus; taskEvents?: Record<string, TaskEvent> }
  /** The checks hook: a check's status changed (CHECK_STATUS) or checks stopped for good (CHECKS_REMOVED). */
  | AllocCheckReport
  | { type: 'SIGNAL'; task?: string; signal: string; event?: TaskEvent }
  | { type: 'SHUTDOWN' }
  | { type: 'DESTROY' }
  /** From the runtime, once after resuming from a persisted snapshot: re-judge the task states, tell the tasks. */
  | { type: 'RESTORED' }
  /** A task runner's news, told by the runner after a step that changed what the alloc mirrors (task-news.ts). */
  | TaskNews
  | { type: `xstate.done.actor.${string}`; output?: unknown }
  | { type: `xstate.error.actor.${string}`; error?: unknown };

/** Emitted when a command does not apply, so callers hear about it. */
export type AllocRunnerEmitted = { type: 'command.rejected'; rejection: AllocCommandRejection };
