/**
 * The task runner's `setup()`: its actors (the runtime provides the real ones), its guards and its hook
 * calls on the shared hook loop. The lifecycle's actions extend this in task-runner-actions.ts; the
 * statechart itself is in task-runner.ts.
 */
import { enqueueActions, setup } from 'xstate';
import { assignContext } from './context-assign.ts';
import { merged, withEntry } from './record-copy.ts';
import { spawnCall } from './child-actions.ts';
import { notProvided } from './not-provided.ts';
import { clockNow, sleepUntil } from './clock.ts';
import { TaskEventType, appendEvent, taskEvent } from './task-events.ts';
import { childErrorOf, hookActorId, type HookCallInput, type HookCallOutput, type HookErrorInfo, type TaskHookPhase } from './hook-calls.ts';
import { advancedCursor, currentHook, hookAt, hookLoopActions, hookLoopGuards, type PhaseParams } from './hook-phase.ts';
import type { RestartDecisionKind } from './restart-tracker.ts';
import { isServerTerminal, type ExitResult, type TaskSpec } from './model.ts';
import type {
  DriverCallInput, DriverReapOutput, DriverShutdownInput, DriverStartOutput, TaskRunnerContext, TaskRunnerEmitted, TaskRunnerEvent, TaskRunnerInput,
} from './task-runner-types.ts';

/** Whether a task is a poststop task (it runs once, after the others, and is never restarted by its alloc). */
export function isPoststopTask(task: TaskSpec): boolean {
  return task.lifecycle?.hook === 'poststop';
}

/** A dead task that will never be restarted by its alloc (killed, poststop, or standalone) stops at once. */
function leavesPark(context: TaskRunnerContext): boolean {
  return !context.settings.parkWhenDead || context.killRequested || isPoststopTask(context.task);
}

const provided = <TOutput, TInput>(name: string) => notProvided<TOutput, TInput>('taskRunnerMachine', name, 'createTaskRunner()');

const taskRunnerBase = setup({
  types: {
    context: {} as TaskRunnerContext,
    events: {} as TaskRunnerEvent,
    input: {} as TaskRunnerInput,
    emitted: {} as TaskRunnerEmitted,
  },
  actors: {
    /** Calls one hook method; provided by the runtime. */
    hook: provided<HookCallOutput, HookCallInput>('hook'),
    /** The driver's prepare + start; output carries the reattach handle. */
    driverStart: provided<DriverStartOutput, DriverCallInput>('driverStart'),
    /** Resolves with the workload's exit. */
    driverWait: provided<ExitResult, DriverCallInput>('driverWait'),
    /** Sends the kill signal (the driver may escalate too; the machine's own deadline is the durable one). */
    driverShutdown: provided<void, DriverShutdownInput>('driverShutdown'),
    /** Force-kills the workload. */
    driverTerminate: provided<void, DriverCallInput>('driverTerminate'),
    /** Sends a signal to the workload. */
    driverSignal: provided<void, DriverCallInput & { signal: string }>('driverSignal'),
    /**
     * Finds the workload of a start (input.attempt) the snapshot does not know of, and stops it with the
     * kill signal and timeout; resolves with its exit, or with nothing when that start spawned nothing.
     */
    driverReap: provided<DriverReapOutput, DriverShutdownInput>('driverReap'),
    /** Waits until an absolute time on the system clock. */
    sleepUntil,
  },
  guards: {
    gateOpen: ({ context }) => context.gateOpen,
    /** The event is a GATE that opens the gate. */
    opensGate: ({ event }) => event.type === 'GATE' && event.open,
    /**
     * Prestart hooks that reported Done are not called again after a restart (Nomad's LocalState.Hooks). Asked
     * of the current hook, or (`at`) of the first or following one by a transition that would call it directly.
     */
    hookAlreadyDone: ({ context }, p: PhaseParams<TaskHookPhase>) =>
      p.phase === 'prestart' && context.hookStates[hookAt(context, p.phase, p.at) ?? '']?.done === true,
    killRequested: ({ context }) => context.killRequested,
    /** Resumed before a start the dead agent may have made after its last save (see TaskRun.restoredBeforeStart). */
    mayHaveUnrecordedStart: ({ context }) => context.run.restoredBeforeStart === true,
    /** driver:reap found that start's workload and stopped it. */
    reapedWorkload: ({ event }) => (event as { output?: DriverReapOutput }).output?.exit !== undefined,
    hasShutdownDelay: ({ context }) => context.run.stopReason === 'kill' && (context.task.shutdownDelay ?? 0) > 0,
    decided: ({ context }, p: { kind: RestartDecisionKind }) => context.restarts.decision?.kind === p.kind,
    leavesPark: ({ context }) => leavesPark(context),
    /** `decided` and `leavesPark`: the task ends and goes on to its stop hooks without waiting in the park. */
    decidedLeavingPark: ({ context }, p: { kind: RestartDecisionKind }) => context.restarts.decision?.kind === p.kind && leavesPark(context),
    taskRemoved: ({ context, event }) => event.type === 'UPDATE' && !event.alloc.tasks.some((t) => t.name === context.task.name),
    allocStopping: ({ event }) => event.type === 'UPDATE' && isServerTerminal(event.alloc),
    updateQueued: ({ context }) => context.updates.queued,
    canForceRestart: ({ context, event }) => event.type === 'RESTART' && event.force === true && !context.runComplete,
  },
  actions: {
    /** Spawns the phase's current hook as `<phase>:<hook>` with what the hook may see. */
    callHook: enqueueActions(({ enqueue, context }, p: PhaseParams<TaskHookPhase>) => {
      const name = currentHook(context, p.phase)!;
      const alloc = p.phase === 'update' ? context.updates.updating : context.updates.alloc;
      const input: HookCallInput = {
        phase: p.phase,
        hook: name,
        allocId: context.settings.allocId,
        task: alloc?.tasks.find((t) => t.name === context.task.name) ?? context.task,
        hookEnv: context.hookEnv,
        previousState: context.hookStates[name]?.data,
        exit: context.run.lastExit,
        alloc,
        taskState: context.taskState,
      };
      // spawnCall: XState's spawnChild without a recomputed snapshot (child-actions.ts).
      enqueue(spawnCall('hook', { id: hookActorId(p.phase, name), input }));
    }),
  },
});

