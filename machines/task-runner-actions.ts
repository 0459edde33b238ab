/**
 * The task runner's lifecycle actions: what each step of the diagram in task-runner.ts records (Nomad's
 * task events, the restart decision, kill and restart bookkeeping, commands answered instead of dropped).
 * Every action is a pure update of context on the actor system's clock; none does I/O.
 */
import { enqueueActions, raise } from 'xstate';
import { assignContext } from './context-assign.ts';
import { merged } from './record-copy.ts';
import { clockNow } from './clock.ts';
import { TaskEventType, appendEvent, setStatus, taskEvent } from './task-events.ts';
import { childErrorOf } from './hook-calls.ts';
import { decideRestart, mulberry32, type RestartTrigger } from './restart-tracker.ts';
import { formatDuration, killTimeoutOf as killTimeoutOfTask, type ExitResult, type TaskEvent } from './model.ts';
import { taskRunnerHookSetup } from './task-runner-setup.ts';
import type { CommandRejection, DriverReapOutput, DriverStartOutput, TaskRunnerContext } from './task-runner-types.ts';

function killTimeoutOf(ctx: TaskRunnerContext): number {
  return killTimeoutOfTask(ctx.task, ctx.settings.maxKillTimeout);
}

/** The one flag the restart tracker judges (Nomad's failure / manual / killed), in Nomad's precedence. */
function triggerOf(ctx: TaskRunnerContext): RestartTrigger {
  const run = ctx.run;
  if (run.stopReason === 'kill' || (ctx.killRequested && run.stopReason !== 'restart')) return { kind: 'killed' };
  if (run.restartRequest && !run.restartRequest.failure) return { kind: 'restartRequested', failure: false };
  if (run.startError) return { kind: 'startError', ...run.startError };
  if (run.lastExit) return { kind: 'exit', exit: run.lastExit };
  if (run.restartRequest) return { kind: 'restartRequested', failure: run.restartRequest.failure };
  return { kind: 'none' };
}

