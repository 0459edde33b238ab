/**
 * The alloc runner: Nomad's allocrunner Run loop as a statechart. One task-runner child per task (id =
 * task name), opened in lifecycle order by the coordinator's gates; alloc hooks as child actors named
 * `<phase>:<hook>`; the task-state reducer (sibling failed, leader dead, main tasks dead) and the ordered
 * kill (preKill hooks → group shutdown_delay → leader → other mains → sidecars; poststop tasks after).
 *
 *   prerun (prerun hooks) → running (tasks ∥ kill ∥ updates) → postrun (all hooks, errors aggregated)
 *   → terminal → destroying → destroyed;  SHUTDOWN → detaching (tasks left running) → detached.
 */
import { assign, enqueueActions, setup, type ActorRefFrom } from 'xstate';
import { notProvided } from './not-provided.ts';
import { clockNow, sleepUntil } from './clock.ts';
import { isTaskAllowed, type CoordinatorState, type Stage } from './coordinator.ts';
import { childErrorOf, hookActorId, type HookPlan } from './hook-calls.ts';
import { newTaskState } from './task-events.ts';
import { isLive, isPoststop, isSidecar, reduceTaskStates } from './task-state-reducer.ts';
import { taskRunnerMachine, type TaskRunnerContext, type TaskRunnerEvent } from './task-runner.ts';
import type { AllocSpec, AllocState, ClientStatus, TaskSpec, TaskState } from './types.ts';

/** Nomad's alloc runner hook phases (interfaces/runner_lifecycle.go). */
export type AllocHookPhase = 'prerun' | 'preKill' | 'postrun' | 'destroy' | 'update' | 'preTaskRestart' | 'shutdown';

export type AllocHookPlan = Partial<Record<AllocHookPhase, string[]>>;

export interface AllocHookCallInput {
  phase: AllocHookPhase;
  hook: string;
  alloc: AllocSpec;
}

export interface AllocRunnerInput {
  alloc: AllocSpec;
  hooks?: AllocHookPlan;
  /** Task hook plans per task name (which task hooks implement which phase). */
  taskHooks?: Record<string, HookPlan>;
  maxKillTimeout?: number;
  seed?: number;
}

/** A restart or signal the alloc could not apply, answered instead of dropped. */
export interface AllocCommandRejection {
  command: string;
  message: string;
  time: number;
}

export interface AllocRunnerContext {
  alloc: AllocSpec;
  hooks: AllocHookPlan;
  taskHooks: Record<string, HookPlan>;
  maxKillTimeout?: number;
  seed: number;
  taskStates: Record<string, TaskState>;
  /** Dead tasks sent a force restart that their runner has not shown yet; they count as live. */
  restartPending: Record<string, boolean>;
  /** How many rejections each task runner has recorded, to notice a refused restart. */
  taskRejections: Record<string, number>;
  /** Tasks whose runner has finished for good (stop hooks ran). */
  runComplete: Record<string, boolean>;
  /** Tasks whose runner detached on SHUTDOWN. */
  detached: Record<string, boolean>;
  coordinator: CoordinatorState;
  open: Stage[];
  /** Prerun is over: the coordinator may open gates. */
  gatesEnabled: boolean;
  cursor: Partial<Record<AllocHookPhase, number>>;
  clientStatus: ClientStatus;
  /** Nomad's forced client status (a prerun failure). */
  forcedStatus?: ClientStatus;
  /** The reducer's kill event has been sent (it fires once). */
  killEventSent: boolean;
  /** killTasks is under way or done; no second ordered kill. */
  killing: boolean;
  destroyRequested: boolean;
  hookErrors: { phase: AllocHookPhase; hook: string; message: string }[];
  /** The one-slot update queue: only the newest pending update is kept. */
  queuedUpdate?: AllocSpec;
  deadline?: number;
  rejections: AllocCommandRejection[];
}

