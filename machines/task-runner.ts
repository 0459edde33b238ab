/**
 * The task runner: Nomad's task lifecycle (taskrunner/task_runner.go, the Run loop) as a statechart.
 * Each box below is a state id (`#task.<path>`); [hooks: x] is a hook phase (machines/hook-phase.ts), one
 * child actor `x:<hook>` per hook, folded into one box by `allocrun graph task`.
 *
 *   ┌ pending ─────────────────────────────────────────────────────────────────────────┐
 *   │  gate ──GATE open──▶ prestart [hooks: prestart] ──▶ starting (driver:start)       │
 *   │  (restored, not started) ──KILL──▶ reaping (driver:reap) ──▶ terminal              │
 *   │   ▲                          │ hook error                   │ error     │ started │
 *   │   └──── restartDelay ◀──┐    ▼                              ▼           │         │
 *   └─────────────────────────┼── (to exited.deciding) ◀──────────┘           │         │
 *                             │                                                ▼         │
 *   ┌ running ─ driver:wait: ONE wait for the workload's whole life (Nomad's WAIT block) ┐
 *   │  active (parallel)                          killing                                │
 *   │   ├ poststart [hooks: poststart] → done      preKill [hooks: preKilling]           │
 *   │   └ updates: idle ⇄ updating [hooks: update]  → shutdownDelay → waitingShutdownDelay│
 *   │  active ──KILL / RESTART / FAIL_SETUP──▶      → signalling (driver:shutdown, timer)  │
 *   │                                               → forceKilling (driver:terminate)     │
 *   │                                               → awaitingExit                        │
 *   └── driver:wait done (exit) or error (workload lost) ─────────────────────────────────┘
 *                             │                                  ▼
 *   ┌ exited ─────────────────┼───────────────────────────────────────────────────────────┐
 *   │  hooks [hooks: exited] ──▶ deciding (restart tracker)                               │
 *   │     restart ──▶ pending.restartDelay     none ──▶ pending.gate                       │
 *   │     killed / notRestarting / terminated ──▶ terminal                                 │
 *   └─────────────────────────────────────────────────────────────────────────────────────┘
 *   ┌ terminal (TaskState dead) ──────────────────────────────────────────────────────────┐
 *   │  parked ──(killed, poststop, or standalone)──▶ stopping [hooks: stop] ──▶ stopped ◉  │
 *   │  (a decision for such a task goes on to stopping at once, past parked: one microstep)│
 *   │  parked ──RESTART force (alloc's restart-all)──▶ pending.gate                        │
 *   └─────────────────────────────────────────────────────────────────────────────────────┘
 *   SHUTDOWN from anywhere ──▶ detaching [hooks: shutdown] ──▶ detached ◉ (workload left running)
 *
 * The restart path: the workload exits (or its start fails) → exited.hooks → deciding asks the pure
 * restart tracker; a restart appends `Restarting` and arms an absolute deadline, then waits in
 * pending.restartDelay (a durable `sleepUntil`, so it survives a restore where `after` would not) and goes
 * back through the gate: prestart hooks that reported Done are skipped, their env re-applied.
 * Resumed from a snapshot in prestart or starting (RESTORED), the prestart hooks run again from the first
 * (Done ones skipped) before the start, as Nomad's restored runner without a handle does.
 * A KILL while pending needs no driver call; while starting it is honoured as soon as the workload runs.
 *
 * This file says only what happens when. Types: task-runner-types.ts; guards and hook calls:
 * task-runner-setup.ts; lifecycle actions: task-runner-actions.ts; the runtime provides the actors.
 */
import type { ActorRefFrom } from 'xstate';
import { clockNow } from './clock.ts';
import { hookPhase, skipEmptyPhase, type PassesMeta } from './hook-phase.ts';
import type { TaskHookPhase } from './hook-calls.ts';
import { newTaskState } from './task-events.ts';
import { newRestartTracker } from './restart-tracker.ts';
import { DEFAULT_KILL_SIGNAL, DEFAULT_MAX_KILL_TIMEOUT, defaultRestartPolicy, killTimeoutOf } from './model.ts';
import { taskRunnerSetup } from './task-runner-actions.ts';
import type { TaskRunnerContext } from './task-runner-types.ts';
import { driverInput, startInput } from './driver-inputs.ts';
import { tellingParentOfNews } from './task-news.ts';

type Entry = 'taskSetup' | 'takeUpdate' | 'markRunComplete';

/** A task hook phase: errors are recorded and the next hook runs, except prestart's, which fail the start. */
function taskHooks(phase: TaskHookPhase, next: string, entry: Entry[] = []) {
  const prestart = phase === 'prestart';
  return hookPhase(phase, next, {
    call: 'callHook',
    onDone: ['applyHookOutput'],
    onDoneAdvances: true,
    onError: prestart ? { actions: ['failPrestart'], target: '#task.exited.deciding' } : { actions: ['recordHookError'] },
    skip: prestart ? { guard: 'hookAlreadyDone', actions: ['reapplyDoneHook'] } : undefined,
    entry,
  });
}

