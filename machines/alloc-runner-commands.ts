/**
 * The alloc runner's commands (Nomad's RestartTask / RestartRunning / RestartAll, Signal, SetHealth) as
 * plain functions over the context, wired into the machine's setup as enqueue actions. A command that does
 * not apply is answered with a `command.rejected` event and a record in context, never dropped.
 */
import { clockNow } from './clock.ts';
import { isServerTerminal, type TaskEvent, type TaskSpec } from './model.ts';
import { appendEvent } from './task-events.ts';
import { isPoststop } from './task-state-reducer.ts';
import type { TaskRunnerEvent } from './task-runner-types.ts';
import type {
  AllocCommandRejection,
  AllocRejectionCode,
  AllocRunnerContext,
  AllocRunnerEmitted,
  AllocRunnerEvent,
} from './alloc-runner-types.ts';

/** What a command may do: change the context, talk to task runners, tell the caller. */
export interface CommandEffects {
  assign(p: Partial<AllocRunnerContext>): void;
  sendTo(id: string, ev: TaskRunnerEvent): void;
  emit(ev: AllocRunnerEmitted): void;
}

/** The arguments XState hands an enqueue action, as far as commands need them. */
export interface CommandArgs {
  context: AllocRunnerContext;
  event: AllocRunnerEvent;
  system: Parameters<typeof clockNow>[0];
  enqueue: CommandEffects;
}

function taskSpec(ctx: AllocRunnerContext, name: string): TaskSpec | undefined {
  return ctx.alloc.tasks.find((t) => t.name === name);
}

/** Records and emits a rejection of `command`. */
export function reject({ context, system, enqueue }: CommandArgs, command: string, code: AllocRejectionCode, message: string): void {
  const rejection: AllocCommandRejection = { command, code, message, time: clockNow(system) };
  enqueue.assign({ rejections: [...context.rejections, rejection] });
  enqueue.emit({ type: 'command.rejected', rejection });
}

const unknownTask = (ctx: AllocRunnerContext, name: string) => `no task named ${JSON.stringify(name)} in allocation ${ctx.alloc.id}`;

/**
 * RESTART while the allocation runs. One task: straight to its runner with the caller's event (Nomad's
 * RestartTask calls no alloc hooks). The running tasks or all tasks: queued for the preTaskRestart hooks,
 * unless the allocation should not run (stopping) or a restart is already under way.
 */
export function restartCommand(args: CommandArgs, opts: { prerun?: boolean } = {}): void {
  const { context, event, enqueue } = args;
  if (event.type !== 'RESTART') return;
  if (event.task !== undefined) {
    if (!taskSpec(context, event.task)) return reject(args, 'RESTART', 'ErrUnknownTask', unknownTask(context, event.task));
    enqueue.sendTo(event.task, { type: 'RESTART', failure: event.failure, ...(event.event && { event: event.event }) });
    return;
  }
  if (context.killing || isServerTerminal(context.alloc)) {
    return reject(args, 'RESTART', 'ErrAllocNotRunning', `restart of an alloc that should not run: allocation ${context.alloc.id} is stopping`);
  }
  if (opts.prerun) {
    return reject(args, 'RESTART', 'ErrTaskNotRunning', `allocation ${context.alloc.id} is still being set up: none of its tasks is running`);
  }
  if (context.pendingRestart) {
    return reject(args, 'RESTART', 'ErrRestartInProgress', `a restart of allocation ${context.alloc.id} is already under way`);
  }
  enqueue.assign({ pendingRestart: { all: event.all === true, failure: event.failure, ...(event.event && { event: event.event }) } });
}

/**
 * The queued restart, once the preTaskRestart hooks ran (Nomad's restartTasks). RestartAll starts the
 * coordinator over and force-restarts every non-poststop task, dead ones included, so they come back in
 * lifecycle order; RestartRunning restarts only the running tasks.
 */
export function restartTasks(args: CommandArgs): void {
  const { context, enqueue } = args;
  const pending = context.pendingRestart;
  if (!pending) return;
  enqueue.assign({ pendingRestart: undefined });
  // The allocation began stopping while the hooks ran.
  if (context.killing || isServerTerminal(context.alloc)) {
    return reject(args, 'RESTART', 'ErrAllocNotRunning', `restart of an alloc that should not run: allocation ${context.alloc.id} is stopping`);
  }
  const restart = (force: boolean): TaskRunnerEvent => ({
    type: 'RESTART',
    failure: pending.failure,
    ...(force && { force: true }),
    ...(pending.event && { event: pending.event }),
  });
  if (pending.all) {
    const restartPending: Record<string, boolean> = {};
    for (const t of context.alloc.tasks) {
      if (!isPoststop(t) && context.taskStates[t.name]!.state === 'dead') restartPending[t.name] = true;
    }
    enqueue.assign({ gates: { ...context.gates, coordinator: 'init', open: [] }, killEventSent: false, taskFlags: { ...context.taskFlags, restartPending } });
    for (const t of context.alloc.tasks) enqueue.sendTo(t.name, { type: 'GATE', open: false });
    for (const t of context.alloc.tasks) if (!isPoststop(t)) enqueue.sendTo(t.name, restart(true));
    return;
  }
  for (const t of context.alloc.tasks) {
    if (context.taskStates[t.name]!.state === 'running') enqueue.sendTo(t.name, restart(false));
  }
}

/** SIGNAL: one task, or every running task. */
export function signalCommand(args: CommandArgs): void {
  const { context, event, enqueue } = args;
  if (event.type !== 'SIGNAL') return;
  if (event.task !== undefined && !taskSpec(context, event.task)) return reject(args, 'SIGNAL', 'ErrUnknownTask', unknownTask(context, event.task));
  for (const t of context.alloc.tasks) {
    if (event.task === undefined ? context.taskStates[t.name]!.state === 'running' : t.name === event.task) {
      enqueue.sendTo(t.name, { type: 'SIGNAL', signal: event.signal, ...(event.event && { event: event.event }) });
    }
  }
}

/** RESTART or SIGNAL once the tasks have run to the end (postrun, terminal, destroying): ErrTaskNotRunning. */
export function rejectFinished(args: CommandArgs): void {
  const { context, event } = args;
  if (event.type !== 'RESTART' && event.type !== 'SIGNAL') return;
  if (event.task !== undefined && !taskSpec(context, event.task)) return reject(args, event.type, 'ErrUnknownTask', unknownTask(context, event.task));
  const which = event.task === undefined ? `the tasks of allocation ${context.alloc.id} are` : `task ${JSON.stringify(event.task)} is`;
  reject(args, event.type, 'ErrTaskNotRunning', `${which} not running: the allocation has finished`);
}

/**
 * The health_watcher's verdict (Nomad's SetHealth): stored once, and each task that held health back gets
 * its Alloc Unhealthy event, through its runner while it lives, straight into the mirror once it finished.
 */
export function setDeploymentHealth(args: CommandArgs): void {
  const { context, event, enqueue } = args;
  if (event.type !== 'DEPLOYMENT_HEALTH' || context.deploymentStatus) return;
  let taskStates = context.taskStates;
  for (const [name, ev] of Object.entries(event.taskEvents ?? {}) as [string, TaskEvent][]) {
    if (!taskSpec(context, name)) continue;
    if (context.taskFlags.runComplete[name]) taskStates = { ...taskStates, [name]: appendEvent(taskStates[name]!, ev) };
    else enqueue.sendTo(name, { type: 'EMIT_EVENT', event: ev });
  }
  enqueue.assign({ deploymentStatus: { ...event.status }, taskStates });
}