export type AllocRunnerEvent =
  | { type: 'UPDATE'; alloc: AllocSpec }
  | { type: 'KILL' }
  | { type: 'RESTART'; task?: string; all?: boolean; failure?: boolean }
  | { type: 'SIGNAL'; task?: string; signal: string }
  | { type: 'SHUTDOWN' }
  | { type: 'DESTROY' }
  | { type: `xstate.snapshot.${string}`; snapshot: { context: TaskRunnerContext; status: string; value: unknown } }
  | { type: `xstate.done.actor.${string}`; output?: unknown }
  | { type: `xstate.error.actor.${string}`; error?: unknown };

export type AllocRunnerEmitted = { type: 'command.rejected'; rejection: AllocCommandRejection };

function taskSpec(ctx: AllocRunnerContext, name: string): TaskSpec | undefined {
  return ctx.alloc.tasks.find((t) => t.name === name);
}

/** Nomad's client status from task states (alloc_runner.go getClientStatus). */
export function clientStatusOf(taskStates: Record<string, TaskState>, forced?: ClientStatus): ClientStatus {
  if (forced) return forced;
  const states = Object.values(taskStates);
  if (states.some((s) => s.state === 'dead' && s.failed)) return 'failed';
  if (states.some((s) => s.state === 'running')) return 'running';
  if (states.some((s) => s.state === 'pending')) return 'pending';
  return 'complete';
}

function currentHook(ctx: AllocRunnerContext, phase: AllocHookPhase): string | undefined {
  return ctx.hooks[phase]?.[ctx.cursor[phase] ?? 0];
}

const live = (ctx: AllocRunnerContext, t: TaskSpec) => isLive(t, ctx);

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

