/**
 * The task runner: Nomad's task lifecycle (task_runner.go Run loop) as a statechart.
 *
 *   pending (gate → prestart → starting | restartDelay) → running (poststart ∥ updates, waiting on the
 *   workload) → exited (exited hooks → restart decision) → terminal (parked → stopping → stopped)
 *   KILL from anywhere → killing (preKill hooks → shutdown delay → kill signal → kill timeout → force
 *   kill) → exited; SHUTDOWN from anywhere → detaching (shutdown hooks) → detached, the workload untouched.
 *
 * Every hook call is a child actor named `<phase>:<hook>`; every driver call an invoked actor named
 * `driver:<call>`. The runtime supplies their implementations with `.provide()`; this file says only
 * what happens when.
 */
import { assign, enqueueActions, raise, setup, type ActorRefFrom } from 'xstate';
import { notProvided } from './not-provided.ts';
import { clockNow, sleepUntil } from './clock.ts';
import { TaskEventType, appendEvent, newTaskState, setStatus, taskEvent } from './task-events.ts';
import {
  decideRestart,
  defaultRestartPolicy,
  mulberry32,
  newRestartTracker,
  type RestartDecisionKind,
  type RestartTrackerState,
  type RestartTrigger,
} from './restart-tracker.ts';
import { childErrorOf, hookActorId, type HookCallInput, type HookCallOutput, type HookErrorInfo, type HookPlan, type TaskHookPhase } from './hook-calls.ts';
import type { AllocSpec, ExitResult, JobType, RestartPolicy, TaskEvent, TaskSpec, TaskState } from './types.ts';

/** Nomad's default kill_timeout and the client's max_kill_timeout, in ms. */
export const DEFAULT_KILL_TIMEOUT = 5_000;
export const DEFAULT_MAX_KILL_TIMEOUT = 30_000;
/** Nomad's default kill_signal. */
export const DEFAULT_KILL_SIGNAL = 'SIGINT';

/** A driver's reattach handle, as JSON. */
export type DriverHandleData = Record<string, unknown>;

/** Per-hook prestart memory (Nomad's LocalState.Hooks): Done hooks are skipped but their env is re-applied. */
export interface PrestartHookState {
  done: boolean;
  data?: unknown;
  env?: Record<string, string>;
}

/** A command that did not apply, answered instead of dropped (Nomad returns ErrTaskNotRunning and the like). */
export interface CommandRejection {
  command: string;
  code: 'ErrTaskNotRunning' | 'ErrTaskKilling' | 'ErrTaskRunComplete' | 'ErrSignalFailed';
  message: string;
  time: number;
}

export interface TaskRunnerInput {
  allocId: string;
  task: TaskSpec;
  jobType: JobType;
  /** The group's restart policy; the task's own overrides it. */
  groupRestart?: RestartPolicy;
  hooks?: HookPlan;
  /** Whether the coordinator's gate is open at start (standalone tasks: true). */
  gateOpen?: boolean;
  /** The client's max_kill_timeout cap. */
  maxKillTimeout?: number;
  /** Seed of the restart jitter's random source, so runs are reproducible. */
  seed?: number;
  /** Restored TaskState (from a persisted alloc); a new pending one with Received otherwise. */
  taskState?: TaskState;
  /**
   * Whether a dead task waits for its alloc to force-restart or kill it (Nomad's ALLOC_RESTART). True under
   * an alloc runner; a standalone task has no alloc, so it goes straight to its stop hooks.
   */
  parkWhenDead?: boolean;
}

export interface TaskRunnerContext {
  allocId: string;
  task: TaskSpec;
  jobType: JobType;
  restartPolicy: RestartPolicy;
  hooks: HookPlan;
  maxKillTimeout: number;
  parkWhenDead: boolean;
  taskState: TaskState;
  tracker: RestartTrackerState;
  seed: number;
  gateOpen: boolean;
  /** Nomad's killCtx: once cancelled the task never runs again. */
  killRequested: boolean;
  /** Why the workload is being stopped: a kill, or a restart (no shutdown delay, no Killing event). */
  stopReason?: 'kill' | 'restart';
  /** Restart-tracker flags gathered since the last decision. */
  restartRequest?: { failure: boolean };
  startError?: { recoverable: boolean; message: string };
  lastExit?: ExitResult;
  decision?: { kind: RestartDecisionKind; delay: number; reason: string };
  hookStates: Record<string, PrestartHookState>;
  /** Env merged from prestart responses (last writer wins). Interpolated values, never an env builder. */
  hookEnv: Record<string, string>;
  /** Which hook each phase is at. */
  cursor: Partial<Record<TaskHookPhase, number>>;
  /** The absolute clock time the current durable delay ends. */
  deadline?: number;
  handle?: DriverHandleData;
  setupDone: boolean;
  runComplete: boolean;
  updateQueued: boolean;
  alloc?: AllocSpec;
  /** The alloc the current round of update hooks sees: one request per round, as in Nomad. */
  updating?: AllocSpec;
  signalSeq: number;
  rejections: CommandRejection[];
}

