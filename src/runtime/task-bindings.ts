/**
 * Binds the pure task-runner machine to real work: the driver calls go to a Controller per task, the hook
 * calls to the TaskHook objects registered for the task. One binding serves every task of an allocation.
 */
import { fromPromise } from 'xstate';
import type { HookCallInput, HookCallOutput, HookPlan, TaskHookPhase } from '../../machines/hook-calls.ts';
import { taskRunnerMachine, type DriverCallInput, type DriverShutdownInput, type DriverStartOutput } from '../../machines/task-runner.ts';
import type { Clock } from '../drivers/clock.ts';
import type { Controller, Driver, DriverContext, DriverHandle } from '../drivers/controller.ts';
import type { HookEnv, TaskHook, TaskPrestartResponse } from '../hooks/types.ts';
import type { AllocSpec, ExitResult, TaskSpec } from '../jobspec/types.ts';

/** Everything the bindings need to run one allocation's tasks. */
export interface TaskBindingsOptions {
  allocId: string;
  drivers: Record<string, Driver>;
  hooksFor: (task: TaskSpec) => TaskHook[];
  clock: Clock;
  allocDir: string;
  taskDirOf: (task: TaskSpec) => string;
  /** Builds the task's environment for one call: a fresh frozen value every time. */
  envFor: (task: TaskSpec, hookEnv: Record<string, string>, alloc?: AllocSpec) => HookEnv;
  /** The task as its driver sees it: `${...}` in its config interpolated. Default: unchanged. */
  interpolate?: (task: TaskSpec, hookEnv: Record<string, string>, alloc?: AllocSpec) => TaskSpec;
}

/** A start that failed; carries what the restart decision needs. */
export class DriverStartError extends Error {
  readonly code = 'ErrDriverStart';
  constructor(message: string, readonly recoverable: boolean, readonly eventType?: string) {
    super(message);
    this.name = 'DriverStartError';
  }
}

const PHASE_METHOD: Record<TaskHookPhase, keyof TaskHook> = {
  prestart: 'prestart',
  poststart: 'poststart',
  preKilling: 'preKilling',
  exited: 'exited',
  update: 'update',
  stop: 'stop',
  shutdown: 'shutdown',
};

/** Which of the hooks implement each phase, in registration order: the machine's hook plan. */
export function hookPlanOf(hooks: TaskHook[]): HookPlan {
  const plan: HookPlan = {};
  for (const phase of Object.keys(PHASE_METHOD) as TaskHookPhase[]) {
    const names = hooks.filter((h) => typeof h[PHASE_METHOD[phase]] === 'function').map((h) => h.name);
    if (names.length > 0) plan[phase] = names;
  }
  return plan;
}

/** Checks hook names are unique: they are actor ids and keys of persisted hook state. */
export function checkHookNames(hooks: { name: string }[], where: string): void {
  const seen = new Set<string>();
  for (const h of hooks) {
    if (!h.name || typeof h.name !== 'string') throw new TypeError(`${where}: every hook needs a non-empty string name`);
    if (seen.has(h.name)) throw new TypeError(`${where}: two hooks are named ${JSON.stringify(h.name)}; hook names must be unique`);
    seen.add(h.name);
  }
}