const allocSetup = setup({
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
    phaseComplete: ({ context }, p: { phase: AllocHookPhase }) => currentHook(context, p.phase) === undefined,
    isCurrentHook: ({ context, event }, p: { phase: AllocHookPhase }) => {
      const name = currentHook(context, p.phase);
      if (!name) return false;
      const id = hookActorId(p.phase, name);
      return event.type === `xstate.done.actor.${id}` || event.type === `xstate.error.actor.${id}`;
    },
    isTaskChild: ({ context, event }) => taskSpec(context, event.type.slice('xstate.done.actor.'.length)) !== undefined,
    allTasksComplete: ({ context }) => context.alloc.tasks.every((t) => context.runComplete[t.name]),
    allTasksDetached: ({ context }) => context.alloc.tasks.every((t) => context.detached[t.name]),
    destroyRequested: ({ context }) => context.destroyRequested,
    hasGroupShutdownDelay: ({ context }) => (context.alloc.shutdownDelay ?? 0) > 0,
    killStepDone: ({ context }, p: { step: 'leader' | 'mains' | 'sidecars' }) => killStepDone(context, p.step),
    updateQueued: ({ context }) => context.queuedUpdate !== undefined,
    killing: ({ context }) => context.killing,
  },
  actions: {
    spawnTasks: enqueueActions(({ enqueue, context }) => {
      context.alloc.tasks.forEach((task, i) => {
        enqueue.spawnChild('taskRunner', {
          id: task.name,
          syncSnapshot: true,
          input: {
            allocId: context.alloc.id,
            task,
            jobType: context.alloc.type,
            groupRestart: context.alloc.restart,
            gateOpen: false,
            hooks: context.taskHooks[task.name],
            maxKillTimeout: context.maxKillTimeout,
            seed: context.seed + i,
            parkWhenDead: true,
            taskState: context.taskStates[task.name],
          },
        });
      });
    }),
    resetCursor: assign(({ context }, p: { phase: AllocHookPhase }) => ({ cursor: { ...context.cursor, [p.phase]: 0 } })),
    advanceCursor: assign(({ context }, p: { phase: AllocHookPhase }) => ({ cursor: { ...context.cursor, [p.phase]: (context.cursor[p.phase] ?? 0) + 1 } })),
    callHook: enqueueActions(({ enqueue, context }, p: { phase: AllocHookPhase }) => {
      const name = currentHook(context, p.phase)!;
      enqueue.spawnChild('allocHook', { id: hookActorId(p.phase, name), input: { phase: p.phase, hook: name, alloc: context.alloc } });
    }),
    stopHook: enqueueActions(({ enqueue, context }, p: { phase: AllocHookPhase }) => {
      const name = currentHook(context, p.phase);
      if (name) enqueue.stopChild(hookActorId(p.phase, name));
    }),
    recordHookError: assign(({ context, event }, p: { phase: AllocHookPhase }) => ({
      hookErrors: [...context.hookErrors, { phase: p.phase, hook: currentHook(context, p.phase)!, message: childErrorOf(event).message }],
    })),
    /** Nomad's MarkFailedKill on every task: the alloc could not be set up. */
    failSetup: enqueueActions(({ enqueue, context, event }) => {
      const name = currentHook(context, 'prerun')!;
      const reason = `failed to setup alloc: pre-run hook ${JSON.stringify(name)} failed: ${childErrorOf(event).message}`;
      enqueue.assign({
        forcedStatus: 'failed',
        hookErrors: [...context.hookErrors, { phase: 'prerun', hook: name, message: childErrorOf(event).message }],
      });
      for (const t of context.alloc.tasks) enqueue.sendTo(t.name, { type: 'FAIL_SETUP', reason } satisfies TaskRunnerEvent);
    }),
    /** Mirrors a child's TaskState, then runs Nomad's task-state reducer and the coordinator. */
    taskChanged: enqueueActions(({ enqueue, context, event, system }) => {
      const name = event.type.slice('xstate.snapshot.'.length);
      const snap = (event as { snapshot: { context: TaskRunnerContext; status: string } }).snapshot;
      if (!taskSpec(context, name)) return;
      const tc = snap.context;
      const taskStates = { ...context.taskStates, [name]: tc.taskState };
      const restartPending = { ...context.restartPending };
      // The runner has shown the restart (no longer dead) or refused it (a new rejection).
      if (tc.taskState.state !== 'dead' || tc.rejections.length > (context.taskRejections[name] ?? 0)) delete restartPending[name];
      const next: AllocRunnerContext = {
        ...context,
        taskStates,
        restartPending,
        taskRejections: { ...context.taskRejections, [name]: tc.rejections.length },
        runComplete: { ...context.runComplete, [name]: tc.runComplete },
        detached: { ...context.detached, [name]: snap.status === 'done' && !tc.runComplete },
      };
      next.clientStatus = clientStatusOf(taskStates, next.forcedStatus);
      enqueue.assign(next);
      applyReducer(next, enqueue, clockNow(system));
    }),
    taskDetached: assign(({ context, event }) => ({
      detached: { ...context.detached, [event.type.slice('xstate.done.actor.'.length)]: true },
    })),
    killTasks: assign({ killing: true }),
    killStep: enqueueActions(({ enqueue, context }, p: { step: 'leader' | 'mains' | 'sidecars' }) => {
      for (const t of context.alloc.tasks) {
        if (inKillStep(t, p.step) && live(context, t)) enqueue.sendTo(t.name, { type: 'KILL' } satisfies TaskRunnerEvent);
      }
    }),
    armGroupShutdownDelay: assign(({ context, system }) => ({ deadline: clockNow(system) + (context.alloc.shutdownDelay ?? 0) })),
    requestDestroy: assign({ destroyRequested: true }),
    shutdownTasks: enqueueActions(({ enqueue, context }) => {
      for (const t of context.alloc.tasks) enqueue.sendTo(t.name, { type: 'SHUTDOWN' } satisfies TaskRunnerEvent);
    }),
    queueUpdate: assign(({ context, event }) => {
      if (event.type !== 'UPDATE') return {};
      const queued = context.queuedUpdate;
      // An older update never displaces a newer one (AllocModifyIndex).
      if (queued && (queued.modifyIndex ?? 0) > (event.alloc.modifyIndex ?? 0)) return {};
      return { queuedUpdate: event.alloc };
    }),
    takeUpdate: assign(({ context }) => ({ alloc: context.queuedUpdate!, queuedUpdate: undefined })),
    updateTasks: enqueueActions(({ enqueue, context }) => {
      for (const t of context.alloc.tasks) enqueue.sendTo(t.name, { type: 'UPDATE', alloc: context.alloc } satisfies TaskRunnerEvent);
      // Tasks dropped from the alloc get the update too, so they kill themselves (Nomad's TR.Update).
      for (const name of Object.keys(context.taskStates)) {
        if (!taskSpec(context, name)) enqueue.sendTo(name, { type: 'UPDATE', alloc: context.alloc } satisfies TaskRunnerEvent);
      }
    }),
    restart: enqueueActions(({ enqueue, context, event, system }) => {
      if (event.type !== 'RESTART') return;
      const reject = (message: string) => {
        const rejection = { command: 'RESTART', message, time: clockNow(system) };
        enqueue.assign({ rejections: [...context.rejections, rejection] });
        enqueue.emit({ type: 'command.rejected', rejection });
      };
      if (event.task !== undefined) {
        if (!taskSpec(context, event.task)) return reject(`no task named ${JSON.stringify(event.task)} in allocation ${context.alloc.id}`);
        enqueue.sendTo(event.task, { type: 'RESTART', failure: event.failure } satisfies TaskRunnerEvent);
        return;
      }
      if (context.killing || context.alloc.desiredStatus === 'stop') return reject(`allocation ${context.alloc.id} is stopping; it cannot be restarted`);
      if (event.all) {
        // RestartAll: the coordinator starts over, so tasks come back in lifecycle order.
        const restartPending: Record<string, boolean> = {};
        for (const t of context.alloc.tasks) {
          if (!isPoststop(t) && context.taskStates[t.name]!.state === 'dead') restartPending[t.name] = true;
        }
        enqueue.assign({ coordinator: 'init', open: [], killEventSent: false, restartPending });
        for (const t of context.alloc.tasks) enqueue.sendTo(t.name, { type: 'GATE', open: false } satisfies TaskRunnerEvent);
        for (const t of context.alloc.tasks) {
          if (!isPoststop(t)) enqueue.sendTo(t.name, { type: 'RESTART', force: true, failure: event.failure } satisfies TaskRunnerEvent);
        }
        return;
      }
      for (const t of context.alloc.tasks) {
        if (context.taskStates[t.name]!.state === 'running') enqueue.sendTo(t.name, { type: 'RESTART', failure: event.failure } satisfies TaskRunnerEvent);
      }
    }),
    openGates: enqueueActions(({ enqueue, context, system }) => {
      enqueue.assign({ gatesEnabled: true });
      applyReducer({ ...context, gatesEnabled: true }, enqueue, clockNow(system), { gatesOnly: true });
      applyReducer({ ...context, gatesEnabled: true }, enqueue, clockNow(system));
    }),
    signal: enqueueActions(({ enqueue, context, event, system }) => {
      if (event.type !== 'SIGNAL') return;
      if (event.task !== undefined && !taskSpec(context, event.task)) {
        const rejection = { command: 'SIGNAL', message: `no task named ${JSON.stringify(event.task)} in allocation ${context.alloc.id}`, time: clockNow(system) };
        enqueue.assign({ rejections: [...context.rejections, rejection] });
        enqueue.emit({ type: 'command.rejected', rejection });
        return;
      }
      for (const t of context.alloc.tasks) {
        if (event.task === undefined ? context.taskStates[t.name]!.state === 'running' : t.name === event.task) {
          enqueue.sendTo(t.name, { type: 'SIGNAL', signal: event.signal } satisfies TaskRunnerEvent);
        }
      }
    }),
  },
});