export type TaskRunnerEvent =
  | { type: 'KILL'; event?: TaskEvent }
  | { type: 'RESTART'; failure?: boolean; force?: boolean; event?: TaskEvent }
  | { type: 'UPDATE'; alloc: AllocSpec }
  | { type: 'SIGNAL'; signal: string }
  | { type: 'SHUTDOWN' }
  /** From the alloc runner: the coordinator's gate for this task (level-triggered). */
  | { type: 'GATE'; open: boolean }
  /** From the alloc runner: append an event (Nomad's EmitEvent), e.g. Sibling Task Failed. */
  | { type: 'EMIT_EVENT'; event: TaskEvent }
  /** From the alloc runner: setup failed; the task fails and never runs (Nomad's MarkFailedKill). */
  | { type: 'FAIL_SETUP'; reason: string }
  /** Completion of a spawned child (hook calls, signals), matched by the `xstate.*.actor.*` wildcards. */
  | { type: `xstate.done.actor.${string}`; output?: unknown }
  | { type: `xstate.error.actor.${string}`; error?: unknown };

/** What `driver:start` reports: the reattach handle of the started workload. */
export interface DriverStartOutput {
  handle?: DriverHandleData;
}

export interface DriverCallInput {
  allocId: string;
  task: TaskSpec;
  hookEnv: Record<string, string>;
  handle?: DriverHandleData;
}

export interface DriverShutdownInput extends DriverCallInput {
  signal: string;
  timeout: number;
}

/** Emitted when a command does not apply, so callers hear about it. */
export type TaskRunnerEmitted = { type: 'command.rejected'; rejection: CommandRejection };

function killTimeoutOf(ctx: TaskRunnerContext): number {
  return Math.min(ctx.task.killTimeout ?? DEFAULT_KILL_TIMEOUT, ctx.maxKillTimeout);
}

function isPoststop(task: TaskSpec): boolean {
  return task.lifecycle?.hook === 'poststop';
}

function triggerOf(ctx: TaskRunnerContext): RestartTrigger {
  if (ctx.stopReason === 'kill' || (ctx.killRequested && ctx.stopReason !== 'restart')) return { kind: 'killed' };
  if (ctx.restartRequest && !ctx.restartRequest.failure) return { kind: 'restartRequested', failure: false };
  if (ctx.startError) return { kind: 'startError', ...ctx.startError };
  if (ctx.lastExit) return { kind: 'exit', exit: ctx.lastExit };
  if (ctx.restartRequest) return { kind: 'restartRequested', failure: ctx.restartRequest.failure };
  return { kind: 'none' };
}

function currentHook(ctx: TaskRunnerContext, phase: TaskHookPhase): string | undefined {
  return ctx.hooks[phase]?.[ctx.cursor[phase] ?? 0];
}

type Ctx = { context: TaskRunnerContext };

