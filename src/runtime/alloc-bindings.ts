/**
 * The alloc-runner machine bound to real work, once per process: its hook actor calls the runner's
 * AllocRunnerHook objects (found through the actor system, runner-registry.ts) and its task children are
 * the shared provided task runner.
 */
import { fromPromise } from 'xstate';
import { allocRunnerMachine, type AllocHookCallInput, type AllocHookPhase, type AllocHookPlan } from '../../machines/alloc-runner.ts';
import type { AllocRunnerHook } from '../hooks/types.ts';
import { runnerOf } from './runner-registry.ts';
import { providedTaskRunnerMachine, sharedPlan } from './task-bindings.ts';

const PHASES: AllocHookPhase[] = ['prerun', 'preKill', 'postrun', 'destroy', 'update', 'preTaskRestart', 'shutdown'];

/** Which alloc hooks implement each phase, in registration order (one shared object per distinct plan). */
export function allocHookPlanOf(hooks: AllocRunnerHook[]): AllocHookPlan {
  return sharedPlan(PHASES, (phase) => hooks.filter((h) => typeof h[phase] === 'function'));
}

/** Calls one alloc hook method of the runner's hook named in the input. */
const allocHook = fromPromise<void, AllocHookCallInput>(async ({ input, signal, system }) => {
  const r = runnerOf(system);
  const h = r.allocHooks?.find((x) => x.name === input.hook);
  if (!h) throw new Error(`alloc hook ${JSON.stringify(input.hook)} is not registered`);
  const allocEnv = () => r.allocEnv?.(input.alloc) ?? {};
  switch (input.phase) {
    case 'prerun':
      return h.prerun!(allocEnv(), signal);
    case 'update':
      return h.update!({ alloc: input.alloc, allocEnv: allocEnv() }, signal);
    default:
      return (h[input.phase] as (abort: AbortSignal) => Promise<void>)(signal);
  }
});

/** The alloc-runner machine with alloc hooks and task runners bound: provided once, shared by every allocation. */
export const providedAllocRunnerMachine: typeof allocRunnerMachine = allocRunnerMachine.provide({ actors: { allocHook, taskRunner: providedTaskRunnerMachine } });
