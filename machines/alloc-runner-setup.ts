/**
 * The alloc runner's `setup()`: its actors (task runners, alloc hooks), guards and actions, on the shared
 * hook loop, and the bridge from Nomad's task-state reducer to events. The statechart is in alloc-runner.ts.
 */
import { assign, enqueueActions, setup } from 'xstate';
import { assignContext } from './context-assign.ts';
import { withEntry } from './record-copy.ts';
import { spawnCall } from './child-actions.ts';
import { notProvided } from './not-provided.ts';
import { clockNow, sleepUntil } from './clock.ts';
import { childErrorOf, hookActorId } from './hook-calls.ts';
import { currentHook, hookLoopActions, hookLoopGuards, type PhaseParams } from './hook-phase.ts';
import { clientStatusOf, isLive, isPoststop, isSidecar, reduceTaskStates, sameStages } from './task-state-reducer.ts';
import { taskRunnerMachine } from './task-runner.ts';
import { nextChecks } from './alloc-checks.ts';
import { rejectFinished, restartCommand, restartTasks, setDeploymentHealth, signalCommand } from './alloc-runner-commands.ts';
import type { TaskRunnerEvent, TaskRunnerInput } from './task-runner-types.ts';
import { isServerTerminal, type TaskSpec } from './model.ts';
import type { AllocHookCallInput, AllocHookPhase, AllocRunnerContext, AllocRunnerEmitted, AllocRunnerEvent, AllocRunnerInput } from './alloc-runner-types.ts';

function taskSpec(ctx: AllocRunnerContext, name: string): TaskSpec | undefined {
  return ctx.alloc.tasks.find((t) => t.name === name);
}


const live = (ctx: AllocRunnerContext, t: TaskSpec) => isLive(t, { taskStates: ctx.taskStates, restartPending: ctx.taskFlags.restartPending });

/** Whether the tasks one kill step targets are all dead. */
function killStepDone(ctx: AllocRunnerContext, step: 'leader' | 'mains' | 'sidecars'): boolean {
  return ctx.alloc.tasks.filter((t) => inKillStep(t, step)).every((t) => !live(ctx, t));
}

function inKillStep(t: TaskSpec, step: 'leader' | 'mains' | 'sidecars'): boolean {
  if (isPoststop(t)) return false;
  if (step === 'leader') return t.leader === true;
  if (step === 'mains') return !t.leader && !isSidecar(t);
  return !t.leader && isSidecar(t);
}


/**
 * What the alloc spawns its `i`th task's runner with: closed gate, parked when dead, the TaskState the alloc
 * holds for it (the very object: the runner's `taskState` and the alloc's mirror start as one).
 */
export function taskRunnerInputOf(context: AllocRunnerContext, task: TaskSpec, i: number): TaskRunnerInput {
  return {
    allocId: context.alloc.id,
    task,
    jobType: context.alloc.type,
    groupRestart: context.alloc.restart,
    gateOpen: false,
    hooks: context.settings.taskHooks[task.name],
    maxKillTimeout: context.settings.maxKillTimeout,
    seed: context.settings.seed + i,
    parkWhenDead: true,
    taskState: context.taskStates[task.name],
  };
}

