/**
 * The task-runner machine bound to real work, once per process: driver calls go to the runner's Controller
 * for the task, hook calls to the runner's TaskHook objects. Every implementation finds its runner's live
 * objects through the actor system (runner-registry.ts), so no per-runner `.provide()` builds a new
 * machine: every task of every allocation shares this one definition.
 */
import type { ActorSystem, AnyActorRef } from 'xstate';
import { fromCall, type CallArgs } from '../../machines/call-actor.ts';
import type { HookCallInput, HookCallOutput, HookPlan, TaskHookPhase } from '../../machines/hook-calls.ts';
import { taskRunnerMachine, type DriverCallInput, type DriverReapOutput, type DriverShutdownInput, type DriverStartOutput } from '../../machines/task-runner.ts';
import type { Controller, Driver, DriverContext, DriverHandle } from '../drivers/controller.ts';
import type { HookEnv, HookEvent, TaskHook, TaskPrestartResponse } from '../hooks/types.ts';
import { ignoresSignal, isSignalFree, NEVER_ABORTED, type SignalFreeCall } from '../hooks/signal-free.ts';
import type { ExitResult, TaskSpec } from '../jobspec/types.ts';
import { TaskEventType, taskEvent } from '../../machines/task-events.ts';
import { attributeTo, type ErrorSource } from './last-resort.ts';
import { beforeKill } from './kill-gate.ts';
import { jsonCopy } from './json-copy.ts';
import { runnerOf, type RunnerBindings } from './runner-registry.ts';
import { outlivingStop } from './stray-calls.ts';

type AnyActorSystem = ActorSystem<any>;

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

/**
 * Plans are data in every task's context; equal plans (the same hooks, as almost every task has) share
 * one frozen object instead of one copy per task.
 */
const plans = new Map<string, HookPlan>();
/**
 * The same plans by a key read straight off the hooks (each implementing hook's name and which phases it
 * implements, in order): every runner asks for its tasks' plans, and building a plan and its JSON key each time
 * cost more than the rest of the question. A key seen before answers at once; a new one builds the plan and
 * finds its shared object as before.
 */
const plansByHooks = new Map<string, HookPlan>();

/** Which of the hooks implement each phase, in registration order: the machine's hook plan. */
export function hookPlanOf(hooks: TaskHook[]): HookPlan {
  return sharedPlan(Object.keys(PHASE_METHOD) as TaskHookPhase[], hooks, (h, phase) => typeof h[PHASE_METHOD[phase]] === 'function');
}