const taskRunnerSetup = setup({
  types: {
    context: {} as TaskRunnerContext,
    events: {} as TaskRunnerEvent,
    input: {} as TaskRunnerInput,
    emitted: {} as TaskRunnerEmitted,
  },
  actors: {
    /** Calls one hook method; provided by the runtime. */
    hook: notProvided<HookCallOutput, HookCallInput>('taskRunnerMachine', 'hook', 'createTaskRunner()'),
    /** The driver's prepare + start; output carries the reattach handle. */
    driverStart: notProvided<DriverStartOutput, DriverCallInput>('taskRunnerMachine', 'driverStart', 'createTaskRunner()'),
    /** Resolves with the workload's exit. */
    driverWait: notProvided<ExitResult, DriverCallInput>('taskRunnerMachine', 'driverWait', 'createTaskRunner()'),
    /** Sends the kill signal (the driver may escalate too; the machine's own deadline is the durable one). */
    driverShutdown: notProvided<void, DriverShutdownInput>('taskRunnerMachine', 'driverShutdown', 'createTaskRunner()'),
    /** Force-kills the workload. */
    driverTerminate: notProvided<void, DriverCallInput>('taskRunnerMachine', 'driverTerminate', 'createTaskRunner()'),
    /** Sends a signal to the workload. */
    driverSignal: notProvided<void, DriverCallInput & { signal: string }>('taskRunnerMachine', 'driverSignal', 'createTaskRunner()'),
    /** Waits until an absolute time on the system clock. */
    sleepUntil,
  },
  guards: {
    gateOpen: ({ context }) => context.gateOpen,
    phaseComplete: ({ context }, p: { phase: TaskHookPhase }) => currentHook(context, p.phase) === undefined,
    hookAlreadyDone: ({ context }, p: { phase: TaskHookPhase }) =>
      p.phase === 'prestart' && context.hookStates[currentHook(context, p.phase)!]?.done === true,
    isCurrentHook: ({ context, event }, p: { phase: TaskHookPhase }) => {
      const name = currentHook(context, p.phase);
      if (!name) return false;
      const id = hookActorId(p.phase, name);
      return event.type === `xstate.done.actor.${id}` || event.type === `xstate.error.actor.${id}`;
    },
    killRequested: ({ context }) => context.killRequested,
    hasShutdownDelay: ({ context }) => context.stopReason === 'kill' && (context.task.shutdownDelay ?? 0) > 0,
    decided: ({ context }, p: { kind: RestartDecisionKind }) => context.decision?.kind === p.kind,
    leavesPark: ({ context }) => !context.parkWhenDead || context.killRequested || isPoststop(context.task),
    taskRemoved: ({ context, event }) =>
      event.type === 'UPDATE' && !event.alloc.tasks.some((t) => t.name === context.task.name),
    allocStopping: ({ event }) => event.type === 'UPDATE' && event.alloc.desiredStatus === 'stop',
    updateQueued: ({ context }) => context.updateQueued,
    canForceRestart: ({ context, event }) => event.type === 'RESTART' && event.force === true && !context.runComplete,
  },
  actions: {
    resetCursor: assign(({ context }, p: { phase: TaskHookPhase }) => ({ cursor: { ...context.cursor, [p.phase]: 0 } })),
    advanceCursor: assign(({ context }, p: { phase: TaskHookPhase }) => ({
      cursor: { ...context.cursor, [p.phase]: (context.cursor[p.phase] ?? 0) + 1 },
    })),
    callHook: enqueueActions(({ enqueue, context }, p: { phase: TaskHookPhase }) => {
      const name = currentHook(context, p.phase)!;
      const alloc = p.phase === 'update' ? context.updating : context.alloc;
      const input: HookCallInput = {
        phase: p.phase,
        hook: name,
        allocId: context.allocId,
        task: alloc?.tasks.find((t) => t.name === context.task.name) ?? context.task,
        hookEnv: context.hookEnv,
        previousState: context.hookStates[name]?.data,
        exit: context.lastExit,
        alloc,
        taskState: context.taskState,
      };
      enqueue.spawnChild('hook', { id: hookActorId(p.phase, name), input });
    }),
    stopHook: enqueueActions(({ enqueue, context }, p: { phase: TaskHookPhase }) => {
      const name = currentHook(context, p.phase);
      if (name) enqueue.stopChild(hookActorId(p.phase, name));
    }),
    applyHookOutput: assign(({ context, event, system }, p: { phase: TaskHookPhase }) => {
      const out = ((event as { output?: HookCallOutput }).output ?? {}) as HookCallOutput;
      const name = currentHook(context, p.phase)!;
      let taskState = context.taskState;
      for (const ev of out.events ?? []) taskState = appendEvent(taskState, taskEvent(ev.type, clockNow(system), ev));
      if (p.phase !== 'prestart') return { taskState };
      return {
        taskState,
        hookStates: { ...context.hookStates, [name]: { done: out.done === true, data: out.state, env: out.env } },
        hookEnv: { ...context.hookEnv, ...(out.env ?? {}) },
      };
    }),
    reapplyDoneHook: assign(({ context }, p: { phase: TaskHookPhase }) => ({
      hookEnv: { ...context.hookEnv, ...(context.hookStates[currentHook(context, p.phase)!]?.env ?? {}) },
    })),
    recordHookError: assign(({ context, event, system }, p: { phase: TaskHookPhase }) => {
      const err = childErrorOf(event);
      const name = currentHook(context, p.phase)!;
      const ev = taskEvent(err.eventType ?? TaskEventType.HookFailed, clockNow(system), {
        message: `${p.phase} hook ${JSON.stringify(name)} failed: ${err.message}`,
        details: { hook: name, phase: p.phase },
      });
      return { taskState: appendEvent(context.taskState, ev) };
    }),
    failPrestart: assign(({ context, event, system }, p: { phase: TaskHookPhase }) => {
      const err: HookErrorInfo = childErrorOf(event);
      const name = currentHook(context, p.phase)!;
      const validation = err.eventType === TaskEventType.FailedValidation;
      const ev = taskEvent(err.eventType ?? TaskEventType.HookFailed, clockNow(system), {
        message: validation ? err.message : `${name}: ${err.message}`,
        details: { hook: name },
        failsTask: validation ? true : undefined,
      });
      return {
        taskState: appendEvent(context.taskState, ev),
        startError: { recoverable: validation ? false : err.recoverable ?? true, message: err.message },
      };
    }),
    taskSetup: assign(({ context, system }) =>
      context.setupDone
        ? {}
        : {
            setupDone: true,
            taskState: appendEvent(context.taskState, taskEvent(TaskEventType.Setup, clockNow(system), { message: 'Building Task Directory' })),
          },
    ),
    setGate: assign(({ event }) => (event.type === 'GATE' ? { gateOpen: event.open } : {})),
    markStarted: assign(({ context, event, system }) => {
      const out = (event as { output?: DriverStartOutput }).output ?? {};
      return {
        handle: out.handle,
        startError: undefined,
        taskState: appendEvent(context.taskState, taskEvent(TaskEventType.Started, clockNow(system)), 'running'),
      };
    }),
    recordDriverFailure: assign(({ context, event, system }) => {
      const err = childErrorOf(event);
      const validation = err.eventType === TaskEventType.FailedValidation;
      const ev = taskEvent(validation ? TaskEventType.FailedValidation : TaskEventType.DriverFailure, clockNow(system), {
        message: err.message,
        failsTask: validation ? true : undefined,
      });
      return {
        taskState: appendEvent(context.taskState, ev),
        startError: { recoverable: validation ? false : err.recoverable ?? false, message: err.message },
      };
    }),
    recordExit: assign(({ context, event, system }) => {
      const exit = (event as { output?: ExitResult }).output ?? { exitCode: 0, signal: 0 };
      const ev = taskEvent(TaskEventType.Terminated, clockNow(system), {
        exitCode: exit.exitCode,
        signal: exit.signal,
        message: exit.err,
      });
      return { lastExit: exit, handle: undefined, taskState: appendEvent(context.taskState, ev) };
    }),
    recordLostWorkload: assign(({ context, event, system }) => {
      const err = childErrorOf(event);
      const exit: ExitResult = { exitCode: -1, signal: 0, err: `lost the workload: ${err.message}` };
      const ev = taskEvent(TaskEventType.DriverFailure, clockNow(system), { message: exit.err });
      return { lastExit: exit, handle: undefined, taskState: appendEvent(context.taskState, ev) };
    }),
    recordKillError: assign(({ context, event, system }) => ({
      taskState: appendEvent(
        context.taskState,
        taskEvent(TaskEventType.DriverFailure, clockNow(system), { message: `failed to stop the task: ${childErrorOf(event).message}` }),
      ),
    })),
    raiseRemovalKill: raise(({ context, system }) => ({
      type: 'KILL' as const,
      event: taskEvent(TaskEventType.Killing, clockNow(system), {
        message: 'task is no longer in the allocation',
        failsTask: true,
        killTimeout: killTimeoutOf(context),
      }),
    })),
    beginKill: assign(({ context, event, system }) => {
      if (event.type !== 'KILL') return {};
      let ev: TaskEvent | undefined = event.event;
      // Like the alloc runner's killTasks: a Killing event unless the task already finished.
      if (!ev && context.taskState.finishedAt === undefined && !context.killRequested) {
        ev = taskEvent(TaskEventType.Killing, clockNow(system), { killTimeout: killTimeoutOf(context) });
      }
      return { killRequested: true, stopReason: 'kill' as const, taskState: appendEvent(context.taskState, ev) };
    }),
    beginRestart: assign(({ context, event, system }) => {
      if (event.type !== 'RESTART') return {};
      const ev = event.event ?? taskEvent(TaskEventType.RestartSignal, clockNow(system), { restartReason: 'User requested restart' });
      return {
        stopReason: 'restart' as const,
        restartRequest: { failure: event.failure === true },
        taskState: appendEvent(context.taskState, ev),
      };
    }),
    // A parked task's restart is decided at once (the tracker's manual flag is consumed here), so a
    // later exit is judged on its own.
    forceRestartParked: assign(({ context, event, system }) => {
      if (event.type !== 'RESTART') return {};
      const time = clockNow(system);
      let taskState = appendEvent(context.taskState, event.event ?? taskEvent(TaskEventType.RestartSignal, time, { restartReason: 'User requested restart' }));
      taskState = appendEvent(taskState, taskEvent(TaskEventType.Restarting, time, { startDelay: 0 }), 'pending');
      return { restartRequest: undefined, stopReason: undefined, lastExit: undefined, taskState };
    }),
    emitEvent: assign(({ context, event }) => (event.type === 'EMIT_EVENT' ? { taskState: appendEvent(context.taskState, event.event) } : {})),
    failSetup: assign(({ context, event, system }) => {
      if (event.type !== 'FAIL_SETUP') return {};
      const ev = taskEvent(TaskEventType.SetupFailure, clockNow(system), { message: event.reason, failsTask: true });
      return { killRequested: true, stopReason: 'kill' as const, taskState: appendEvent(context.taskState, ev) };
    }),
    waitShutdownDelay: assign(({ context, system }) => {
      const time = clockNow(system);
      const delay = context.task.shutdownDelay ?? 0;
      const ev = taskEvent(TaskEventType.WaitingShutdownDelay, time, {
        message: `Waiting for shutdown_delay of ${delay}ms before killing the task.`,
      });
      return { deadline: time + delay, taskState: appendEvent(context.taskState, ev, 'pending') };
    }),
    armKillTimeout: assign(({ context, system }) => ({ deadline: clockNow(system) + killTimeoutOf(context) })),
    decide: assign(({ context, system }) => {
      const now = clockNow(system);
      const rng = mulberry32(context.seed);
      const d = decideRestart({
        policy: context.restartPolicy,
        jobType: context.jobType,
        lifecycle: context.task.lifecycle,
        tracker: context.tracker,
        trigger: triggerOf(context),
        now,
        random: () => rng.next(),
      });
      return {
        tracker: d.tracker,
        seed: rng.seed,
        decision: { kind: d.decision, delay: d.delay, reason: d.reason },
        restartRequest: undefined,
        startError: undefined,
        stopReason: undefined,
      };
    }),
    recordKilled: assign(({ context, system }) => ({
      taskState: appendEvent(context.taskState, taskEvent(TaskEventType.Killed, clockNow(system))),
    })),
    recordNotRestarting: assign(({ context, system }) => ({
      taskState: appendEvent(
        context.taskState,
        taskEvent(TaskEventType.NotRestarting, clockNow(system), { restartReason: context.decision?.reason, failsTask: true }),
      ),
    })),
    scheduleRestart: assign(({ context, system }) => {
      const time = clockNow(system);
      const delay = context.decision?.delay ?? 0;
      const ev = taskEvent(TaskEventType.Restarting, time, { restartReason: context.decision?.reason, startDelay: delay });
      return { deadline: time + delay, lastExit: undefined, taskState: appendEvent(context.taskState, ev, 'pending') };
    }),
    restartSilently: assign(({ context, system }) => ({
      lastExit: undefined,
      taskState: setStatus(context.taskState, 'pending', clockNow(system)),
    })),
    markDead: assign(({ context, system }) => ({ taskState: setStatus(context.taskState, 'dead', clockNow(system)) })),
    markRunComplete: assign({ runComplete: true }),
    storeUpdate: assign(({ context, event }) => {
      if (event.type !== 'UPDATE') return {};
      const task = event.alloc.tasks.find((t) => t.name === context.task.name) ?? context.task;
      return { alloc: event.alloc, task };
    }),
    queueUpdate: assign({ updateQueued: true }),
    takeUpdate: assign(({ context }) => ({ updateQueued: false, updating: context.alloc })),
    sendSignal: enqueueActions(({ enqueue, context, event, system }) => {
      if (event.type !== 'SIGNAL') return;
      const seq = context.signalSeq + 1;
      enqueue.assign({
        signalSeq: seq,
        taskState: appendEvent(
          context.taskState,
          taskEvent(TaskEventType.Signaling, clockNow(system), { details: { signal: event.signal } }),
        ),
      });
      enqueue.spawnChild('driverSignal', {
        id: `signal.${seq}`,
        input: { allocId: context.allocId, task: context.task, hookEnv: context.hookEnv, handle: context.handle, signal: event.signal },
      });
    }),
    signalSettled: enqueueActions(({ enqueue, context, event, system }) => {
      const id = event.type.replace(/^xstate\.(done|error)\.actor\./, '');
      enqueue.stopChild(id);
      if (event.type.startsWith('xstate.error.actor.')) {
        const rejection: CommandRejection = {
          command: 'SIGNAL',
          code: 'ErrSignalFailed',
          message: childErrorOf(event).message,
          time: clockNow(system),
        };
        enqueue.assign({ rejections: [...context.rejections, rejection] });
        enqueue.emit({ type: 'command.rejected', rejection });
      }
    }),
    reject: enqueueActions(({ enqueue, context, event, system }, p: { code: CommandRejection['code']; why: string }) => {
      const rejection: CommandRejection = {
        command: event.type,
        code: p.code,
        message: `cannot ${event.type.toLowerCase()} task ${JSON.stringify(context.task.name)}: ${p.why}`,
        time: clockNow(system),
      };
      enqueue.assign({ rejections: [...context.rejections, rejection] });
      enqueue.emit({ type: 'command.rejected', rejection });
    }),
  },
});