interface Enqueue {
  assign(p: Partial<AllocRunnerContext>): void;
  sendTo(id: string, ev: TaskRunnerEvent): void;
  raise(ev: AllocRunnerEvent): void;
}

/** Runs the reducer and turns its effects into events: kill event, ordered kill, released tasks, gates. */
function applyReducer(ctx: AllocRunnerContext, enqueue: Enqueue, now: number, opts: { gatesOnly?: boolean } = {}): void {
  // During prerun the tasks wait behind closed gates; nothing is decided until it is over.
  if (!ctx.gatesEnabled && !opts.gatesOnly) return;
  const fx = reduceTaskStates({ ...ctx, tasks: ctx.alloc.tasks, now });
  enqueue.assign({ coordinator: fx.coordinator, open: fx.open });
  if (opts.gatesOnly) {
    for (const t of ctx.alloc.tasks) {
      enqueue.sendTo(t.name, { type: 'GATE', open: isTaskAllowed(fx.open, t.lifecycle) });
    }
    return;
  }
  if (fx.killEvent) {
    enqueue.assign({ killEventSent: true });
    for (const name of fx.emitTo) enqueue.sendTo(name, { type: 'EMIT_EVENT', event: fx.killEvent });
  }
  if (fx.startKill) enqueue.raise({ type: 'KILL' });
  for (const name of fx.release) enqueue.sendTo(name, { type: 'KILL' });
  for (const g of fx.gates) enqueue.sendTo(g.task, { type: 'GATE', open: g.open });
}