/** The plan for `phases` given which of `hooks` implement each, as one shared frozen object per distinct plan. */
export function sharedPlan<P extends string, H extends { name: string }>(phases: P[], hooks: readonly H[], implementsPhase: (hook: H, phase: P) => boolean): Partial<Record<P, string[]>> {
  let key = phases.length + ':';
  for (const h of hooks) {
    let mask = 0;
    for (let i = 0; i < phases.length; i++) if (implementsPhase(h, phases[i]!)) mask |= 1 << i;
    // The name's length first: no two lists of names give one key.
    if (mask !== 0) key += `${h.name.length}:${h.name}:${mask};`;
  }
  const seen = plansByHooks.get(key) as Partial<Record<P, string[]>> | undefined;
  if (seen) return seen;
  const plan: Partial<Record<P, string[]>> = {};
  for (const phase of phases) {
    const names = hooks.filter((h) => implementsPhase(h, phase)).map((h) => h.name);
    if (names.length > 0) plan[phase] = names;
  }
  const json = JSON.stringify(plan);
  let shared = plans.get(json) as Partial<Record<P, string[]>> | undefined;
  if (!shared) {
    for (const names of Object.values(plan) as string[][]) Object.freeze(names);
    shared = Object.freeze(plan);
    plans.set(json, shared as HookPlan);
  }
  plansByHooks.set(key, shared as HookPlan);
  return shared;
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

/**
 * `obj` with an `env` built on its first read. Building a task env copies the host env and interpolates the
 * task's; most hooks and the mock driver never read it, so each call pays for it only if it does.
 */
function withLazyEnv<T extends object>(obj: T, build: () => HookEnv): T & { readonly env: HookEnv } {
  let env: HookEnv | undefined;
  return Object.defineProperty(obj, 'env', { enumerable: true, get: () => (env ??= build()) }) as T & { readonly env: HookEnv };
}

function driverContext(
  r: RunnerBindings,
  task: TaskSpec,
  hookEnv: Record<string, string>,
  start: Pick<DriverCallInput, 'attempt' | 'mounts' | 'devices'> = {},
): DriverContext {
  // The usual starts (no mounts or devices) as one literal with its getter: the same keys in the same order as
  // below, without the conditional spreads and the defineProperty, which cost a few microseconds a call.
  if (!start.mounts && !start.devices) {
    let env: HookEnv | undefined;
    const allocId = r.allocId;
    const taskDir = r.taskDirOf(task);
    if (start.attempt === undefined) {
      return { allocId, taskDir, allocDir: r.allocDir, logs: task.logs, clock: r.clock, get env() { return (env ??= r.envFor(task, hookEnv)); } };
    }
    return { attempt: start.attempt, allocId, taskDir, allocDir: r.allocDir, logs: task.logs, clock: r.clock, get env() { return (env ??= r.envFor(task, hookEnv)); } };
  }
  return withLazyEnv({
    ...(start.attempt !== undefined && { attempt: start.attempt }),
    allocId: r.allocId,
    taskDir: r.taskDirOf(task),
    allocDir: r.allocDir,
    logs: task.logs,
    clock: r.clock,
    // Prestart hooks' mounts and devices (Nomad's hookResources), for the driver to apply.
    ...(start.mounts && { mounts: start.mounts }),
    ...(start.devices && { devices: start.devices }),
  }, () => r.envFor(task, hookEnv));
}

function driverOf(r: RunnerBindings, task: TaskSpec): Driver {
  const driver = r.drivers[task.driver];
  if (!driver) {
    const known = Object.keys(r.drivers).sort().join(', ');
    throw new DriverStartError(`task ${JSON.stringify(task.name)}: driver ${JSON.stringify(task.driver)} is not available (known: ${known})`, false, 'Failed Validation');
  }
  return driver;
}

/** The task's live controller; after an agent restart the map is empty, so it reattaches through the handle. */
function controllerOf(r: RunnerBindings, input: DriverCallInput): Controller {
  const live = r.controllers.get(input.task.name);
  if (live) return live;
  const driver = driverOf(r, input.task);
  if (!input.handle || !driver.recover) {
    throw new Error(`task ${JSON.stringify(input.task.name)} has no live workload to reattach to`);
  }
  const recovered = driver.recover(input.handle as unknown as DriverHandle, input.task, driverContext(r, input.task, input.hookEnv));
  r.controllers.set(input.task.name, recovered);
  return recovered;
}

/**
 * Where an error of a driver or hook call of this task is recorded when it escapes the call (last-resort.ts):
 * on the task, through its runner, the call's parent actor.
 */
function errorSource(system: AnyActorSystem, self: AnyActorRef, task: TaskSpec, kind: ErrorSource['kind'], name: string, call: string): ErrorSource {
  const r = runnerOf(system);
  return {
    allocId: r.allocId,
    task: task.name,
    kind,
    name,
    call,
    now: () => r.clock.now(),
    record: (event) => self._parent?.send({ type: 'EMIT_EVENT', event }),
  };
}

/**
 * Removes and closes a controller that is done with. Neither may fail what the task does next (a start, or
 * reporting an exit), so a failure is recorded on the task as a Driver Failure instead, sync throws included.
 */
async function release(r: RunnerBindings, name: string, ctrl: Controller, self: AnyActorRef): Promise<void> {
  if (r.controllers.get(name) === ctrl) r.controllers.delete(name);
  // A signal of its own that nothing aborts, unless the controller's remove never reads it (signal-free.ts).
  const signal = ignoresSignal(ctrl, 'remove') ? NEVER_ABORTED : new AbortController().signal;
  const failed = (call: string) => (err: unknown) => {
    const message = `failed to release the task's driver resources (${call}): ${(err as Error)?.message ?? String(err)}`;
    self._parent?.send({ type: 'EMIT_EVENT', event: taskEvent(TaskEventType.DriverFailure, r.clock.now(), { message, details: { call } }) });
  };
  await settled(() => ctrl.remove(signal)).catch(failed('remove'));
  await settled(() => ctrl.close()).catch(failed('close'));
}

/** `call()`'s promise, or a rejected one if it throws before returning one (an implementation that is not async). */
function settled<T>(call: () => Promise<T>): Promise<T> {
  try {
    return call();
  } catch (err) {
    return Promise.reject(err);
  }
}

// The actors below return their body's promise as it is (no async wrapper): an extra hop would reorder
// them against the alloc's own calls, which a runner on a simulated clock relies on.

/** Calls one hook method of the runner's hook named in the input. */
const hook = fromCall<HookCallOutput, HookCallInput>((call) =>
  attributeTo(() => errorSource(call.system, call.self, call.input.task, 'hook', call.input.hook, call.input.phase), () => callHook(call)),
);

/**
 * The call's signal is read (and so made) only for a hook that may read it (signal-free.ts); a signal-free
 * call stopped part-way is kept among the runner's strays until it settles (stray-calls.ts).
 */
function callHook(call: CallArgs<HookCallInput>): Promise<HookCallOutput> {
  try {
    const r = runnerOf(call.system);
    const h = r.hooksFor(call.input.task).find((x) => x.name === call.input.hook);
    if (!h) throw new Error(`hook ${JSON.stringify(call.input.hook)} is not registered for task ${JSON.stringify(call.input.task.name)}`);
    if (!isSignalFree(h)) return runHook(call, r, h, call.signal);
    const work = runHook(call, r, h, NEVER_ABORTED);
    outlivingStop(r, call, work);
    return work;
  } catch (err) {
    return Promise.reject(err);
  }
}

async function runHook(call: CallArgs<HookCallInput>, r: RunnerBindings, h: TaskHook, signal: AbortSignal): Promise<HookCallOutput> {
  const { input, self } = call;
  const env = () => r.envFor(input.task, input.hookEnv, input.alloc);
  const task = input.task;
  switch (input.phase) {
    case 'prestart': {
      const res: TaskPrestartResponse = {};
      const resources = Object.freeze({ ...task.resources });
      // Straight to the task runner (EMIT_EVENT), not through the hook's output: a failing hook has none.
      const emitEvent = (ev: HookEvent): void => {
        if (!call.signal.aborted) self._parent?.send({ type: 'EMIT_EVENT', event: taskEvent(ev.type, r.clock.now(), { message: ev.message, details: ev.details }) });
      };
      // Running: a restored runner's restore hooks, beside the workload it reattached to (machines/task-runner.ts).
      const running = input.taskState?.state === 'running';
      await h.prestart!(withLazyEnv({ task, taskDir: r.taskDirOf(task), previousState: input.previousState, resources, emitEvent, running }, env), res, signal);
      const out: HookCallOutput = { env: res.env, state: res.state, done: res.done, events: res.events };
      // Copied as plain data: the response object belongs to the hook. (Set when there, not spread in: a
      // conditional spread costs microseconds, and every task's prestart hooks answer here.)
      if (res.mounts) out.mounts = res.mounts.map((m) => ({ ...m }));
      if (res.devices) out.devices = res.devices.map((d) => ({ ...d }));
      return out;
    }
    case 'poststart': {
      const ctrl = r.controllers.get(task.name);
      const stats = ctrl?.stats ? (ms: number) => ctrl.stats!(ms) : undefined;
      const driverNetwork = ctrl?.network?.();
      const driverExec = ctrl?.exec ? { exec: ctrl.exec.bind(ctrl) } : undefined;
      const adopted = r.adopted?.has(task.name) === true;
      // Optional fields set when there, in the order they had as spreads (which cost microseconds a call).
      const req: Record<string, unknown> = { task, stats };
      if (driverNetwork) req['driverNetwork'] = driverNetwork;
      if (driverExec) req['driverExec'] = driverExec;
      if (adopted) req['adopted'] = adopted;
      await h.poststart!(withLazyEnv(req as unknown as Parameters<NonNullable<TaskHook['poststart']>>[0], env), signal);
      return {};
    }
    case 'preKilling':
      await h.preKilling!({ task }, signal);
      return {};
    case 'exited':
      await h.exited!({ exitCode: input.exit?.exitCode, signal: input.exit?.signal, error: input.exit?.err, task }, signal);
      return {};
    case 'update':
      await h.update!(withLazyEnv({ alloc: input.alloc!, task }, env), signal);
      return {};
    case 'stop':
      await h.stop!({ existingState: input.previousState, task, taskState: input.taskState }, signal);
      return {};
    case 'shutdown':
      await h.shutdown!({ task }, signal);
      return {};
  }
}

/** Runs a driver call attributed to the task (last-resort.ts). */
function driverCall<T>(system: AnyActorSystem, self: AnyActorRef, task: TaskSpec, call: string, fn: () => Promise<T>): Promise<T> {
  return attributeTo(() => errorSource(system, self, task, 'driver', task.driver, call), fn);
}

/** Interpolates the task's config, builds its controller and prepares and starts it. */
const driverStart = fromCall<DriverStartOutput, DriverCallInput>((call) =>
  driverCall(call.system, call.self, call.input.task, 'start', () => startTask(call)),
);

/** The call's signal for `method` of `ctrl`: read (and so made) only if the controller may read it (signal-free.ts). */
function signalFor(call: CallArgs<unknown>, ctrl: Controller, method: SignalFreeCall): AbortSignal {
  return ignoresSignal(ctrl, method) ? NEVER_ABORTED : call.signal;
}

async function startTask(call: CallArgs<DriverCallInput>): Promise<DriverStartOutput> {
  const { input, system, self } = call;
  const r = runnerOf(system);
  r.exited?.delete(input.task.name);
  const previous = r.controllers.get(input.task.name);
  if (previous) await release(r, input.task.name, previous, self);
  let task = input.task;
  try {
    task = r.interpolate?.(input.task, input.hookEnv) ?? input.task;
  } catch (err) {
    // Nomad: a driver config that cannot be interpolated fails validation and is never retried.
    throw new DriverStartError(`task ${JSON.stringify(input.task.name)}: ${(err as Error).message}`, false, 'Failed Validation');
  }
  const driver = driverOf(r, task);
  const ctx = driverContext(r, task, input.hookEnv, input);
  const name = input.task.name;
  r.adopted?.delete(name);
  // A restored runner's first start of the task may be one the dead agent made and never saved: its workload,
  // if the driver finds one, is this start's (as the driver's own start would find it), and is marked as such
  // for the poststart hooks. Only a start that completes uses up the restore's question.
  const resumed = r.resumedStarts?.has(name) === true && driver.findStarted !== undefined;
  let ctrl: Controller | undefined;
  try {
    const found = resumed ? await driver.findStarted!(task, ctx, call.signal) : undefined;
    ctrl = found ?? driver.controller(task, ctx);
    r.controllers.set(name, ctrl);
    await ctrl.prepare(signalFor(call, ctrl, 'prepare'));
    await ctrl.start(signalFor(call, ctrl, 'start'));
    if (resumed) r.resumedStarts!.delete(name);
    if (found) (r.adopted ??= new Set()).add(name);
  } catch (err) {
    if (ctrl) await release(r, name, ctrl, self);
    const e = err as { message?: string; recoverable?: boolean; eventType?: string } | undefined;
    throw new DriverStartError(e?.message ?? String(err), e?.recoverable ?? false, e?.eventType);
  }
  const handle = ctrl.handle?.();
  // Copied as JSON would (the handle is persisted as plain data), without the text in between (json-copy.ts).
  return { handle: handle ? (jsonCopy(handle) as unknown as Record<string, unknown>) : undefined };
}

/** Waits for the workload's exit, then releases its controller. */
const driverWait = fromCall<ExitResult, DriverCallInput>(({ input, signal, system, self }) =>
  driverCall(system, self, input.task, 'wait', async () => {
    const r = runnerOf(system);
    const ctrl = controllerOf(r, input);
    const result = await ctrl.wait(signal);
    (r.exited ??= new Set()).add(input.task.name);
    await release(r, input.task.name, ctrl, self);
    return result;
  }),
);

const driverShutdown = fromCall<void, DriverShutdownInput>(({ input, signal, system, self }) =>
  driverCall(system, self, input.task, 'shutdown', async () => {
    const r = runnerOf(system);
    // Exited a moment ago, its controller released: there is nothing to stop (Nomad's kill of a dead task).
    if (r.exited?.has(input.task.name)) return;
    // What caused this kill (a task's death, the Killing event) is saved before any process hears of it (kill-gate.ts).
    const gate = beforeKill(system);
    if (gate) await gate;
    if (signal.aborted || r.exited?.has(input.task.name)) return;
    const ctrl = r.controllers.get(input.task.name) ?? controllerOf(r, input);
    await ctrl.shutdown({ signal: input.signal, timeout: input.timeout, ...(input.reason && { reason: input.reason }) }, signal);
  }),
);

const driverTerminate = fromCall<void, DriverCallInput>(({ input, signal, system, self }) =>
  driverCall(system, self, input.task, 'terminate', async () => {
    const r = runnerOf(system);
    const ctrl = r.controllers.get(input.task.name);
    if (ctrl) await ctrl.terminate(signal);
  }),
);

const driverSignal = fromCall<void, DriverCallInput & { signal: string }>(({ input, signal, system, self }) =>
  driverCall(system, self, input.task, 'signal', async () => {
    const r = runnerOf(system);
    const ctrl = controllerOf(r, input);
    if (!ctrl.signal) throw new Error(`driver ${JSON.stringify(input.task.driver)} cannot send signals`);
    await ctrl.signal(input.signal, signal);
  }),
);

/**
 * Stops the workload of a start the restored snapshot does not know of (input.attempt), if the driver
 * records starts and that one spawned something: shutdown with the kill signal and timeout (the driver
 * escalates), then its exit. The task is dead only after this, so its poststop tasks never run beside it.
 */
const driverReap = fromCall<DriverReapOutput, DriverShutdownInput>(({ input, signal, system, self }) =>
  driverCall(system, self, input.task, 'reap', async () => {
    const r = runnerOf(system);
    const driver = r.drivers[input.task.driver];
    if (!driver?.findStarted) return {};
    const ctrl = await driver.findStarted(input.task, driverContext(r, input.task, input.hookEnv, input), signal);
    if (!ctrl) return {};
    try {
      await ctrl.shutdown({ signal: input.signal, timeout: input.timeout }, signal);
      return { exit: await ctrl.wait(signal) };
    } finally {
      await release(r, input.task.name, ctrl, self);
    }
  }),
);

/**
 * The task-runner machine with its driver and hook actors: provided once, shared by every runner of the
 * process (standalone tasks and every alloc's tasks). Its actors need their runner registered.
 */
export const providedTaskRunnerMachine: typeof taskRunnerMachine = taskRunnerMachine.provide({
  actors: { hook, driverStart, driverWait, driverShutdown, driverTerminate, driverSignal, driverReap },
});