const allocRunnerBase = setup({
  types: {
    context: {} as AllocRunnerContext,
    events: {} as AllocRunnerEvent,
    input: {} as AllocRunnerInput,
    emitted: {} as AllocRunnerEmitted,
  },
  actors: {
    taskRunner: taskRunnerMachine,
    /** Calls one alloc hook method; provided by the runtime. */
    allocHook: notProvided<void, AllocHookCallInput>('allocRunnerMachine', 'allocHook', 'createAllocRunner()'),
    sleepUntil,
  },
  guards: {
    isTaskChild: ({ context, event }) => taskSpec(context, event.type.slice('xstate.done.actor.'.length)) !== undefined,
    /**
     * A task runner's news is news to the alloc: its TaskState, a new rejection, its run completing. The runner
     * tells only after a step that changed one of these (task-news.ts), and when it starts from a snapshot the
     * alloc has not heard (a restore); the reducer is a function of them, so an unchanged one would only repeat
     * its last answer. (A runner that detaches reaches the alloc as its done event, `taskDetached`.)
     */
    taskNews: ({ context, event }) => {
      if (event.type !== 'TASK_CHANGED' || !taskSpec(context, event.task)) return false;
      // What the alloc gave a runner is not news: flags not yet mirrored count as 0 and false.
      return (
        context.taskStates[event.task] !== event.taskState ||
        (context.taskFlags.rejections[event.task] ?? 0) !== event.rejections ||
        (context.taskFlags.runComplete[event.task] ?? false) !== event.runComplete
      );
    },
    allTasksComplete: ({ context }) => context.alloc.tasks.every((t) => context.taskFlags.runComplete[t.name]),
    allTasksDetached: ({ context }) => context.alloc.tasks.every((t) => context.taskFlags.detached[t.name]),
    destroyRequested: ({ context }) => context.destroyRequested,
    hasGroupShutdownDelay: ({ context }) => (context.alloc.shutdownDelay ?? 0) > 0,
    killStepDone: ({ context }, p: { step: 'leader' | 'mains' | 'sidecars' }) => killStepDone(context, p.step),
    updateQueued: ({ context }) => context.queuedUpdate !== undefined,
    killing: ({ context }) => context.killing,
    allocStopping: ({ context }) => isServerTerminal(context.alloc),
    restartPending: ({ context }) => context.pendingRestart !== undefined,
    /** A restart, kill or update waits for its region of `running.busy` (running.steady has none of them). */
    runningWorkWaiting: ({ context }) => context.killing || context.pendingRestart !== undefined || context.queuedUpdate !== undefined,
  },
  actions: {
    spawnTasks: enqueueActions(({ enqueue, context }) => {
      context.alloc.tasks.forEach((task, i) => enqueue(spawnCall('taskRunner', { id: task.name, input: taskRunnerInputOf(context, task, i) })));
    }),
    /** Spawns the phase's current alloc hook as `<phase>:<hook>`. */
    callHook: enqueueActions(({ enqueue, context }, p: PhaseParams<AllocHookPhase>) => {
      const name = currentHook(context, p.phase)!;
      enqueue(spawnCall('allocHook', { id: hookActorId(p.phase, name), input: { phase: p.phase, hook: name, alloc: context.alloc } }));
    }),
    recordHookError: assign(({ context, event }, p: PhaseParams<AllocHookPhase>) => ({
      hookErrors: [...context.hookErrors, { phase: p.phase, hook: currentHook(context, p.phase)!, message: childErrorOf(event).message }],
    })),
    /** Nomad's MarkFailedKill on every task: the alloc could not be set up. */
    failSetup: enqueueActions(({ enqueue, context, event }, p: PhaseParams<AllocHookPhase>) => {
      const name = currentHook(context, p.phase)!;
      const reason = `failed to setup alloc: pre-run hook ${JSON.stringify(name)} failed: ${childErrorOf(event).message}`;
      enqueue.assign({
        forcedStatus: 'failed',
        hookErrors: [...context.hookErrors, { phase: p.phase, hook: name, message: childErrorOf(event).message }],
      });
      for (const t of context.alloc.tasks) enqueue.sendTo(t.name, { type: 'FAIL_SETUP', reason } satisfies TaskRunnerEvent);
    }),
    /**
     * Mirrors a child's TaskState, then runs Nomad's task-state reducer and the coordinator. The alloc hears
     * 11 to 14 of these per three-task lifecycle: the flags are copied only where they change, and the one
     * assign names only the fields that do (XState copies the context and then each named field).
     */
    taskChanged: enqueueActions(({ enqueue, context, event, system }) => {
      if (event.type !== 'TASK_CHANGED' || !taskSpec(context, event.task)) return;
      const name = event.task;
      const taskStates = { ...context.taskStates, [name]: event.taskState };
      const flags = context.taskFlags;
      let taskFlags = flags;
      // The runner has shown the restart (no longer dead) or refused it (a new rejection).
      if (flags.restartPending[name] !== undefined && (event.taskState.state !== 'dead' || event.rejections > (flags.rejections[name] ?? 0))) {
        const restartPending = { ...flags.restartPending };
        delete restartPending[name];
        taskFlags = { ...taskFlags, restartPending };
      }
      // (A released task keeps its flag: its release KILL ends its run, and a runner whose run is complete refuses
      // every restart with ErrTaskRunComplete, so it never runs again to be released anew.)
      if (flags.rejections[name] !== event.rejections) taskFlags = { ...taskFlags, rejections: withEntry(flags.rejections, name, event.rejections) };
      if (flags.runComplete[name] !== event.runComplete) taskFlags = { ...taskFlags, runComplete: withEntry(flags.runComplete, name, event.runComplete) };
      const clientStatus = clientStatusOf(taskStates, context.forcedStatus);
      const mirrored = { ...context, taskStates, taskFlags, clientStatus };
      // One assign for the mirror and the reducer's answer: each assign is a new snapshot of the alloc, made from
      // the current one (assignContext: the state value and tags of the parallel `running` are not walked again).
      const update: Partial<AllocRunnerContext> = { taskStates, clientStatus, ...(taskFlags !== flags && { taskFlags }) };
      enqueue(assignContext(Object.assign(update, applyReducer(mirrored, enqueue, clockNow(system)))));
    }),
    taskDetached: assign(({ context, event }) => ({
      taskFlags: { ...context.taskFlags, detached: { ...context.taskFlags.detached, [event.type.slice('xstate.done.actor.'.length)]: true } },
    })),
    killTasks: assign({ killing: true }),
    killStep: enqueueActions(({ enqueue, context }, p: { step: 'leader' | 'mains' | 'sidecars' }) => {
      for (const t of context.alloc.tasks) {
        if (inKillStep(t, p.step) && live(context, t)) enqueue.sendTo(t.name, { type: 'KILL' } satisfies TaskRunnerEvent);
      }
    }),
    armGroupShutdownDelay: assign(({ context, system }) => ({ deadline: clockNow(system) + (context.alloc.shutdownDelay ?? 0) })),
    requestDestroy: assign({ destroyRequested: true }),
    // The checks hook's reports: one line per live check, for the inspector.
    recordCheck: assign(({ context, event }) => ({ checks: nextChecks(context, event) })),
    shutdownTasks: enqueueActions(({ enqueue, context }) => {
      for (const t of context.alloc.tasks) enqueue.sendTo(t.name, { type: 'SHUTDOWN' } satisfies TaskRunnerEvent);
    }),
    queueUpdate: assign(({ context, event }) => {
      if (event.type !== 'UPDATE') return {};
      const queued = context.queuedUpdate;
      const index = event.alloc.modifyIndex;
      // An older update never displaces a newer one (AllocModifyIndex).
      if (queued && (queued.modifyIndex ?? 0) > (index ?? 0)) return {};
      // Nor is one applied after a newer one, or twice: Nomad's client only passes on an alloc whose
      // AllocModifyIndex is above the one it already runs.
      if (index !== undefined && context.alloc.modifyIndex !== undefined && index <= context.alloc.modifyIndex) return {};
      return { queuedUpdate: event.alloc };
    }),
    // An update to another deployment clears the verdict, which was the old one's (Nomad's scheduler sets an
    // allocation it moves to a new deployment DeploymentStatus nil); the health_watcher then watches anew.
    takeUpdate: assign(({ context }) => {
      const alloc = context.queuedUpdate!;
      const moved = alloc.deploymentId !== context.alloc.deploymentId;
      return { alloc, queuedUpdate: undefined, ...(moved && { deploymentStatus: undefined }) };
    }),
    updateTasks: enqueueActions(({ enqueue, context }) => {
      for (const t of context.alloc.tasks) enqueue.sendTo(t.name, { type: 'UPDATE', alloc: context.alloc } satisfies TaskRunnerEvent);
      // Tasks dropped from the alloc get the update too, so they kill themselves (Nomad's TR.Update).
      for (const name of Object.keys(context.taskStates)) {
        if (!taskSpec(context, name)) enqueue.sendTo(name, { type: 'UPDATE', alloc: context.alloc } satisfies TaskRunnerEvent);
      }
    }),
    restart: enqueueActions((args, p: { prerun?: boolean }) => restartCommand(args, p)),
    restartTasks: enqueueActions((args) => restartTasks(args)),
    rejectFinished: enqueueActions((args) => rejectFinished(args)),
    setDeploymentHealth: enqueueActions((args) => setDeploymentHealth(args)),
    /**
     * A server-terminal allocation (desired stop or evict) never starts its tasks: behind closed gates a KILL
     * ends each non-poststop runner without running it, and the ordered kill runs the preKill hooks.
     * Poststop tasks still run once the coordinator opens their gate, as Nomad's do.
     */
    skipRun: enqueueActions(({ enqueue, context }) => {
      enqueue.assign({ killing: true });
      for (const t of context.alloc.tasks) if (!isPoststop(t)) enqueue.sendTo(t.name, { type: 'KILL', quiet: true } satisfies TaskRunnerEvent);
    }),
    /**
     * After a restore the last persisted snapshot may predate a decision the dead agent made (a kill it
     * had begun): run the reducer again, as Nomad's alloc runner does when it starts, and let the tasks
     * re-run their restore hooks.
     */
    restored: enqueueActions(({ enqueue, context, system }) => {
      for (const t of context.alloc.tasks) enqueue.sendTo(t.name, { type: 'RESTORED' } satisfies TaskRunnerEvent);
      // A release KILL in a task's mailbox when the snapshot was taken is not in the snapshot: send it again.
      const { released: _, ...taskFlags } = context.taskFlags;
      enqueue.assign({ taskFlags, ...applyReducer({ ...context, taskFlags }, enqueue, clockNow(system)) });
    }),
    openGates: enqueueActions(({ enqueue, context, system }) => {
      // Every runner was spawned behind a closed gate and none has been opened: the reducer's gate changes
      // from no open stage are exactly the gates to open.
      const enabled = { ...context, gates: { ...context.gates, enabled: true } };
      // assignContext: the alloc's snapshot with its context replaced, not computed again (context-assign.ts).
      enqueue(assignContext({ gates: enabled.gates, ...applyReducer(enabled, enqueue, clockNow(system)) }));
    }),
    signal: enqueueActions((args) => signalCommand(args)),
  },
});

