/**
 * The alloc-runner machine bound to real work, once per process: its hook actor calls the runner's
 * AllocRunnerHook objects (found through the actor system, runner-registry.ts) and its task children are
 * the shared provided task runner.
 */
import type { AnyActorRef } from 'xstate';
import { fromCall } from '../../machines/call-actor.ts';
import { allocRunnerMachine, type AllocHookCallInput, type AllocHookPhase, type AllocHookPlan } from '../../machines/alloc-runner.ts';
import type { AllocRunnerHook, HookEnv } from '../hooks/types.ts';
import type { AllocSpec, TaskEvent } from '../jobspec/types.ts';
import type { TaskRunnerEvent } from '../../machines/task-runner.ts';
import { isSignalFree, NEVER_ABORTED } from '../hooks/signal-free.ts';
import { attributeTo } from './last-resort.ts';
import { runnerOf } from './runner-registry.ts';
import { outlivingStop, straysSettled } from './stray-calls.ts';
import { providedTaskRunnerMachine, sharedPlan } from './task-bindings.ts';

const PHASES: AllocHookPhase[] = ['prerun', 'preKill', 'postrun', 'destroy', 'update', 'preTaskRestart', 'shutdown'];

/** Which alloc hooks implement each phase, in registration order (one shared object per distinct plan). */
export function allocHookPlanOf(hooks: AllocRunnerHook[]): AllocHookPlan {
  return sharedPlan(PHASES, hooks, (h, phase) => typeof h[phase] === 'function');
}

/** Calls one alloc hook method of the runner's hook named in the input. */
const allocHook = fromCall<void, AllocHookCallInput>(async (call) => {
  const { input, self } = call;
  const r = runnerOf(call.system);
  const h = r.allocHooks?.find((x) => x.name === input.hook);
  if (!h) throw new Error(`alloc hook ${JSON.stringify(input.hook)} is not registered`);
  // The call's signal is read (and so made) only for a hook that may read it (signal-free.ts).
  const signal = isSignalFree(h) ? NEVER_ABORTED : call.signal;
  const allocEnv = () => r.allocEnv?.(input.alloc) ?? {};
  // An error that escapes the call (last-resort.ts) is the allocation's: every task records it, as Nomad
  // marks every task when the alloc's setup fails.
  const source = () => ({
    allocId: r.allocId,
    kind: 'hook' as const,
    name: input.hook,
    call: input.phase,
    now: () => r.clock.now(),
    record: (event: TaskEvent) => recordOnEveryTask(self._parent, event),
  });
  // Destroy removes what the tasks' hooks made: not while a stray call of theirs is still making it.
  const strays = input.phase === 'destroy' ? straysSettled(r) : undefined;
  if (strays) await strays;
  const work = attributeTo(source, () => {
    switch (input.phase) {
      case 'prerun':
        return h.prerun!(lazyEnv(allocEnv), signal);
      case 'update':
        return h.update!({ alloc: input.alloc, allocEnv: allocEnv() }, signal);
      default:
        return (h[input.phase] as (abort: AbortSignal) => Promise<void>)(signal);
    }
  });
  if (signal === NEVER_ABORTED) outlivingStop(r, call, work);
  return work;
});

/**
 * The alloc's env as prerun hooks get it, built on the first read: every allocation runs its prerun hooks, and
 * most (alloc_dir, checks) never read the env, which costs a walk of the host env and the allocation's ports to
 * build. Reads as the plain read-only record it stands for (keys, spread, JSON, `in`); writes are refused.
 */
export function lazyEnv(build: () => HookEnv): HookEnv {
  let env: HookEnv | undefined;
  const real = (): HookEnv => (env ??= build());
  return new Proxy({} as HookEnv, {
    get: (_, key) => Reflect.get(real(), key),
    has: (_, key) => Reflect.has(real(), key),
    ownKeys: () => Reflect.ownKeys(real()),
    // Reported configurable: the proxy's own target is an empty extensible object, which a non-configurable
    // property it does not have may not be reported for.
    getOwnPropertyDescriptor: (_, key) => {
      const d = Reflect.getOwnPropertyDescriptor(real(), key);
      return d && { value: d.value, writable: false, enumerable: d.enumerable, configurable: true };
    },
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
  });
}

/** Appends `event` to every task of the allocation `alloc` (the alloc actor; its children are the task runners). */
function recordOnEveryTask(alloc: AnyActorRef | undefined, event: TaskEvent): void {
  const snap = alloc?.getSnapshot() as { children?: Record<string, AnyActorRef | undefined>; context?: { alloc?: AllocSpec } } | undefined;
  for (const task of snap?.context?.alloc?.tasks ?? []) snap?.children?.[task.name]?.send({ type: 'EMIT_EVENT', event } satisfies TaskRunnerEvent);
}

/** The alloc-runner machine with alloc hooks and task runners bound: provided once, shared by every allocation. */
export const providedAllocRunnerMachine: typeof allocRunnerMachine = allocRunnerMachine.provide({ actors: { allocHook, taskRunner: providedTaskRunnerMachine } });