/**
 * One phase's hooks, called in order, each as a child actor `<phase>:<hook>`. Errors are handled by the
 * phase's `onError` actions (recorded, or failing the start for prestart); `next` is where the phase ends.
 */
function hookPhase(
  phase: TaskHookPhase,
  next: string,
  opts: { onError?: 'recordHookError' | 'failPrestart'; entry?: ('taskSetup' | 'takeUpdate' | 'markRunComplete')[] } = {},
) {
  const onError = opts.onError ?? 'recordHookError';
  return taskRunnerSetup.createStateConfig({
    initial: 'next' as const,
    entry: [{ type: 'resetCursor' as const, params: { phase } }, ...(opts.entry ?? [])],
    states: {
      next: {
        always: [
          { guard: { type: 'phaseComplete' as const, params: { phase } }, target: next },
          {
            guard: { type: 'hookAlreadyDone' as const, params: { phase } },
            actions: [{ type: 'reapplyDoneHook' as const, params: { phase } }, { type: 'advanceCursor' as const, params: { phase } }],
          },
          { target: 'calling' },
        ],
      },
      calling: {
        entry: { type: 'callHook' as const, params: { phase } },
        exit: { type: 'stopHook' as const, params: { phase } },
        on: {
          'xstate.done.actor.*': {
            guard: { type: 'isCurrentHook' as const, params: { phase } },
            actions: [{ type: 'applyHookOutput' as const, params: { phase } }, { type: 'advanceCursor' as const, params: { phase } }],
            target: 'next',
          },
          'xstate.error.actor.*':
            onError === 'failPrestart'
              ? {
                  guard: { type: 'isCurrentHook' as const, params: { phase } },
                  actions: { type: 'failPrestart' as const, params: { phase } },
                  target: '#task.exited.deciding',
                }
              : {
                  guard: { type: 'isCurrentHook' as const, params: { phase } },
                  actions: [{ type: 'recordHookError' as const, params: { phase } }, { type: 'advanceCursor' as const, params: { phase } }],
                  target: 'next',
                },
        },
      },
    },
  });
}

