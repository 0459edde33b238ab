/**
 * A hook-free model of an alloc runner: a batch allocation with a prestart task `init` and a main task `main`
 * (no restarts: a failure is final), one alloc prerun hook the test answers, workloads the test ends. Each
 * model state says what the real runner must show: its top-level state, the client status, and each task's
 * state. Paths over it are replayed against createAllocRunner (alloc-paths.test.ts).
 */
import { assign, setup } from 'xstate';
import { ALLOC_STATES } from './state-map.ts';

export type AllocModelEvent =
  | { type: 'PRERUN_OK' }
  | { type: 'PRERUN_FAIL' }
  | { type: 'PRERUN_HANG' }
  | { type: 'INIT_EXIT_OK' }
  | { type: 'INIT_EXIT_FAIL' }
  | { type: 'MAIN_EXIT_OK' }
  | { type: 'MAIN_EXIT_FAIL' }
  | { type: 'KILL' }
  | { type: 'RESTART' }
  | { type: 'SIGNAL' }
  | { type: 'UPDATE' }
  | { type: 'SHUTDOWN' }
  | { type: 'DESTROY' }
  | { type: 'TICK' };

export const ALLOC_MODEL_EVENTS: AllocModelEvent[] = (
  ['PRERUN_OK', 'PRERUN_FAIL', 'PRERUN_HANG', 'INIT_EXIT_OK', 'INIT_EXIT_FAIL', 'MAIN_EXIT_OK', 'MAIN_EXIT_FAIL', 'KILL', 'RESTART', 'SIGNAL', 'UPDATE', 'SHUTDOWN', 'DESTROY', 'TICK'] as const
).map((type) => ({ type }));

type TaskView = { state: 'pending' | 'running' | 'dead'; failed: boolean };

/** What the real runner must show in a model state (restart counts come from the model's context). */
export interface AllocExpectation {
  top: string;
  clientStatus: 'pending' | 'running' | 'complete' | 'failed';
  init: TaskView;
  main: TaskView;
}

const pending: TaskView = { state: 'pending', failed: false };
const running: TaskView = { state: 'running', failed: false };
const done: TaskView = { state: 'dead', failed: false };
const failed: TaskView = { state: 'dead', failed: true };
const show = (top: string, clientStatus: AllocExpectation['clientStatus'], init: TaskView, main: TaskView) => ({
  meta: { expect: { top, clientStatus, init, main } satisfies AllocExpectation },
});

export interface AllocModelContext {
  initRestarts: number;
  mainRestarts: number;
}

const same = { actions: 'unchanged' as const };
/** What every state not otherwise said does with the commands that change nothing there. */
const inert = { RESTART: same, SIGNAL: same, UPDATE: same, TICK: same };

