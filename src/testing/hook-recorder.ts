/**
 * Hooks that record every call into a shared log, so a test can assert which hooks ran, in what order,
 * with what input. Behaviour per method can be overridden.
 */
import type { AllocRunnerHook, TaskHook } from '../hooks/types.ts';

export interface HookCall {
  hook: string;
  method: string;
  /** The request the method received (without the AbortSignal). */
  req?: unknown;
  /** Set when the method's AbortSignal fired while it ran. */
  aborted?: boolean;
}

type Impl<T> = { [K in keyof T]?: T[K] };

/** A task hook implementing `methods` (default: all), recording calls in `log` and delegating to `impl`. */
export function recordingTaskHook(
  name: string,
  log: HookCall[],
  impl: Impl<Omit<TaskHook, 'name'>> = {},
  methods: (keyof Omit<TaskHook, 'name'>)[] = ['prestart', 'poststart', 'preKilling', 'exited', 'update', 'stop', 'shutdown'],
): TaskHook {
  const hook: Record<string, unknown> = { name };
  for (const m of new Set([...methods, ...(Object.keys(impl) as (keyof Omit<TaskHook, 'name'>)[])])) {
    hook[m] = async (...args: unknown[]) => {
      const abort = args[args.length - 1] as AbortSignal;
      const call: HookCall = { hook: name, method: m, req: args[0] };
      log.push(call);
      abort.addEventListener('abort', () => (call.aborted = true), { once: true });
      const f = impl[m] as ((...a: unknown[]) => Promise<void>) | undefined;
      if (f) await f(...args);
    };
  }
  return hook as unknown as TaskHook;
}

/** An alloc runner hook implementing `methods` (default: all), recording calls in `log`. */
export function recordingAllocHook(
  name: string,
  log: HookCall[],
  impl: Impl<Omit<AllocRunnerHook, 'name'>> = {},
  methods: (keyof Omit<AllocRunnerHook, 'name'>)[] = ['prerun', 'preKill', 'postrun', 'destroy', 'update', 'preTaskRestart', 'shutdown'],
): AllocRunnerHook {
  const hook: Record<string, unknown> = { name };
  for (const m of new Set([...methods, ...(Object.keys(impl) as (keyof Omit<AllocRunnerHook, 'name'>)[])])) {
    hook[m] = async (...args: unknown[]) => {
      const abort = args[args.length - 1] as AbortSignal;
      const call: HookCall = { hook: name, method: m, req: args.length > 1 ? args[0] : undefined };
      log.push(call);
      abort.addEventListener('abort', () => (call.aborted = true), { once: true });
      const f = impl[m] as ((...a: unknown[]) => Promise<void>) | undefined;
      if (f) await f(...args);
    };
  }
  return hook as unknown as AllocRunnerHook;
}

/** A promise that resolves when `abort` fires: the body of a hook that blocks until killed. */
export function untilAborted(abort: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (abort.aborted) return resolve();
    abort.addEventListener('abort', () => resolve(), { once: true });
  });
}
