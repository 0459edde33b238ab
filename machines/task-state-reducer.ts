/**
 * Nomad's task-state reducer (alloc_runner.go handleTaskStateUpdates) as a pure function: from every
 * task's state it decides the alloc-wide kill event, whether to start the ordered kill, which parked
 * tasks to release, and, through the lifecycle coordinator, which tasks' gates are open.
 */
import { coordinate, isTaskAllowed, type CoordinatedTask, type CoordinatorState, type Stage } from './coordinator.ts';
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

/**
 * Runs the reducer once over a snapshot of every task's state. It runs on every task runner's news (11 to 14 per
 * lifecycle of a three-task allocation), so it walks the tasks in plain loops and builds nothing it does not
 * return.
 */
export function reduceTaskStates(r: ReducerInput): ReducerEffects {
  const fx: ReducerEffects = { emitTo: [], startKill: false, release: [], coordinator: r.coordinator, open: r.open, gates: [] };
  const tasks = r.tasks;
  const quiet = r.killEventSent || r.killing;

  let killEvent: TaskEvent | undefined;
  let anyLive = false;
  let allLiveSidecars = true;
  let anySidecar = false;
  let failed: TaskSpec | undefined;
  let deadLeader = false;
  for (const t of tasks) {
    const ts = r.taskStates[t.name]!;
    if (isSidecar(t)) anySidecar = true;
    if (isLive(t, r)) {
      anyLive = true;
      if (!isSidecar(t)) allLiveSidecars = false;
    }
    if (ts.state === 'dead') {
      if (ts.failed) failed ??= t;
      else if (t.leader) deadLeader = true;
    }
  }
  if (!quiet) {
    if (failed) killEvent = taskEvent(TaskEventType.SiblingFailed, r.now, { details: { failed_sibling: failed.name } });
    // A dead leader overrides a failed sibling.
    if (deadLeader) killEvent = taskEvent(TaskEventType.LeaderDead, r.now);
  }

  if (anyLive) {
    if (!killEvent && !quiet && anySidecar && allLiveSidecars) {
      killEvent = taskEvent(TaskEventType.MainDead, r.now);
    }
    if (killEvent) {
      fx.killEvent = killEvent;
      for (const t of tasks) if (isLive(t, r)) fx.emitTo.push(t.name);
      fx.startKill = true;
    }
  } else {
    for (const t of tasks) if (!isPoststop(t) && !r.runComplete[t.name]) fx.release.push(t.name);
  }

  const coordinated: CoordinatedTask[] = [];
  for (const t of tasks) {
    const ts = r.taskStates[t.name]!;
    coordinated.push({ name: t.name, lifecycle: t.lifecycle, state: r.restartPending[t.name] ? 'pending' : ts.state, failed: ts.failed });
  }
  const next = coordinate(r.coordinator, coordinated);
  fx.coordinator = next.state;
  fx.open = next.open;
  // The same open stages open and close no gate: the usual case, most news moves the coordinator nowhere.
  if (!sameStages(r.open, next.open)) {
    for (const t of tasks) {
      const was = isTaskAllowed(r.open, t.lifecycle);
      const now = isTaskAllowed(next.open, t.lifecycle);
      if (was !== now) fx.gates.push({ task: t.name, open: now });
    }
  }
  return fx;
}

/** Whether two lists of open stages are the same, in order. */
export function sameStages(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Nomad's client status from task states (alloc_runner.go getClientStatus); a forced status wins. */
export function clientStatusOf(taskStates: Record<string, TaskState>, forced?: ClientStatus): ClientStatus {
  if (forced) return forced;
  // One pass: failed beats running, running beats pending, else complete.
  let running = false;
  let pending = false;
  for (const name in taskStates) {
    const s = taskStates[name]!;
    if (s.state === 'dead') {
      if (s.failed) return 'failed';
    } else if (s.state === 'running') running = true;
    else if (s.state === 'pending') pending = true;
  }
  return running ? 'running' : pending ? 'pending' : 'complete';
}