export const taskRunnerMachine = taskRunnerSetup.createMachine({
  id: 'task',
  context: ({ input, self }) => {
    const now = clockNow(self.system);
    const seed = input.seed ?? 1;
    return {
      allocId: input.allocId,
      task: input.task,
      jobType: input.jobType,
      restartPolicy: input.task.restart ?? input.groupRestart ?? defaultRestartPolicy(input.jobType),
      hooks: input.hooks ?? {},
      maxKillTimeout: input.maxKillTimeout ?? DEFAULT_MAX_KILL_TIMEOUT,
      parkWhenDead: input.parkWhenDead ?? true,
      taskState: input.taskState ?? newTaskState(now),
      tracker: newRestartTracker(now),
      seed,
      gateOpen: input.gateOpen ?? true,
      killRequested: false,
      hookStates: {},
      hookEnv: {},
      cursor: {},
      setupDone: false,
      runComplete: false,
      updateQueued: false,
      signalSeq: 0,
      rejections: [],
    };
  },
  initial: 'pending',
  on: {
    SHUTDOWN: '.detaching',
    EMIT_EVENT: { actions: 'emitEvent' },
    GATE: { actions: 'setGate' },
    UPDATE: [{ guard: 'taskRemoved', actions: 'raiseRemovalKill' }, { actions: 'storeUpdate' }],
    'xstate.done.actor.signal.*': { actions: 'signalSettled' },
    'xstate.error.actor.signal.*': { actions: 'signalSettled' },
  },
  states: {
    pending: {
      initial: 'gate',
      on: {
        // Outside WAIT a kill needs no driver call: the task goes dead with no Terminated/Killed.
        KILL: { target: 'terminal', actions: 'beginKill' },
        FAIL_SETUP: { target: 'terminal', actions: 'failSetup' },
        RESTART: { actions: { type: 'reject', params: { code: 'ErrTaskNotRunning', why: 'the task is not running' } } },
        SIGNAL: { actions: { type: 'reject', params: { code: 'ErrTaskNotRunning', why: 'the task is not running' } } },
      },
      states: {
        gate: {
          always: { guard: 'gateOpen', target: 'prestart' },
        },
        prestart: hookPhase('prestart', '#task.pending.starting', { onError: 'failPrestart', entry: ['taskSetup'] }),
        starting: {
          invoke: {
            id: 'driver:start',
            src: 'driverStart',
            input: ({ context }) => ({ allocId: context.allocId, task: context.task, hookEnv: context.hookEnv }),
            onDone: [
              // A kill that arrived while the driver was starting is honoured once the workload runs.
              { guard: 'killRequested', target: '#task.killing', actions: 'markStarted' },
              { target: '#task.running', actions: 'markStarted' },
            ],
            onError: { target: '#task.exited.deciding', actions: 'recordDriverFailure' },
          },
          on: {
            KILL: { actions: 'beginKill' },
            FAIL_SETUP: { actions: 'failSetup' },
          },
        },
        restartDelay: {
          invoke: {
            id: 'restartDelay',
            src: 'sleepUntil',
            input: ({ context }) => ({ until: context.deadline ?? 0 }),
            onDone: 'gate',
            onError: 'gate',
          },
        },
      },
    },
    running: {
      type: 'parallel',
      invoke: {
        id: 'driver:wait',
        src: 'driverWait',
        input: ({ context }) => ({ allocId: context.allocId, task: context.task, hookEnv: context.hookEnv, handle: context.handle }),
        onDone: { target: 'exited', actions: 'recordExit' },
        onError: { target: 'exited', actions: 'recordLostWorkload' },
      },
      on: {
        KILL: { target: 'killing', actions: 'beginKill' },
        FAIL_SETUP: { target: 'killing', actions: 'failSetup' },
        RESTART: { target: 'killing', actions: 'beginRestart' },
        SIGNAL: { actions: 'sendSignal' },
        UPDATE: [
          { guard: 'taskRemoved', actions: 'raiseRemovalKill' },
          { guard: 'allocStopping', actions: 'storeUpdate' },
          { actions: ['storeUpdate', 'queueUpdate'] },
        ],
      },
      states: {
        poststart: {
          initial: 'hooks',
          states: {
            hooks: hookPhase('poststart', '#task.running.poststart.done'),
            done: {},
          },
        },
        updates: {
          initial: 'idle',
          states: {
            idle: { always: { guard: 'updateQueued', target: 'updating' } },
            updating: hookPhase('update', '#task.running.updates.idle', { entry: ['takeUpdate'] }),
          },
        },
      },
    },
    killing: {
      initial: 'preKill',
      invoke: {
        id: 'driver:wait',
        src: 'driverWait',
        input: ({ context }) => ({ allocId: context.allocId, task: context.task, hookEnv: context.hookEnv, handle: context.handle }),
        onDone: { target: 'exited', actions: 'recordExit' },
        onError: { target: 'exited', actions: 'recordLostWorkload' },
      },
      on: {
        // Kill is idempotent (Nomad cancels killCtx once); a kill during a restart-kill upgrades it.
        KILL: { actions: 'beginKill' },
        FAIL_SETUP: { actions: 'failSetup' },
        RESTART: { actions: { type: 'reject', params: { code: 'ErrTaskKilling', why: 'the task is being stopped' } } },
        SIGNAL: { actions: 'sendSignal' },
      },
      states: {
        preKill: hookPhase('preKilling', '#task.killing.shutdownDelay'),
        shutdownDelay: {
          always: [{ guard: 'hasShutdownDelay', target: 'waitingShutdownDelay' }, { target: 'signalling' }],
        },
        waitingShutdownDelay: {
          entry: 'waitShutdownDelay',
          invoke: {
            id: 'shutdownDelay',
            src: 'sleepUntil',
            input: ({ context }) => ({ until: context.deadline ?? 0 }),
            onDone: 'signalling',
            onError: 'signalling',
          },
        },
        signalling: {
          entry: 'armKillTimeout',
          invoke: [
            // The durable deadline is armed first, so at the timeout the machine's force kill wins.
            {
              id: 'killTimeout',
              src: 'sleepUntil',
              input: ({ context }) => ({ until: context.deadline ?? 0 }),
              onDone: 'forceKilling',
              onError: 'forceKilling',
            },
            {
              id: 'driver:shutdown',
              src: 'driverShutdown',
              input: ({ context }) => ({
                allocId: context.allocId,
                task: context.task,
                hookEnv: context.hookEnv,
                handle: context.handle,
                signal: context.task.killSignal ?? DEFAULT_KILL_SIGNAL,
                timeout: killTimeoutOf(context),
              }),
              onError: { actions: 'recordKillError' },
            },
          ],
        },
        forceKilling: {
          invoke: {
            id: 'driver:terminate',
            src: 'driverTerminate',
            input: ({ context }) => ({ allocId: context.allocId, task: context.task, hookEnv: context.hookEnv, handle: context.handle }),
            onDone: 'awaitingExit',
            onError: { target: 'awaitingExit', actions: 'recordKillError' },
          },
        },
        awaitingExit: {},
      },
    },
    exited: {
      initial: 'hooks',
      states: {
        hooks: hookPhase('exited', '#task.exited.deciding'),
        deciding: {
          entry: 'decide',
          always: [
            { guard: { type: 'decided', params: { kind: 'killed' } }, target: '#task.terminal', actions: 'recordKilled' },
            { guard: { type: 'decided', params: { kind: 'notRestarting' } }, target: '#task.terminal', actions: 'recordNotRestarting' },
            { guard: { type: 'decided', params: { kind: 'terminated' } }, target: '#task.terminal' },
            { guard: { type: 'decided', params: { kind: 'restart' } }, target: '#task.pending.restartDelay', actions: 'scheduleRestart' },
            { target: '#task.pending.gate', actions: 'restartSilently' },
          ],
        },
      },
      on: {
        KILL: { actions: 'beginKill' },
        RESTART: { actions: { type: 'reject', params: { code: 'ErrTaskNotRunning', why: 'the task has exited' } } },
        SIGNAL: { actions: { type: 'reject', params: { code: 'ErrTaskNotRunning', why: 'the task has exited' } } },
      },
    },
    terminal: {
      entry: 'markDead',
      initial: 'parked',
      on: {
        SIGNAL: { actions: { type: 'reject', params: { code: 'ErrTaskNotRunning', why: 'the task is dead' } } },
      },
      states: {
        // Nomad's ALLOC_RESTART: a dead non-poststop task may still be force-restarted by its alloc.
        parked: {
          // A killed task, or a poststop one, will never be restarted by its alloc: stop it now.
          always: { guard: 'leavesPark', target: 'stopping' },
          on: {
            KILL: { target: 'stopping', actions: assign({ killRequested: true }) },
            FAIL_SETUP: { target: 'stopping', actions: 'failSetup' },
            RESTART: [
              { guard: 'canForceRestart', target: '#task.pending.gate', actions: 'forceRestartParked' },
              { actions: { type: 'reject', params: { code: 'ErrTaskNotRunning', why: 'the task is dead' } } },
            ],
          },
        },
        stopping: hookPhase('stop', '#task.terminal.stopped', { entry: ['markRunComplete'] }),
        stopped: {
          type: 'final',
          on: {
            RESTART: { actions: { type: 'reject', params: { code: 'ErrTaskRunComplete', why: 'the task has finished and will not run again' } } },
            KILL: {},
          },
        },
      },
    },
    detaching: {
      ...hookPhase('shutdown', '#task.detached'),
      on: { SHUTDOWN: {} },
    },
    detached: { type: 'final', on: { SHUTDOWN: {} } },
  },
});

export type TaskRunnerActor = ActorRefFrom<typeof taskRunnerMachine>;
