/**
 * Nomad's task-state reducer (alloc_runner.go handleTaskStateUpdates) as a pure function: from every
 * task's state it decides the alloc-wide kill event, whether to start the ordered kill, which parked
 * tasks to release, and, through the lifecycle coordinator, which tasks' gates are open.
 */
import { coordinate, isTaskAllowed, type CoordinatorState, type Stage } from './coordinator.ts';
import { TaskEventType, taskEvent } from './task-events.ts';
import type { ClientStatus, TaskEvent, TaskSpec, TaskState } from './model.ts';

export interface ReducerInput {
  tasks: TaskSpec[];
  taskStates: Record<string, TaskState>;
  runComplete: Record<string, boolean>;
  /** Tasks sent a restart whose runner has not yet shown it; they count as live. */
  restartPending: Record<string, boolean>;
  killEventSent: boolean;
  killing: boolean;
  coordinator: CoordinatorState;
  open: Stage[];
  now: number;
}

export interface ReducerEffects {
  /** Sibling Task Failed / Leader Task Dead / Main Tasks Dead, for every task in `emitTo`. */
  killEvent?: TaskEvent;
  emitTo: string[];
  /** Start killTasks (the ordered kill). */
  startKill: boolean;
  /** Parked dead tasks that can never run again: kill them so their stop hooks run. */
  release: string[];
  coordinator: CoordinatorState;
  open: Stage[];
  /** Gates whose state changed. */
  gates: { task: string; open: boolean }[];
}

export const isPoststop = (t: TaskSpec) => t.lifecycle?.hook === 'poststop';
export const isSidecar = (t: TaskSpec) => t.lifecycle?.sidecar === true && t.lifecycle.hook !== 'poststop';

/** Live = not dead; poststop tasks are never live. */
export function isLive(t: TaskSpec, r: Pick<ReducerInput, 'taskStates' | 'restartPending'>): boolean {
  return !isPoststop(t) && (r.taskStates[t.name]!.state !== 'dead' || r.restartPending[t.name] === true);
}

/** Runs the reducer once over a snapshot of every task's state. */
export function reduceTaskStates(r: ReducerInput): ReducerEffects {
  const fx: ReducerEffects = { emitTo: [], startKill: false, release: [], coordinator: r.coordinator, open: r.open, gates: [] };
  const live = r.tasks.filter((t) => isLive(t, r));
  const quiet = r.killEventSent || r.killing;

  let killEvent: TaskEvent | undefined;
  if (!quiet) {
    const failed = r.tasks.find((t) => r.taskStates[t.name]!.state === 'dead' && r.taskStates[t.name]!.failed);
    if (failed) killEvent = taskEvent(TaskEventType.SiblingFailed, r.now, { details: { failed_sibling: failed.name } });
    // A dead leader overrides a failed sibling.
    const leader = r.tasks.find((t) => t.leader && r.taskStates[t.name]!.state === 'dead' && !r.taskStates[t.name]!.failed);
    if (leader) killEvent = taskEvent(TaskEventType.LeaderDead, r.now);
  }

  if (live.length > 0) {
    if (!killEvent && !quiet && r.tasks.some(isSidecar) && live.every(isSidecar)) {
      killEvent = taskEvent(TaskEventType.MainDead, r.now);
    }
    if (killEvent) {
      fx.killEvent = killEvent;
      fx.emitTo = live.map((t) => t.name);
      fx.startKill = true;
    }
  } else {
    fx.release = r.tasks.filter((t) => !isPoststop(t) && !r.runComplete[t.name]).map((t) => t.name);
  }

  const coordinated = r.tasks.map((t) => ({
    name: t.name,
    lifecycle: t.lifecycle,
    state: r.restartPending[t.name] ? ('pending' as const) : r.taskStates[t.name]!.state,
    failed: r.taskStates[t.name]!.failed,
  }));
  const next = coordinate(r.coordinator, coordinated);
  fx.coordinator = next.state;
  fx.open = next.open;
  for (const t of r.tasks) {
    const was = isTaskAllowed(r.open, t.lifecycle);
    const now = isTaskAllowed(next.open, t.lifecycle);
    if (was !== now) fx.gates.push({ task: t.name, open: now });
  }
  return fx;
}

/** Nomad's client status from task states (alloc_runner.go getClientStatus); a forced status wins. */
export function clientStatusOf(taskStates: Record<string, TaskState>, forced?: ClientStatus): ClientStatus {
  if (forced) return forced;
  const states = Object.values(taskStates);
  if (states.some((s) => s.state === 'dead' && s.failed)) return 'failed';
  if (states.some((s) => s.state === 'running')) return 'running';
  if (states.some((s) => s.state === 'pending')) return 'pending';
  return 'complete';
}
