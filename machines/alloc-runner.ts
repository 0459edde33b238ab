/**
 * The alloc runner: Nomad's allocrunner (alloc_runner.go, the Run loop) as a statechart. One task-runner
 * child per task (id = task name), opened in lifecycle order by the coordinator's gates; alloc hooks as
 * children `<phase>:<hook>` ([hooks: x], machines/hook-phase.ts, one box in `allocrun graph alloc`).
 *
 *   start ──(server-terminal: desired stop/evict; skip prerun, KILL the tasks behind their gates)──┐
 *     ▼                                                                                            │
 *   prerun [hooks: prerun] ──(a hook fails: every task gets FAIL_SETUP)──┐                         │
 *     │ done                                                             │                         │
 *     ▼                                                                  ▼                         ▼
 *   running (opens the gates on entry; ends when every task has run to completion)
 *     steady ──a restart, kill or update waits──▶ busy (parallel) ──its regions all idle again──▶ steady
 *       busy ├ restarts: idle ──RESTART (running / all)──▶ preTaskRestart [hooks: preTaskRestart]
 *            │          → restarting (RESTART to the tasks; all: coordinator reset + force) → idle
 *            ├ kill:    idle ──KILL / reducer's kill──▶ preKill [hooks: preKill] → groupShutdownDelay
 *            │          → waitingShutdownDelay → leader → mains → sidecars → done   (poststop tasks run after)
 *            └ updates: idle ⇄ updating: hooks [hooks: update] → tasks (UPDATE to every task runner)
 *     │ all tasks complete
 *     ▼
 *   postrun [hooks: postrun] ──▶ terminal ──DESTROY──▶ destroying [hooks: destroy] ──▶ destroyed ◉
 *     (from postrun on, RESTART and SIGNAL are answered with command.rejected: ErrTaskNotRunning)
 *   SHUTDOWN from anywhere ──▶ detaching: tasks (each detaches) → hooks [hooks: shutdown] ──▶ detached ◉
 *
 * Every task runner tells the alloc of its news (`TASK_CHANGED`, machines/task-news.ts): the alloc mirrors its
 * TaskState and runs Nomad's task-state reducer (sibling failed, leader dead, main tasks dead) and the coordinator.
 * Types: alloc-runner-types.ts; guards and actions: alloc-runner-setup.ts; commands (RESTART, SIGNAL,
 * DEPLOYMENT_HEALTH): alloc-runner-commands.ts; the checks hook's CHECK_STATUS / CHECKS_REMOVED reports
 * (prerun, running, postrun): alloc-checks.ts.
 */
import { and, not, stateIn, type ActorRefFrom, type SnapshotFrom } from 'xstate';
import { clockNow } from './clock.ts';
import { hookPhase, skipEmptyPhase } from './hook-phase.ts';
import { newTaskState } from './task-events.ts';
import { allocRunnerSetup } from './alloc-runner-setup.ts';
import type { AllocHookPhase, AllocRunnerContext } from './alloc-runner-types.ts';
import type { AllocState, TaskState } from './model.ts';

/**
 * An alloc hook phase: every hook runs and errors are collected (Nomad's postrun and destroy aggregate
 * them), except prerun, which stops at the first error and fails the allocation's tasks.
 */
function allocHooks(phase: AllocHookPhase, next: string, opts: { failFast?: boolean } = {}) {
  return hookPhase(phase, next, {
    call: 'callHook',
    onError: opts.failFast ? { actions: ['failSetup'], target: next } : { actions: ['recordHookError'] },
  });
}

// The phases every allocation enters, gone around when the plan has no hooks for them (hook-phase.ts).
const intoPrerun = skipEmptyPhase('prerun', '#alloc.prerun', '#alloc.running');
const intoPostrun = skipEmptyPhase('postrun', '#alloc.postrun', '#alloc.terminal');

/**
 * The checks hook's reports, heard while checks can run (prerun until the postrun hooks stop them); from
 * terminal on, and while detaching, the record stays as it was.
 */
const CHECK_REPORTS = {
  CHECK_STATUS: { actions: 'recordCheck' },
  CHECKS_REMOVED: { actions: 'recordCheck' },
} as const;