/**
 * Nomad's RestoreState for a task resumed while running: prestart hooks not Done run again (Done ones only
 * re-apply their env), then `next` (the poststart hooks). The workload is running, so a prestart error is
 * recorded, never a failed start.
 */
function restoreHooks(next: string) {
  return hookPhase('prestart', next, {
    call: 'callHook',
    onDone: ['applyHookOutput'],
    onDoneAdvances: true,
    onError: { actions: ['recordHookError'] },
    skip: { guard: 'hookAlreadyDone', actions: ['reapplyDoneHook'] },
  });
}

// The phases a lifecycle enters every time, gone around when the plan has no hooks for them (hook-phase.ts).
// Each names where its state is, where it ends and its entry actions, as its `taskHooks(...)` below does.
const intoPrestart = skipEmptyPhase('prestart', '#task.pending.prestart', '#task.pending.starting', ['taskSetup'], { skip: 'hookAlreadyDone' });
const intoPoststart = skipEmptyPhase('poststart', '#task.running.active.poststart.hooks', '#task.running.active.poststart.done');
const intoExited = skipEmptyPhase('exited', '#task.exited.hooks', '#task.exited.deciding');
const intoStop = skipEmptyPhase('stop', '#task.terminal.stopping', '#task.terminal.stopped', ['markRunComplete']);
// Every kill of a running task enters preKill (P2: a kill per task), so it is gone around too.
const intoPreKill = skipEmptyPhase('preKilling', '#task.running.killing.preKill', '#task.running.killing.shutdownDelay');

/**
 * A decision that ends the task (killed, not restarting, terminated) for a task that leaves the park (killed,
 * poststop, or standalone: `leavesPark`): straight on to the stop hooks from `deciding`, as `parked`'s `always`
 * would have taken it in the next microstep (one microstep and snapshot fewer per such task: each kill's
 * tasks, every lifecycle's poststop task). `terminal`'s entry (markDead) still runs on the way. Its edges are
 * marked `passes` (the parked state), and the walker draws each as the edge to `terminal` written after it
 * and `parked`'s way on, so the picture is the one without them.
 */
function stopsAtOnce(kind: 'killed' | 'notRestarting' | 'terminated', actions?: 'recordKilled' | 'recordNotRestarting') {
  const meta: PassesMeta = { passes: 'task.terminal.parked' };
  return intoStop({ guard: { type: 'decidedLeavingPark', params: { kind } }, target: '#task.terminal.stopping', ...(actions && { actions }) }).map((t) => ({
    ...t,
    meta: { ...(t as { meta?: object }).meta, ...meta },
  }));
}

const rejectNotRunning = (why: string) => ({ actions: { type: 'reject' as const, params: { code: 'ErrTaskNotRunning' as const, why } } });