export const allocModel = setup({
  types: { context: {} as AllocModelContext, events: {} as AllocModelEvent },
  actions: {
    restartInit: assign(({ context }) => ({ initRestarts: context.initRestarts + 1 })),
    restartMain: assign(({ context }) => ({ mainRestarts: context.mainRestarts + 1 })),
    unchanged: () => {},
  },
}).createMachine({
  id: 'allocModel',
  context: { initRestarts: 0, mainRestarts: 0 },
  initial: 'prerun',
  states: {
    prerun: {
      ...show(ALLOC_STATES.prerun, 'pending', pending, pending),
      on: {
        PRERUN_OK: 'initRunning',
        // Nomad's MarkFailedKill: every task fails with Setup Failure, the alloc is failed.
        PRERUN_FAIL: 'setupFailed',
        PRERUN_HANG: 'prerunHung',
        // A kill during prerun waits for prerun to end, then kills the tasks before they run.
        KILL: 'prerunKilled',
        SHUTDOWN: 'detachedPending',
        DESTROY: 'prerunDestroying',
        ...inert,
      },
    },
    prerunKilled: {
      ...show(ALLOC_STATES.prerun, 'pending', pending, pending),
      on: { PRERUN_OK: 'killedEarly', PRERUN_FAIL: 'setupFailed', PRERUN_HANG: 'prerunHung', KILL: same, SHUTDOWN: 'detachedPending', ...inert },
    },
    prerunDestroying: {
      ...show(ALLOC_STATES.prerun, 'pending', pending, pending),
      on: { PRERUN_OK: 'destroyed', PRERUN_FAIL: 'destroyedFailed', KILL: same, DESTROY: same, ...inert },
    },
    /** The prerun hook never answers: Nomad's Run blocks in prerun; only an agent shutdown leaves. */
    prerunHung: {
      ...show(ALLOC_STATES.prerun, 'pending', pending, pending),
      on: { KILL: same, SHUTDOWN: 'detachedPending', ...inert },
    },
    setupFailed: {
      ...show(ALLOC_STATES.terminal, 'failed', failed, failed),
      on: { KILL: same, SHUTDOWN: 'detachedSetupFailed', DESTROY: 'destroyedFailed', ...inert },
    },
    killedEarly: {
      ...show(ALLOC_STATES.terminal, 'complete', done, done),
      on: { KILL: same, SHUTDOWN: 'detachedDone', DESTROY: 'destroyed', ...inert },
    },
    /** The prestart task runs; main waits behind its gate. */
    initRunning: {
      ...show(ALLOC_STATES.running, 'running', running, pending),
      on: {
        INIT_EXIT_OK: 'mainRunning',
        // A failed prestart task keeps main blocked; the reducer kills main (Sibling Task Failed) and the alloc fails.
        INIT_EXIT_FAIL: 'initFailed',
        KILL: 'killedEarly',
        // RESTART {} restarts the running tasks only.
        RESTART: { target: 'initRunning', actions: 'restartInit' },
        SHUTDOWN: 'detachedInitRunning',
        DESTROY: 'destroyed',
        SIGNAL: same,
        UPDATE: same,
        TICK: same,
      },
    },
    initFailed: {
      ...show(ALLOC_STATES.terminal, 'failed', failed, done),
      on: { KILL: same, SHUTDOWN: 'detachedInitFailed', DESTROY: 'destroyedInitFailed', ...inert },
    },
    mainRunning: {
      ...show(ALLOC_STATES.running, 'running', done, running),
      on: {
        MAIN_EXIT_OK: 'complete',
        MAIN_EXIT_FAIL: 'mainFailed',
        KILL: 'complete',
        RESTART: { target: 'mainRunning', actions: 'restartMain' },
        SHUTDOWN: 'detachedMainRunning',
        DESTROY: 'destroyed',
        SIGNAL: same,
        UPDATE: same,
        TICK: same,
      },
    },
    complete: {
      ...show(ALLOC_STATES.terminal, 'complete', done, done),
      on: { KILL: same, SHUTDOWN: 'detachedDone', DESTROY: 'destroyed', ...inert },
    },
    mainFailed: {
      ...show(ALLOC_STATES.terminal, 'failed', done, failed),
      on: { KILL: same, SHUTDOWN: 'detachedMainFailed', DESTROY: 'destroyedMainFailed', ...inert },
    },
    destroyed: { type: 'final', ...show(ALLOC_STATES.destroyed, 'complete', done, done) },
    destroyedFailed: { type: 'final', ...show(ALLOC_STATES.destroyed, 'failed', failed, failed) },
    destroyedInitFailed: { type: 'final', ...show(ALLOC_STATES.destroyed, 'failed', failed, done) },
    destroyedMainFailed: { type: 'final', ...show(ALLOC_STATES.destroyed, 'failed', done, failed) },
    // SHUTDOWN: the agent exits, tasks are left as they are.
    detachedPending: { type: 'final', ...show(ALLOC_STATES.detached, 'pending', pending, pending) },
    detachedInitRunning: { type: 'final', ...show(ALLOC_STATES.detached, 'running', running, pending) },
    detachedMainRunning: { type: 'final', ...show(ALLOC_STATES.detached, 'running', done, running) },
    detachedDone: { type: 'final', ...show(ALLOC_STATES.detached, 'complete', done, done) },
    detachedSetupFailed: { type: 'final', ...show(ALLOC_STATES.detached, 'failed', failed, failed) },
    detachedInitFailed: { type: 'final', ...show(ALLOC_STATES.detached, 'failed', failed, done) },
    detachedMainFailed: { type: 'final', ...show(ALLOC_STATES.detached, 'failed', done, failed) },
  },
});

/** The expectation a model snapshot stands for, with each task's restart count. */
export function allocExpectationOf(snap: { context: AllocModelContext; getMeta(): Record<string, unknown> }) {
  const meta = Object.values(snap.getMeta())[0] as { expect: AllocExpectation };
  const e = meta.expect;
  return {
    top: e.top,
    clientStatus: e.clientStatus,
    init: { ...e.init, restarts: snap.context.initRestarts },
    main: { ...e.main, restarts: snap.context.mainRestarts },
  };
}