/** The task runner's setup with the hook loop and its hook calls: what goes into a hook and what is kept. */
export const taskRunnerHookSetup = taskRunnerBase.extend({
  guards: hookLoopGuards,
  actions: {
    ...hookLoopActions<TaskRunnerContext, TaskRunnerEvent>(),
    /** Keeps a hook's events; for prestart also its env, its state and whether it is done. Moves the loop to the next hook. */
    applyHookOutput: assignContext(({ context, event, system }, p: PhaseParams<TaskHookPhase>) => {
      const out = ((event as { output?: HookCallOutput }).output ?? {}) as HookCallOutput;
      const name = currentHook(context, p.phase)!;
      const cursor = advancedCursor(context, p.phase);
      let taskState = context.taskState;
      for (const ev of out.events ?? []) taskState = appendEvent(taskState, taskEvent(ev.type, clockNow(system), ev));
      if (p.phase !== 'prestart') return { taskState, cursor };
      return {
        cursor,
        taskState,
        hookStates: withEntry(context.hookStates, name, { done: out.done === true, data: out.state, env: out.env, ...(out.mounts && { mounts: out.mounts }), ...(out.devices && { devices: out.devices }) }),
        hookEnv: out.env ? merged(context.hookEnv, out.env) : context.hookEnv,
      };
    }),
    /** A skipped Done hook's env still applies (Nomad re-applies it from LocalState). */
    reapplyDoneHook: assignContext(({ context }, p: PhaseParams<TaskHookPhase>) => ({
      hookEnv: { ...context.hookEnv, ...(context.hookStates[currentHook(context, p.phase)!]?.env ?? {}) },
    })),
    recordHookError: assignContext(({ context, event, system }, p: PhaseParams<TaskHookPhase>) => {
      const err = childErrorOf(event);
      const name = currentHook(context, p.phase)!;
      const ev = taskEvent(err.eventType ?? TaskEventType.HookFailed, clockNow(system), {
        message: `${p.phase} hook ${JSON.stringify(name)} failed: ${err.message}`,
        details: { hook: name, phase: p.phase },
      });
      return { taskState: appendEvent(context.taskState, ev) };
    }),
    /** A prestart error fails the start; the restart policy decides what follows (validation never retries). */
    failPrestart: assignContext(({ context, event, system }, p: PhaseParams<TaskHookPhase>) => {
      const err: HookErrorInfo = childErrorOf(event);
      const name = currentHook(context, p.phase)!;
      const validation = err.eventType === TaskEventType.FailedValidation;
      const ev = taskEvent(err.eventType ?? TaskEventType.HookFailed, clockNow(system), {
        message: validation ? err.message : `${name}: ${err.message}`,
        details: { ...err.details, hook: name },
        failsTask: validation ? true : undefined,
      });
      return {
        taskState: appendEvent(context.taskState, ev),
        run: { ...context.run, startError: { recoverable: validation ? false : err.recoverable ?? true, message: err.message } },
      };
    }),
  },
});