/** One alloc hook phase, hooks called in order as `<phase>:<hook>` children; errors recorded, all run. */
function allocHookPhase(phase: AllocHookPhase, next: string, opts: { failFast?: boolean } = {}) {
  // Prerun stops at the first error and fails every task; every other phase runs all hooks.
  const onError = opts.failFast
    ? { guard: { type: 'isCurrentHook' as const, params: { phase } }, actions: 'failSetup' as const, target: next }
    : {
        guard: { type: 'isCurrentHook' as const, params: { phase } },
        actions: [{ type: 'recordHookError' as const, params: { phase } }, { type: 'advanceCursor' as const, params: { phase } }],
        target: 'next',
      };
  return allocSetup.createStateConfig({
    initial: 'next',
    entry: { type: 'resetCursor', params: { phase } },
    states: {
      next: {
        always: [{ guard: { type: 'phaseComplete', params: { phase } }, target: next }, { target: 'calling' }],
      },
      calling: {
        entry: { type: 'callHook', params: { phase } },
        exit: { type: 'stopHook', params: { phase } },
        on: {
          'xstate.done.actor.*': {
            guard: { type: 'isCurrentHook', params: { phase } },
            actions: { type: 'advanceCursor', params: { phase } },
            target: 'next',
          },
          'xstate.error.actor.*': onError,
        },
      },
    },
  });
}