interface Enqueue {
  sendTo(id: string, ev: TaskRunnerEvent): void;
  raise(ev: AllocRunnerEvent): void;
}

/**
 * Runs the reducer and turns its effects into events (kill event, ordered kill, released tasks, gates);
 * returns the context fields it changed, for the caller's one assign.
 */
function applyReducer(ctx: AllocRunnerContext, enqueue: Enqueue, now: number): Partial<AllocRunnerContext> {
  // During prerun the tasks wait behind closed gates; nothing is decided until it is over.
  if (!ctx.gates.enabled) return {};
  const fx = reduceTaskStates({
    tasks: ctx.alloc.tasks,
    taskStates: ctx.taskStates,
    runComplete: ctx.taskFlags.runComplete,
    restartPending: ctx.taskFlags.restartPending,
    killEventSent: ctx.killEventSent,
    killing: ctx.killing,
    coordinator: ctx.gates.coordinator,
    open: ctx.gates.open,
    now,
  });
  const update: Partial<AllocRunnerContext> = {};
  // The coordinator answers with a new `open` list every time; an unchanged one is not a change.
  if (fx.coordinator !== ctx.gates.coordinator || !sameStages(fx.open, ctx.gates.open)) update.gates = { ...ctx.gates, coordinator: fx.coordinator, open: fx.open };
  if (fx.killEvent) {
    update.killEventSent = true;
    for (const name of fx.emitTo) enqueue.sendTo(name, { type: 'EMIT_EVENT', event: fx.killEvent });
  }
  if (fx.startKill) enqueue.raise({ type: 'KILL' });
  const release = fx.release.filter((name) => !ctx.taskFlags.released?.[name]);
  if (release.length > 0) {
    const released = { ...ctx.taskFlags.released };
    for (const name of release) {
      released[name] = true;
      enqueue.sendTo(name, { type: 'KILL' });
    }
    update.taskFlags = { ...ctx.taskFlags, released };
  }
  // Once the alloc is being killed no task may start but the poststop ones: Nomad kills (killTasks) before its
  // coordinator hears of the new task states, so a task still waiting on its gate is killed, never started.
  const stopping = ctx.killing || fx.startKill;
  for (const g of fx.gates) {
    const spec = ctx.alloc.tasks.find((t) => t.name === g.task);
    if (g.open && stopping && spec && !isPoststop(spec)) continue;
    // A dead task never passes its gate again but through a restart of the whole alloc, which closes every
    // gate itself (restartTasks): closing it now would be a message, a step and a snapshot for nothing.
    if (!g.open && ctx.taskStates[g.task]?.state === 'dead' && !ctx.taskFlags.restartPending[g.task]) continue;
    enqueue.sendTo(g.task, { type: 'GATE', open: g.open });
  }
  return update;
}


/** The alloc runner's complete setup: its own actions and the hook loop. */
export const allocRunnerSetup = allocRunnerBase.extend({
  guards: hookLoopGuards,
  actions: hookLoopActions<AllocRunnerContext, AllocRunnerEvent>(),
});
