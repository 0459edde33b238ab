/**
 * Nomad's task lifecycle coordinator (client/allocrunner/tasklifecycle/coordinator.go) as a pure function
 * of task states: the alloc runner keeps the state in context, re-runs `coordinate` on every task-state
 * change and hands each task runner its gate. Gates are level-triggered, so only the open set matters.
 */
import type { TaskLifecycle, TaskStatus } from './model.ts';

/** Where the alloc is in its lifecycle; it only ever moves forward, except that a restart goes back to init. */
export type CoordinatorState = 'init' | 'prestart' | 'main' | 'poststart' | 'wait_alloc' | 'poststop';

/** A task's lifecycle stage: ephemeral vs sidecar matters for prestart/poststart only. */
export type Stage = 'preEph' | 'preSide' | 'main' | 'postEph' | 'postSide' | 'poststop';

/** What the coordinator needs of a task: its lifecycle block and current state. */
export interface CoordinatedTask {
  name: string;
  lifecycle?: TaskLifecycle;
  state: TaskStatus;
  failed: boolean;
}

/** The gates each state opens (spec §2.4); every other gate is closed. */
const OPEN: Record<CoordinatorState, readonly Stage[]> = {
  init: [],
  prestart: ['preEph', 'preSide'],
  main: ['preSide', 'main'],
  poststart: ['preSide', 'main', 'postEph', 'postSide'],
  wait_alloc: ['preSide', 'main', 'postSide'],
  poststop: ['poststop'],
};

/** The stage of a task with this lifecycle block; no block (or an unknown hook) means main. */
export function stageOf(lifecycle?: TaskLifecycle): Stage {
  switch (lifecycle?.hook) {
    case 'prestart':
      return lifecycle.sidecar ? 'preSide' : 'preEph';
    case 'poststart':
      return lifecycle.sidecar ? 'postSide' : 'postEph';
    case 'poststop':
      // A poststop "sidecar" has nothing to outlive, so Nomad does not distinguish it.
      return 'poststop';
    default:
      return 'main';
  }
}

/** The gates open in a state, e.g. for the alloc runner's initial gates before any task has reported. */
export function openStages(state: CoordinatorState): readonly Stage[] {
  return OPEN[state];
}

/** Whether a task with this lifecycle may run under the given open gates. */
export function isTaskAllowed(open: readonly Stage[], lifecycle?: TaskLifecycle): boolean {
  return open.includes(stageOf(lifecycle));
}

/**
 * Moves from `current` as far as the task states allow (Nomad loops until stable, which lets an alloc with no
 * prestart task pass straight through), and returns the resulting state and its open gates.
 */
export function coordinate(current: CoordinatorState, tasks: CoordinatedTask[]): { state: CoordinatorState; open: Stage[] } {
  let state = current;
  // Every step moves forward through six states, so the loop ends within six iterations.
  for (let next = nextState(state, tasks); next !== state; next = nextState(state, tasks)) state = next;
  return { state, open: [...OPEN[state]] };
}

/**
 * The state after a restore (Nomad's `Restore()`): start from prestart, since restored tasks are probably
 * no longer pending and init would wait for them forever, then evaluate.
 */
export function restoredCoordinatorState(tasks: CoordinatedTask[]): CoordinatorState {
  return coordinate('prestart', tasks).state;
}

/** One step of Nomad's `nextStateLocked`. */
function nextState(current: CoordinatorState, tasks: CoordinatedTask[]): CoordinatorState {
  // Poststop is reachable from anywhere: once the alloc's real work is over, only cleanup is left.
  if (allocDone(tasks)) return 'poststop';
  switch (current) {
    case 'init':
      return tasks.every((t) => t.state === 'pending') ? 'prestart' : 'init';
    case 'prestart':
      return prestartDone(tasks) ? 'main' : 'prestart';
    case 'main':
      return mainDone(tasks) ? 'poststart' : 'main';
    case 'poststart':
      return poststartDone(tasks) ? 'wait_alloc' : 'poststart';
    case 'wait_alloc':
    case 'poststop':
      // wait_alloc leaves only through allocDone above; poststop is terminal.
      return current;
  }
}

// The checks below run on every task runner's news: plain loops, nothing built.

/** Every ephemeral prestart task dead and not failed (so a failed init keeps main blocked), every sidecar running. */
function prestartDone(tasks: CoordinatedTask[]): boolean {
  for (const t of tasks) {
    const stage = stageOf(t.lifecycle);
    if (stage === 'preEph' && (t.state !== 'dead' || t.failed)) return false;
    if (stage === 'preSide' && t.state !== 'running') return false;
  }
  return true;
}

/** No main task still pending (running or dead both count as started). */
function mainDone(tasks: CoordinatedTask[]): boolean {
  for (const t of tasks) if (t.state === 'pending' && stageOf(t.lifecycle) === 'main') return false;
  return true;
}

/** Every ephemeral poststart task dead; poststart sidecars never hold the state. */
function poststartDone(tasks: CoordinatedTask[]): boolean {
  for (const t of tasks) if (t.state !== 'dead' && stageOf(t.lifecycle) === 'postEph') return false;
  return true;
}

/** Every non-poststop task dead. */
function allocDone(tasks: CoordinatedTask[]): boolean {
  for (const t of tasks) if (t.state !== 'dead' && stageOf(t.lifecycle) !== 'poststop') return false;
  return true;
}
