/** Binds the alloc-runner machine's hook actor to AllocRunnerHook objects, and its task children to drivers. */
import { fromPromise } from 'xstate';
import { allocRunnerMachine, type AllocHookCallInput, type AllocHookPhase, type AllocHookPlan } from '../../machines/alloc-runner.ts';
import type { AllocRunnerHook, HookEnv } from '../hooks/types.ts';
import type { AllocSpec } from '../jobspec/types.ts';
import { bindTaskRunner, type TaskBindingsOptions } from './task-bindings.ts';

const PHASES: AllocHookPhase[] = ['prerun', 'preKill', 'postrun', 'destroy', 'update', 'preTaskRestart', 'shutdown'];

/** Which alloc hooks implement each phase, in registration order. */
export function allocHookPlanOf(hooks: AllocRunnerHook[]): AllocHookPlan {
  const plan: AllocHookPlan = {};
  for (const phase of PHASES) {
    const names = hooks.filter((h) => typeof h[phase] === 'function').map((h) => h.name);
    if (names.length > 0) plan[phase] = names;
  }
  return plan;
}

/** The alloc-runner machine with alloc hooks and task runners bound. */
export function bindAllocRunner(opts: TaskBindingsOptions & { allocHooks: AllocRunnerHook[]; allocEnv: (alloc: AllocSpec) => HookEnv }) {
  const tasks = bindTaskRunner(opts);
  const allocHook = fromPromise<void, AllocHookCallInput>(async ({ input, signal }) => {
    const h = opts.allocHooks.find((x) => x.name === input.hook);
    if (!h) throw new Error(`alloc hook ${JSON.stringify(input.hook)} is not registered`);
    switch (input.phase) {
      case 'prerun':
        return h.prerun!(opts.allocEnv(input.alloc), signal);
      case 'update':
        return h.update!({ alloc: input.alloc, allocEnv: opts.allocEnv(input.alloc) }, signal);
      default:
        return (h[input.phase] as (abort: AbortSignal) => Promise<void>)(signal);
    }
  });
  return {
    machine: allocRunnerMachine.provide({ actors: { allocHook, taskRunner: tasks.machine } }),
    controllers: tasks.controllers,
  };
}