/** The task-runner machine with its driver and hook actors bound to `opts`. */
export function bindTaskRunner(opts: TaskBindingsOptions) {
  const controllers = new Map<string, Controller>();

  const driverContext = (task: TaskSpec, hookEnv: Record<string, string>): DriverContext => ({
    allocId: opts.allocId,
    env: opts.envFor(task, hookEnv),
    taskDir: opts.taskDirOf(task),
    allocDir: opts.allocDir,
    logs: task.logs,
    clock: opts.clock,
  });

  const driverOf = (task: TaskSpec): Driver => {
    const driver = opts.drivers[task.driver];
    if (!driver) {
      const known = Object.keys(opts.drivers).sort().join(', ');
      throw new DriverStartError(`task ${JSON.stringify(task.name)}: driver ${JSON.stringify(task.driver)} is not available (known: ${known})`, false, 'Failed Validation');
    }
    return driver;
  };

  // After an agent restart the controller map is empty: reattach through the persisted handle.
  const controllerOf = (input: DriverCallInput): Controller => {
    const live = controllers.get(input.task.name);
    if (live) return live;
    const driver = driverOf(input.task);
    if (!input.handle || !driver.recover) {
      throw new Error(`task ${JSON.stringify(input.task.name)} has no live workload to reattach to`);
    }
    const recovered = driver.recover(input.handle as unknown as DriverHandle, input.task, driverContext(input.task, input.hookEnv));
    controllers.set(input.task.name, recovered);
    return recovered;
  };

  const release = async (name: string, ctrl: Controller) => {
    if (controllers.get(name) === ctrl) controllers.delete(name);
    const abort = new AbortController();
    await ctrl.remove(abort.signal).catch(() => undefined);
    await ctrl.close().catch(() => undefined);
  };

  const hook = fromPromise<HookCallOutput, HookCallInput>(async ({ input, signal }) => {
    const h = opts.hooksFor(input.task).find((x) => x.name === input.hook);
    if (!h) throw new Error(`hook ${JSON.stringify(input.hook)} is not registered for task ${JSON.stringify(input.task.name)}`);
    const env = () => opts.envFor(input.task, input.hookEnv, input.alloc);
    const task = input.task;
    switch (input.phase) {
      case 'prestart': {
        const res: TaskPrestartResponse = {};
        const resources = Object.freeze({ ...task.resources });
        await h.prestart!({ task, taskDir: opts.taskDirOf(task), env: env(), previousState: input.previousState, resources }, res, signal);
        return { env: res.env, state: res.state, done: res.done, events: res.events };
      }
      case 'poststart': {
        const ctrl = controllers.get(task.name);
        const stats = ctrl?.stats ? (ms: number) => ctrl.stats!(ms) : undefined;
        const driverNetwork = ctrl?.network?.();
        const driverExec = ctrl?.exec ? { exec: ctrl.exec.bind(ctrl) } : undefined;
        await h.poststart!({ env: env(), task, stats, ...(driverNetwork && { driverNetwork }), ...(driverExec && { driverExec }) }, signal);
        return {};
      }
      case 'preKilling':
        await h.preKilling!({ task }, signal);
        return {};
      case 'exited':
        await h.exited!({ exitCode: input.exit?.exitCode, signal: input.exit?.signal, error: input.exit?.err, task }, signal);
        return {};
      case 'update':
        await h.update!({ alloc: input.alloc!, env: env(), task }, signal);
        return {};
      case 'stop':
        await h.stop!({ existingState: input.previousState, task, taskState: input.taskState }, signal);
        return {};
      case 'shutdown':
        await h.shutdown!({ task }, signal);
        return {};
    }
  });

  const driverStart = fromPromise<DriverStartOutput, DriverCallInput>(async ({ input, signal }) => {
    const previous = controllers.get(input.task.name);
    if (previous) await release(input.task.name, previous);
    let task = input.task;
    try {
      task = opts.interpolate?.(input.task, input.hookEnv) ?? input.task;
    } catch (err) {
      // Nomad: a driver config that cannot be interpolated fails validation and is never retried.
      throw new DriverStartError(`task ${JSON.stringify(input.task.name)}: ${(err as Error).message}`, false, 'Failed Validation');
    }
    const ctrl = driverOf(task).controller(task, driverContext(task, input.hookEnv));
    controllers.set(input.task.name, ctrl);
    try {
      await ctrl.prepare(signal);
      await ctrl.start(signal);
    } catch (err) {
      await release(input.task.name, ctrl);
      const e = err as { message?: string; recoverable?: boolean; eventType?: string };
      throw new DriverStartError(e.message ?? String(err), e.recoverable ?? false, e.eventType);
    }
    const handle = ctrl.handle?.();
    return { handle: handle ? (JSON.parse(JSON.stringify(handle)) as Record<string, unknown>) : undefined };
  });

  const driverWait = fromPromise<ExitResult, DriverCallInput>(async ({ input, signal }) => {
    const ctrl = controllerOf(input);
    const result = await ctrl.wait(signal);
    await release(input.task.name, ctrl);
    return result;
  });

  const driverShutdown = fromPromise<void, DriverShutdownInput>(async ({ input, signal }) => {
    const ctrl = controllers.get(input.task.name) ?? controllerOf(input);
    await ctrl.shutdown({ signal: input.signal, timeout: input.timeout }, signal);
  });

  const driverTerminate = fromPromise<void, DriverCallInput>(async ({ input, signal }) => {
    const ctrl = controllers.get(input.task.name);
    if (ctrl) await ctrl.terminate(signal);
  });

  const driverSignal = fromPromise<void, DriverCallInput & { signal: string }>(async ({ input, signal }) => {
    const ctrl = controllerOf(input);
    if (!ctrl.signal) throw new Error(`driver ${JSON.stringify(input.task.driver)} cannot send signals`);
    await ctrl.signal(input.signal, signal);
  });

  return {
    machine: taskRunnerMachine.provide({
      actors: { hook, driverStart, driverWait, driverShutdown, driverTerminate, driverSignal },
    }),
    controllers,
  };
}