export const allocRunnerMachine = allocSetup.createMachine({
  id: 'alloc',
  context: ({ input, self }) => {
    const now = clockNow(self.system);
    const taskStates: Record<string, TaskState> = {};
    for (const t of input.alloc.tasks) taskStates[t.name] = newTaskState(now);
    const ctx: AllocRunnerContext = {
      alloc: input.alloc,
      hooks: input.hooks ?? {},
      taskHooks: input.taskHooks ?? {},
      maxKillTimeout: input.maxKillTimeout,
      seed: input.seed ?? 1,
      taskStates,
      restartPending: {},
      taskRejections: {},
      runComplete: {},
      detached: {},
      coordinator: 'init',
      open: [],
      gatesEnabled: false,
      cursor: {},
      clientStatus: 'pending',
      killEventSent: false,
      killing: false,
      destroyRequested: false,
      hookErrors: [],
      rejections: [],
    };
    return ctx;
  },
  entry: 'spawnTasks',
  initial: 'prerun',
  on: {
    'xstate.snapshot.*': { actions: 'taskChanged' },
    // A task runner that detached (SHUTDOWN) finishes as an actor; its last snapshot comes as a done event.
    'xstate.done.actor.*': { guard: 'isTaskChild', actions: 'taskDetached' },
    SHUTDOWN: '.detaching',
    SIGNAL: { actions: 'signal' },
  },
  states: {
    prerun: {
      ...allocHookPhase('prerun', '#alloc.running', { failFast: true }),
      on: {
        KILL: { actions: 'killTasks' },
        DESTROY: { actions: ['requestDestroy', 'killTasks'] },
        UPDATE: { actions: 'queueUpdate' },
        RESTART: { actions: 'restart' },
      },
    },
    running: {
      type: 'parallel',
      entry: 'openGates',
      always: { guard: 'allTasksComplete', target: 'postrun' },
      on: {
        KILL: { actions: 'killTasks' },
        DESTROY: { actions: ['requestDestroy', 'killTasks'] },
        UPDATE: { actions: 'queueUpdate' },
        RESTART: { actions: 'restart' },
      },
      states: {
        kill: {
          initial: 'idle',
          states: {
            idle: { always: { guard: 'killing', target: 'preKill' } },
            preKill: allocHookPhase('preKill', '#alloc.running.kill.groupShutdownDelay'),
            groupShutdownDelay: {
              always: [{ guard: 'hasGroupShutdownDelay', target: 'waitingShutdownDelay' }, { target: 'leader' }],
            },
            waitingShutdownDelay: {
              entry: 'armGroupShutdownDelay',
              invoke: { id: 'groupShutdownDelay', src: 'sleepUntil', input: ({ context }) => ({ until: context.deadline ?? 0 }), onDone: 'leader', onError: 'leader' },
            },
            leader: {
              entry: { type: 'killStep', params: { step: 'leader' } },
              always: { guard: { type: 'killStepDone', params: { step: 'leader' } }, target: 'mains' },
            },
            mains: {
              entry: { type: 'killStep', params: { step: 'mains' } },
              always: { guard: { type: 'killStepDone', params: { step: 'mains' } }, target: 'sidecars' },
            },
            sidecars: {
              entry: { type: 'killStep', params: { step: 'sidecars' } },
              always: { guard: { type: 'killStepDone', params: { step: 'sidecars' } }, target: 'done' },
            },
            done: {},
          },
        },
        updates: {
          initial: 'idle',
          states: {
            idle: { always: { guard: 'updateQueued', target: 'updating' } },
            updating: {
              entry: 'takeUpdate',
              initial: 'hooks',
              states: {
                hooks: allocHookPhase('update', '#alloc.running.updates.updating.tasks'),
                tasks: {
                  entry: 'updateTasks',
                  always: [
                    { guard: ({ context }) => context.alloc.desiredStatus === 'stop', target: '#alloc.running.updates.idle', actions: 'killTasks' },
                    { target: '#alloc.running.updates.idle' },
                  ],
                },
              },
            },
          },
        },
      },
    },
    postrun: allocHookPhase('postrun', '#alloc.terminal'),
    terminal: {
      always: { guard: 'destroyRequested', target: 'destroying' },
      on: { DESTROY: 'destroying' },
    },
    destroying: allocHookPhase('destroy', '#alloc.destroyed'),
    destroyed: { type: 'final' },
    detaching: {
      entry: 'shutdownTasks',
      initial: 'tasks',
      on: { SHUTDOWN: {} },
      states: {
        tasks: { always: { guard: 'allTasksDetached', target: 'hooks' } },
        hooks: allocHookPhase('shutdown', '#alloc.detached'),
      },
    },
    detached: { type: 'final', on: { SHUTDOWN: {} } },
  },
});

export type AllocRunnerActor = ActorRefFrom<typeof allocRunnerMachine>;

/** The alloc's reported state, from the machine's context. */
export function allocStateOf(ctx: AllocRunnerContext): AllocState {
  return { clientStatus: ctx.clientStatus, taskStates: ctx.taskStates };
}