/** Nomad's alloc runner as a statechart; provide its hook actor and task runners (`createAllocRunner` does). */
const allocRunnerMachineDefinition = allocRunnerSetup.createMachine({
  id: 'alloc',
  context: ({ input, self }) => {
    const now = clockNow(self.system);
    const taskStates: Record<string, TaskState> = {};
    for (const t of input.alloc.tasks) taskStates[t.name] = newTaskState(now);
    const ctx: AllocRunnerContext = {
      alloc: input.alloc,
      hooks: input.hooks ?? {},
      settings: { taskHooks: input.taskHooks ?? {}, maxKillTimeout: input.maxKillTimeout, seed: input.seed ?? 1 },
      taskStates,
      taskFlags: { restartPending: {}, rejections: {}, runComplete: {}, detached: {} },
      gates: { coordinator: 'init', open: [], enabled: false },
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
  initial: 'start',
  on: {
    TASK_CHANGED: { guard: 'taskNews', actions: 'taskChanged' },
    // A task runner that detached (SHUTDOWN) finishes as an actor; its last snapshot comes as a done event.
    'xstate.done.actor.*': { guard: 'isTaskChild', actions: 'taskDetached' },
    SHUTDOWN: '.detaching',
    SIGNAL: { actions: 'signal' },
    RESTORED: { actions: 'restored' },
    DEPLOYMENT_HEALTH: { actions: 'setDeploymentHealth' },
  },
  states: {
    // Nomad's Run: prerun only if the allocation should run; a server-terminal one goes to the tasks at
    // once, which end without starting, and on to postrun.
    start: {
      always: [{ guard: 'allocStopping', target: 'running', actions: 'skipRun' }, ...intoPrerun({ target: '#alloc.prerun' })],
    },
    prerun: {
      ...allocHooks('prerun', '#alloc.running', { failFast: true }),
      on: {
        KILL: { actions: 'killTasks' },
        DESTROY: { actions: ['requestDestroy', 'killTasks'] },
        UPDATE: { actions: 'queueUpdate' },
        RESTART: { actions: { type: 'restart', params: { prerun: true } } },
        ...CHECK_REPORTS,
      },
    },
    running: {
      entry: 'openGates',
      always: intoPostrun({ guard: 'allTasksComplete', target: '#alloc.postrun' }),
      on: {
        KILL: { actions: 'killTasks' },
        DESTROY: { actions: ['requestDestroy', 'killTasks'] },
        UPDATE: { actions: 'queueUpdate' },
        RESTART: { actions: { type: 'restart', params: {} } },
        ...CHECK_REPORTS,
      },
      // Most allocations run their tasks to the end with no restart, kill or update: `steady` is one atomic
      // state, so each task's news (11-14 per lifecycle) is taken by a configuration of three nodes. The
      // three regions (eight active nodes, each walked and valued on every news) are entered only while one
      // of them has work: a restart or update done, the alloc is steady again (a kill never ends: its
      // region stays in `done`). So `steady` is exactly what the regions all idle were, state value included.
      initial: 'steady',
      states: {
        steady: { always: { guard: 'runningWorkWaiting', target: 'busy' } },
        busy: {
          type: 'parallel',
          // Every region idle again (a restart or update done) and no work waiting.
          always: { guard: and([stateIn({ running: { busy: { restarts: 'idle', kill: 'idle', updates: 'idle' } } }), not('runningWorkWaiting')]), target: 'steady' },
          states: {
            // RestartRunning / RestartAll: the preTaskRestart hooks (errors recorded, the restart goes on), then
            // the tasks. A one-task RESTART goes straight to its runner, as Nomad's RestartTask does.
            restarts: {
              initial: 'idle',
              states: {
                idle: { always: { guard: 'restartPending', target: 'preTaskRestart' } },
                preTaskRestart: allocHooks('preTaskRestart', '#alloc.running.busy.restarts.restarting'),
                restarting: { entry: 'restartTasks', always: '#alloc.running.busy.restarts.idle' },
              },
            },
            kill: {
              initial: 'idle',
              states: {
                idle: { always: { guard: 'killing', target: 'preKill' } },
                preKill: allocHooks('preKill', '#alloc.running.busy.kill.groupShutdownDelay'),
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
                    hooks: allocHooks('update', '#alloc.running.busy.updates.updating.tasks'),
                    tasks: {
                      entry: 'updateTasks',
                      always: [
                        { guard: 'allocStopping', target: '#alloc.running.busy.updates.idle', actions: 'killTasks' },
                        { target: '#alloc.running.busy.updates.idle' },
                      ],
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
    // From here on the tasks have run to the end: RESTART and SIGNAL are answered with ErrTaskNotRunning.
    postrun: { ...allocHooks('postrun', '#alloc.terminal'), on: { RESTART: { actions: 'rejectFinished' }, SIGNAL: { actions: 'rejectFinished' }, ...CHECK_REPORTS } },
    terminal: {
      always: { guard: 'destroyRequested', target: 'destroying' },
      on: { DESTROY: 'destroying', RESTART: { actions: 'rejectFinished' }, SIGNAL: { actions: 'rejectFinished' } },
    },
    destroying: { ...allocHooks('destroy', '#alloc.destroyed'), on: { RESTART: { actions: 'rejectFinished' }, SIGNAL: { actions: 'rejectFinished' } } },
    destroyed: { type: 'final' },
    detaching: {
      entry: 'shutdownTasks',
      initial: 'tasks',
      on: { SHUTDOWN: {} },
      states: {
        tasks: { always: { guard: 'allTasksDetached', target: 'hooks' } },
        hooks: allocHooks('shutdown', '#alloc.detached'),
      },
    },
    detached: { type: 'final', on: { SHUTDOWN: {} } },
  },
});

type AllocRunnerMachineType = typeof allocRunnerMachineDefinition;
/** The machine's type, named so that declarations using it (runtime, public types) need not spell it out. */
export interface AllocRunnerMachine extends AllocRunnerMachineType {}
/** The alloc runner machine (the diagram above); `createAllocRunner` provides its hook actor. */
export const allocRunnerMachine: AllocRunnerMachine = allocRunnerMachineDefinition;

/** A running alloc-runner actor. */
export type AllocRunnerActor = ActorRefFrom<typeof allocRunnerMachine>;

/**
 * The allocation runs and no kill has begun: `running.steady` (no region entered yet) or `running.busy` with
 * its kill region idle. What a restored runner asks before it registers services and checks again.
 */
export function runningNotKilling(snap: SnapshotFrom<typeof allocRunnerMachine>): boolean {
  return snap.matches({ running: 'steady' }) || snap.matches({ running: { busy: { kill: 'idle' } } });
}

/** The alloc's reported state, from the machine's context: deployment health and hook errors once there are any. */
export function allocStateOf(ctx: AllocRunnerContext): AllocState {
  return {
    clientStatus: ctx.clientStatus,
    taskStates: ctx.taskStates,
    ...(ctx.deploymentStatus && { deploymentStatus: ctx.deploymentStatus }),
    ...(ctx.hookErrors.length > 0 && { hookErrors: ctx.hookErrors }),
  };
}

export { clientStatusOf } from './task-state-reducer.ts';
export type * from './alloc-runner-types.ts';
