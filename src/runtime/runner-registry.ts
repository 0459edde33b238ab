/**
 * Where the provided machines find a runner's live objects. The task-runner and alloc-runner machines are
 * provided once per process (task-bindings.ts, alloc-bindings.ts) and take only plain data as input; what
 * is live — drivers, hook objects, controllers, the env builder — belongs to one runner and is registered
 * under the actor system that every actor of that runner shares (its root's: task runners, hook calls and
 * driver calls alike). A system is created by `createActor`, so a restored runner gets a fresh entry, and
 * the entry goes when the runner's actors are garbage.
 */
import type { ActorSystem } from 'xstate';
import type { Clock } from '../drivers/clock.ts';
import type { Controller, Driver } from '../drivers/controller.ts';
import type { AllocRunnerHook, HookEnv, TaskHook } from '../hooks/types.ts';
import type { AllocSpec, TaskSpec } from '../jobspec/types.ts';

/** Everything one runner's actors need that is not data: how its tasks run and whom its hooks call. */
export interface RunnerBindings {
  allocId: string;
  drivers: Record<string, Driver>;
  /** The task's hooks, built-in ones first. */
  hooksFor: (task: TaskSpec) => TaskHook[];
  clock: Clock;
  allocDir: string;
  taskDirOf: (task: TaskSpec) => string;
  /** Builds the task's environment for one call: a fresh frozen value every time. */
  envFor: (task: TaskSpec, hookEnv: Record<string, string>, alloc?: AllocSpec) => HookEnv;
  /** The task as its driver sees it: `${...}` in its config interpolated. Default: unchanged. */
  interpolate?: (task: TaskSpec, hookEnv: Record<string, string>, alloc?: AllocSpec) => TaskSpec;
  /** The alloc's hooks (alloc runners only). */
  allocHooks?: AllocRunnerHook[];
  /** The alloc-level environment for alloc hooks (alloc runners only). */
  allocEnv?: (alloc: AllocSpec) => HookEnv;
  /** The live controller of each task, by task name; empty after a restore until a task reattaches. */
  controllers: Map<string, Controller>;
  /**
   * Tasks whose workload has exited (their wait answered) until they start again: their controller is
   * released, so a stop arriving before the machine hears of the exit has nothing left to stop.
   * Made on first use.
   */
  exited?: Set<string>;
  /**
   * A restored runner's tasks that have not started in this process: the first start may be one the dead
   * agent made and never saved, so it asks the driver for that start's workload before spawning.
   */
  resumedStarts?: Set<string>;
  /** Tasks whose workload is one such a start found (an earlier agent spawned it), until they start again. */
  adopted?: Set<string>;
  /**
   * Signal-free hook calls stopped before they settled, still at work (stray-calls.ts): the runner's `done`
   * and its destroy hooks wait for them. Made on first use.
   */
  strays?: Set<Promise<unknown>>;
}

type AnySystem = ActorSystem<any>;

const bySystem = new WeakMap<AnySystem, RunnerBindings>();

/** Registers a runner's bindings under its root actor's system; call it after `createActor`, before `start`. */
export function registerRunner(system: AnySystem, bindings: RunnerBindings): void {
  bySystem.set(system, bindings);
}

/** The bindings of the runner an actor belongs to; a clear error for an actor not made by the runtime. */
export function runnerOf(system: AnySystem): RunnerBindings {
  const bindings = bySystem.get(system);
  if (!bindings) {
    throw new Error('this actor has no runtime bindings: create runners with createAllocRunner() or createTaskRunner(), which register them');
  }
  return bindings;
}