/** The task runner's complete setup: hook loop, hook calls and lifecycle actions. */
export const taskRunnerSetup = taskRunnerHookSetup.extend({
  actions: {
    taskSetup: assignContext(({ context, system }) =>
      context.setupDone
        ? {}
        : {
            setupDone: true,
            taskState: appendEvent(context.taskState, taskEvent(TaskEventType.Setup, clockNow(system), { message: 'Building Task Directory' })),
          },
    ),
    setGate: assignContext(({ event }) => (event.type === 'GATE' ? { gateOpen: event.open } : {})),
    markStarted: assignContext(({ context, event, system }) => {
      const out = (event as { output?: DriverStartOutput }).output ?? {};
      return {
        run: merged(context.run, { handle: out.handle, startError: undefined }),
        taskState: appendEvent(context.taskState, taskEvent(TaskEventType.Started, clockNow(system)), 'running'),
      };
    }),
    recordDriverFailure: assignContext(({ context, event, system }) => {
      const err = childErrorOf(event);
      const validation = err.eventType === TaskEventType.FailedValidation;
      const ev = taskEvent(validation ? TaskEventType.FailedValidation : TaskEventType.DriverFailure, clockNow(system), {
        message: err.message,
        failsTask: validation ? true : undefined,
      });
      return {
        taskState: appendEvent(context.taskState, ev),
        run: merged(context.run, { startError: { recoverable: validation ? false : err.recoverable ?? false, message: err.message } }),
      };
    }),
    // A start after a restore finds an unrecorded earlier start itself (the driver's intent record).
    countStartAttempt: assignContext(({ context }) => ({ run: merged(context.run, { attempt: context.run.attempt + 1, restoredBeforeStart: undefined }) })),
    markRestoredBeforeStart: assignContext(({ context }) => ({ run: merged(context.run, { restoredBeforeStart: true }) })),
    /** Back to before the start that was under way when the snapshot was saved: its attempt is the next one again. */
    rewindStart: assignContext(({ context }) => ({ run: merged(context.run, { attempt: context.run.attempt - 1, restoredBeforeStart: true }) })),
    /** The unrecorded start's workload was found and stopped: its end and the kill, as for a running task. */
    recordReaped: assignContext(({ context, event, system }) => {
      const exit = (event as { output?: DriverReapOutput }).output?.exit ?? { exitCode: 0, signal: 0 };
      const time = clockNow(system);
      let taskState = appendEvent(context.taskState, taskEvent(TaskEventType.Terminated, time, { exitCode: exit.exitCode, signal: exit.signal, message: exit.err }));
      taskState = appendEvent(taskState, taskEvent(TaskEventType.Killed, time));
      return { run: merged(context.run, { lastExit: exit, restoredBeforeStart: undefined }), taskState };
    }),
    recordExit: assignContext(({ context, event, system }) => {
      const exit = (event as { output?: ExitResult }).output ?? { exitCode: 0, signal: 0 };
      const ev = taskEvent(TaskEventType.Terminated, clockNow(system), {
        exitCode: exit.exitCode,
        signal: exit.signal,
        message: exit.err,
      });
      // A stop the dead agent had begun ends as it began, even if the restored snapshot predates it: a kill
      // as a kill, a restart as a user's restart (not a failure, and the task starts again).
      const begun = exit.stoppedByAgent === true && context.run.stopReason === undefined;
      const restarted = begun && exit.stoppedFor === 'restart';
      const killed = begun && !restarted;
      return {
        run: merged(context.run, {
          lastExit: exit,
          handle: undefined,
          ...(killed && { stopReason: 'kill' as const }),
          ...(restarted && { stopReason: 'restart' as const, restartRequest: { failure: false } }),
        }),
        taskState: appendEvent(context.taskState, ev),
        ...(killed && { killRequested: true }),
      };
    }),
    // The workload ended while no agent watched it and its exit status is unknown: a distinct outcome
    // (Nomad's "Failed Restoring Task"), judged by the restart policy as a failed run.
    recordLostWorkload: assignContext(({ context, event, system }) => {
      const err = childErrorOf(event);
      const exit: ExitResult = { exitCode: -1, signal: 0, err: `lost the workload: ${err.message}` };
      const ev = taskEvent(TaskEventType.FailedRestoring, clockNow(system), { message: exit.err });
      return { run: merged(context.run, { lastExit: exit, handle: undefined }), taskState: appendEvent(context.taskState, ev) };
    }),
    recordKillError: assignContext(({ context, event, system }) => ({
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
    beginKill: assignContext(({ context, event, system }) => {
      if (event.type !== 'KILL') return {};
      let ev: TaskEvent | undefined = event.event;
      // Like the alloc runner's killTasks: a Killing event unless the task already finished.
      if (!ev && !event.quiet && context.taskState.finishedAt === undefined && !context.killRequested) {
        ev = taskEvent(TaskEventType.Killing, clockNow(system), { killTimeout: killTimeoutOf(context) });
      }
      return { killRequested: true, run: merged(context.run, { stopReason: 'kill' as const }), taskState: appendEvent(context.taskState, ev) };
    }),
    beginRestart: assignContext(({ context, event, system }) => {
      if (event.type !== 'RESTART') return {};
      const ev = event.event ?? taskEvent(TaskEventType.RestartSignal, clockNow(system), { restartReason: 'User requested restart' });
      return {
        run: merged(context.run, { stopReason: 'restart' as const, restartRequest: { failure: event.failure === true } }),
        taskState: appendEvent(context.taskState, ev),
      };
    }),
    // A parked task's restart is decided at once (the tracker's manual flag is consumed here), so a
    // later exit is judged on its own.
    forceRestartParked: assignContext(({ context, event, system }) => {
      if (event.type !== 'RESTART') return {};
      const time = clockNow(system);
      let taskState = appendEvent(context.taskState, event.event ?? taskEvent(TaskEventType.RestartSignal, time, { restartReason: 'User requested restart' }));
      taskState = appendEvent(taskState, taskEvent(TaskEventType.Restarting, time, { startDelay: 0 }), 'pending');
      return { run: merged(context.run, { restartRequest: undefined, stopReason: undefined, lastExit: undefined }), taskState };
    }),
    emitEvent: assignContext(({ context, event }) => (event.type === 'EMIT_EVENT' ? { taskState: appendEvent(context.taskState, event.event) } : {})),
    failSetup: assignContext(({ context, event, system }) => {
      if (event.type !== 'FAIL_SETUP') return {};
      const ev = taskEvent(TaskEventType.SetupFailure, clockNow(system), { message: event.reason, failsTask: true });
      return { killRequested: true, run: merged(context.run, { stopReason: 'kill' as const }), taskState: appendEvent(context.taskState, ev) };
    }),
    waitShutdownDelay: assignContext(({ context, system }) => {
      const time = clockNow(system);
      const delay = context.task.shutdownDelay ?? 0;
      const ev = taskEvent(TaskEventType.WaitingShutdownDelay, time, {
        message: `Waiting for shutdown_delay of ${formatDuration(delay)} before killing the task.`,
      });
      return { deadline: time + delay, taskState: appendEvent(context.taskState, ev, 'pending') };
    }),
    armKillTimeout: assignContext(({ context, system }) => ({ deadline: clockNow(system) + killTimeoutOf(context) })),
    decide: assignContext(({ context, system }) => {
      const now = clockNow(system);
      const rng = mulberry32(context.restarts.seed);
      const d = decideRestart({
        policy: context.settings.restartPolicy,
        jobType: context.settings.jobType,
        lifecycle: context.task.lifecycle,
        tracker: context.restarts.tracker,
        trigger: triggerOf(context),
        now,
        random: () => rng.next(),
      });
      return {
        restarts: { tracker: d.tracker, seed: rng.seed, decision: { kind: d.decision, delay: d.delay, reason: d.reason } },
        run: merged(context.run, { restartRequest: undefined, startError: undefined, stopReason: undefined }),
      };
    }),
    recordKilled: assignContext(({ context, system }) => ({
      taskState: appendEvent(context.taskState, taskEvent(TaskEventType.Killed, clockNow(system))),
    })),
    recordNotRestarting: assignContext(({ context, system }) => ({
      taskState: appendEvent(
        context.taskState,
        taskEvent(TaskEventType.NotRestarting, clockNow(system), { restartReason: context.restarts.decision?.reason, failsTask: true }),
      ),
    })),
    scheduleRestart: assignContext(({ context, system }) => {
      const time = clockNow(system);
      const delay = context.restarts.decision?.delay ?? 0;
      const ev = taskEvent(TaskEventType.Restarting, time, { restartReason: context.restarts.decision?.reason, startDelay: delay });
      return { deadline: time + delay, run: merged(context.run, { lastExit: undefined }), taskState: appendEvent(context.taskState, ev, 'pending') };
    }),
    restartSilently: assignContext(({ context, system }) => ({
      run: merged(context.run, { lastExit: undefined }),
      taskState: setStatus(context.taskState, 'pending', clockNow(system)),
    })),
    markDead: assignContext(({ context, system }) => ({ taskState: setStatus(context.taskState, 'dead', clockNow(system)) })),
    markRunComplete: assignContext({ runComplete: true }),
    /** A parked task is killed: it will never be restarted, only stopped. */
    markKillRequested: assignContext({ killRequested: true }),
    storeUpdate: assignContext(({ context, event }) => {
      if (event.type !== 'UPDATE') return {};
      const task = event.alloc.tasks.find((t) => t.name === context.task.name) ?? context.task;
      return { updates: { ...context.updates, alloc: event.alloc }, task };
    }),
    queueUpdate: assignContext(({ context }) => ({ updates: { ...context.updates, queued: true } })),
    takeUpdate: assignContext(({ context }) => ({ updates: { ...context.updates, queued: false, updating: context.updates.alloc } })),
    sendSignal: enqueueActions(({ enqueue, context, event, system }) => {
      if (event.type !== 'SIGNAL') return;
      const seq = context.signalSeq + 1;
      enqueue.assign({
        signalSeq: seq,
        taskState: appendEvent(
          context.taskState,
          event.event ?? taskEvent(TaskEventType.Signaling, clockNow(system), { details: { signal: event.signal } }),
        ),
      });
      enqueue.spawnChild('driverSignal', {
        id: `signal.${seq}`,
        input: { allocId: context.settings.allocId, task: context.task, hookEnv: context.hookEnv, handle: context.run.handle, signal: event.signal },
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