/** Nomad's task runner as a statechart; provide its driver and hook actors (`createTaskRunner` does). */
const taskRunnerMachineDefinition = taskRunnerSetup.createMachine({
  id: 'task',
  context: ({ input, self }) => {
    const now = clockNow(self.system);
    return {
      settings: {
        allocId: input.allocId,
        jobType: input.jobType,
        restartPolicy: input.task.restart ?? input.groupRestart ?? defaultRestartPolicy(input.jobType),
        maxKillTimeout: input.maxKillTimeout ?? DEFAULT_MAX_KILL_TIMEOUT,
        parkWhenDead: input.parkWhenDead ?? true,
      },
      task: input.task,
      hooks: input.hooks ?? {},
      taskState: input.taskState ?? newTaskState(now),
      restarts: { tracker: newRestartTracker(now), seed: input.seed ?? 1 },
      run: { attempt: 0 },
      updates: { queued: false },
      gateOpen: input.gateOpen ?? true,
      killRequested: false,
      hookStates: {},
      hookEnv: {},
      cursor: {},
      setupDone: false,
      runComplete: false,
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
    // Resumed from a snapshot anywhere but starting or running (both know their workload): the dead agent
    // may have started the task again after its last save. See TaskRun.restoredBeforeStart.
    RESTORED: { actions: 'markRestoredBeforeStart' },
    'xstate.done.actor.signal.*': { actions: 'signalSettled' },
    'xstate.error.actor.signal.*': { actions: 'signalSettled' },
  },
  states: {
    pending: {
      initial: 'gate',
      on: {
        // Outside WAIT a kill needs no driver call: the task goes dead with no Terminated/Killed. Unless
        // resumed from a snapshot that may predate a start: that start's workload is stopped first.
        KILL: [
          { guard: 'mayHaveUnrecordedStart', target: '.reaping', actions: 'beginKill' },
          { target: 'terminal', actions: 'beginKill' },
        ],
        FAIL_SETUP: [
          { guard: 'mayHaveUnrecordedStart', target: '.reaping', actions: 'failSetup' },
          { target: 'terminal', actions: 'failSetup' },
        ],
        RESTART: rejectNotRunning('the task is not running'),
        SIGNAL: rejectNotRunning('the task is not running'),
      },
      states: {
        gate: {
          always: intoPrestart({ guard: 'gateOpen', target: '#task.pending.prestart' }),
          // The GATE that opens a waiting gate enters the start in its own microstep, not in a second one
          // for the `always` above (each is a machine snapshot and a scan of the eventless transitions).
          on: { GATE: [...intoPrestart({ guard: 'opensGate', target: '#task.pending.prestart', actions: 'setGate' }), { actions: 'setGate' }] },
        },
        prestart: {
          ...taskHooks('prestart', '#task.pending.starting', ['taskSetup']),
          // Resumed part-way through: Nomad's prestart after a restore goes through every hook from the first,
          // skipping only the Done ones (what a hook made before the agent died may be stale: a template).
          on: { RESTORED: { target: '#task.pending.prestart', reenter: true, actions: 'markRestoredBeforeStart' } },
        },
        starting: {
          // Each start has its own number; a start re-run after a crash keeps it (see the driver's intent files).
          entry: 'countStartAttempt',
          invoke: {
            id: 'driver:start',
            src: 'driverStart',
            input: startInput,
            onDone: [
              // A kill that arrived while the driver was starting is honoured once the workload runs.
              ...intoPreKill({ guard: 'killRequested', target: '#task.running.killing', actions: 'markStarted' }),
              ...intoPoststart({ target: '#task.running', actions: 'markStarted' }),
            ],
            onError: { target: '#task.exited.deciding', actions: 'recordDriverFailure' },
          },
          on: {
            KILL: { actions: 'beginKill' },
            FAIL_SETUP: { actions: 'failSetup' },
            // Resumed before the start was saved: Nomad has no handle then, so it runs the prestart hooks not
            // Done again before starting (a template renders what changed while no agent ran). The start is
            // rewound, not repeated: the next one has the same attempt, so it still finds a workload the dead
            // agent's start spawned, and a kill meanwhile stops that workload (reaping).
            RESTORED: [{ guard: 'killRequested' }, { target: '#task.pending.prestart', actions: 'rewindStart' }],
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
        // Killed after a restore before any start: the start the dead agent may have made after its last
        // save (attempt + 1) is looked up and its workload stopped before the task is dead (and poststop runs).
        reaping: {
          invoke: {
            id: 'driver:reap',
            src: 'driverReap',
            input: (args) => ({
              ...driverInput(args),
              attempt: args.context.run.attempt + 1,
              signal: args.context.task.killSignal ?? DEFAULT_KILL_SIGNAL,
              timeout: killTimeoutOf(args.context.task, args.context.settings.maxKillTimeout),
            }),
            onDone: [{ guard: 'reapedWorkload', target: '#task.terminal', actions: 'recordReaped' }, { target: '#task.terminal' }],
            onError: { target: '#task.terminal', actions: 'recordKillError' },
          },
          on: {
            KILL: { actions: 'beginKill' },
            FAIL_SETUP: { actions: 'failSetup' },
          },
        },
      },
    },
    running: {
      initial: 'active',
      invoke: {
        id: 'driver:wait',
        src: 'driverWait',
        input: driverInput,
        onDone: intoExited({ target: '#task.exited', actions: 'recordExit' }),
        onError: intoExited({ target: '#task.exited', actions: 'recordLostWorkload' }),
      },
      on: {
        SIGNAL: { actions: 'sendSignal' },
        // The workload is known (its handle); poststart handles RESTORED for the restore hooks.
        RESTORED: {},
      },
      states: {
        active: {
          type: 'parallel',
          on: {
            KILL: intoPreKill({ target: '#task.running.killing', actions: 'beginKill' }),
            FAIL_SETUP: intoPreKill({ target: '#task.running.killing', actions: 'failSetup' }),
            RESTART: intoPreKill({ target: '#task.running.killing', actions: 'beginRestart' }),
            UPDATE: [
              { guard: 'taskRemoved', actions: 'raiseRemovalKill' },
              { guard: 'allocStopping', actions: 'storeUpdate' },
              { actions: ['storeUpdate', 'queueUpdate'] },
            ],
          },
          states: {
            poststart: {
              initial: 'hooks',
              // Resumed after an agent restart: the restore hooks, then the poststart hooks again.
              on: { RESTORED: '.restoring' },
              states: {
                hooks: taskHooks('poststart', '#task.running.active.poststart.done'),
                done: {},
                restoring: restoreHooks('#task.running.active.poststart.hooks'),
              },
            },
            updates: {
              initial: 'idle',
              states: {
                idle: { always: { guard: 'updateQueued', target: 'updating' } },
                updating: taskHooks('update', '#task.running.active.updates.idle', ['takeUpdate']),
              },
            },
          },
        },
        killing: {
          initial: 'preKill',
          on: {
            // Kill is idempotent (Nomad cancels killCtx once); a kill during a restart-kill upgrades it.
            KILL: { actions: 'beginKill' },
            FAIL_SETUP: { actions: 'failSetup' },
            RESTART: { actions: { type: 'reject', params: { code: 'ErrTaskKilling', why: 'the task is being stopped' } } },
          },
          states: {
            preKill: taskHooks('preKilling', '#task.running.killing.shutdownDelay'),
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
                  input: (args) => ({
                    ...driverInput(args),
                    signal: args.context.task.killSignal ?? DEFAULT_KILL_SIGNAL,
                    timeout: killTimeoutOf(args.context.task, args.context.settings.maxKillTimeout),
                    reason: args.context.run.stopReason === 'restart' ? ('restart' as const) : ('kill' as const),
                  }),
                  onError: { actions: 'recordKillError' },
                },
              ],
            },
            forceKilling: {
              invoke: {
                id: 'driver:terminate',
                src: 'driverTerminate',
                input: driverInput,
                onDone: 'awaitingExit',
                onError: { target: 'awaitingExit', actions: 'recordKillError' },
              },
            },
            // driver:wait, owned by `running`, ends this state.
            awaitingExit: {},
          },
        },
      },
    },
    exited: {
      initial: 'hooks',
      states: {
        hooks: taskHooks('exited', '#task.exited.deciding'),
        deciding: {
          entry: 'decide',
          always: [
            ...stopsAtOnce('killed', 'recordKilled'),
            { guard: { type: 'decided', params: { kind: 'killed' } }, target: '#task.terminal', actions: 'recordKilled' },
            ...stopsAtOnce('notRestarting', 'recordNotRestarting'),
            { guard: { type: 'decided', params: { kind: 'notRestarting' } }, target: '#task.terminal', actions: 'recordNotRestarting' },
            ...stopsAtOnce('terminated'),
            { guard: { type: 'decided', params: { kind: 'terminated' } }, target: '#task.terminal' },
            { guard: { type: 'decided', params: { kind: 'restart' } }, target: '#task.pending.restartDelay', actions: 'scheduleRestart' },
            // No flag at all (Nomad's empty decision): start again at once, without an event.
            { target: '#task.pending.gate', actions: 'restartSilently' },
          ],
        },
      },
      on: {
        KILL: { actions: 'beginKill' },
        RESTART: rejectNotRunning('the task has exited'),
        SIGNAL: rejectNotRunning('the task has exited'),
      },
    },
    terminal: {
      entry: 'markDead',
      initial: 'parked',
      on: {
        SIGNAL: rejectNotRunning('the task is dead'),
      },
      states: {
        // Nomad's ALLOC_RESTART: a dead non-poststop task may still be force-restarted by its alloc.
        parked: {
          // A killed task, or a poststop one, will never be restarted by its alloc: stop it now.
          always: intoStop({ guard: 'leavesPark', target: '#task.terminal.stopping' }),
          on: {
            KILL: intoStop({ target: '#task.terminal.stopping', actions: 'markKillRequested' }),
            FAIL_SETUP: intoStop({ target: '#task.terminal.stopping', actions: 'failSetup' }),
            RESTART: [{ guard: 'canForceRestart', target: '#task.pending.gate', actions: 'forceRestartParked' }, rejectNotRunning('the task is dead')],
          },
        },
        stopping: taskHooks('stop', '#task.terminal.stopped', ['markRunComplete']),
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
      ...taskHooks('shutdown', '#task.detached'),
      on: { SHUTDOWN: {} },
    },
    detached: { type: 'final', on: { SHUTDOWN: {} } },
  },
});

type TaskRunnerMachineType = typeof taskRunnerMachineDefinition;
/** The machine's type, named so that declarations using it (runtime, public types) need not spell it out. */
export interface TaskRunnerMachine extends TaskRunnerMachineType {}
/**
 * The task runner machine (the diagram above); `createTaskRunner` and the alloc runner provide its actors.
 * Under an alloc it tells the alloc of each step's news itself (`TASK_CHANGED`, machines/task-news.ts).
 */
export const taskRunnerMachine: TaskRunnerMachine = tellingParentOfNews(taskRunnerMachineDefinition);

export type * from './task-runner-types.ts';

/** A running task-runner actor (a child of an alloc actor, or standalone). */
export type TaskRunnerActor = ActorRefFrom<typeof taskRunnerMachine>;
