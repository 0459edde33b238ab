/**
 * A hook-free model of one task runner (a batch task, restart policy 1 attempt / 1h / 5s / fail, one prestart
 * hook the test answers, a mock workload the test ends): what Nomad's task runner should do for each event,
 * with the observable result each model state stands for. xstate/graph walks this machine; the paths are
 * replayed against the real runner (see task-paths.test.ts).
 */
import { assign, setup } from 'xstate';
import { TASK_STATES } from './state-map.ts';

/** The events of the model: commands, hook answers, workload exits, clock ticks. */
export type TaskModelEvent =
  | { type: 'HOOK_OK' }
  | { type: 'HOOK_FAIL' }
  | { type: 'HOOK_HANG' }
  | { type: 'EXIT_OK' }
  | { type: 'EXIT_FAIL' }
  | { type: 'KILL' }
  | { type: 'RESTART' }
  | { type: 'SIGNAL' }
  | { type: 'UPDATE' }
  | { type: 'SHUTDOWN' }
  | { type: 'TICK' };

export const TASK_MODEL_EVENTS: TaskModelEvent[] = [
  { type: 'HOOK_OK' }, { type: 'HOOK_FAIL' }, { type: 'HOOK_HANG' }, { type: 'EXIT_OK' }, { type: 'EXIT_FAIL' },
  { type: 'KILL' }, { type: 'RESTART' }, { type: 'SIGNAL' }, { type: 'UPDATE' }, { type: 'SHUTDOWN' }, { type: 'TICK' },
];

export interface TaskModelContext {
  /** Failures counted by the restart policy in its interval (user restarts are not). */
  attemptsUsed: number;
  restarts: number;
  failed: boolean;
}

/** The restart policy's attempts in the model's task. */
export const MODEL_ATTEMPTS = 1;

/** What the real runner must show in each model state: its top-level state and the TaskState. */
export interface TaskExpectation {
  top: string;
  state: 'pending' | 'running' | 'dead';
}

const expect = (top: string, state: TaskExpectation['state']): { expect: TaskExpectation } => ({ expect: { top, state } });

/** An event the task takes without changing state (answered, recorded, or ignored). */
const same = { actions: 'unchanged' as const };

export const taskModel = setup({
  types: { context: {} as TaskModelContext, events: {} as TaskModelEvent },
  guards: {
    attemptsLeft: ({ context }) => context.attemptsUsed < MODEL_ATTEMPTS,
  },
  actions: {
    countFailure: assign(({ context }) => ({ attemptsUsed: context.attemptsUsed + 1, restarts: context.restarts + 1 })),
    countRestart: assign(({ context }) => ({ restarts: context.restarts + 1 })),
    fail: assign({ failed: true }),
    unchanged: () => {},
  },
}).createMachine({
  id: 'taskModel',
  context: { attemptsUsed: 0, restarts: 0, failed: false },
  initial: 'prestart',
  states: {
    /** The prestart hook has been called and waits for its answer. */
    prestart: {
      meta: expect(TASK_STATES.pending, 'pending'),
      on: {
        HOOK_OK: 'running',
        // A recoverable prestart failure goes through the restart policy (Nomad's SetStartError).
        HOOK_FAIL: [{ guard: 'attemptsLeft', target: 'restartDelay', actions: 'countFailure' }, { target: 'dead', actions: 'fail' }],
        HOOK_HANG: 'prestartHung',
        // Killed before it ran: dead, not failed, no driver call.
        KILL: 'dead',
        SHUTDOWN: 'detachedPending',
        RESTART: same,
        SIGNAL: same,
        UPDATE: same,
        TICK: same,
      },
    },
    /** The prestart hook never answers; only a kill or a shutdown (aborting it) moves the task on. */
    prestartHung: {
      meta: expect(TASK_STATES.pending, 'pending'),
      on: { KILL: 'dead', SHUTDOWN: 'detachedPending', RESTART: same, SIGNAL: same, UPDATE: same, TICK: same },
    },
    running: {
      meta: expect(TASK_STATES.running, 'running'),
      on: {
        // A batch task that exits 0 is complete.
        EXIT_OK: 'dead',
        EXIT_FAIL: [{ guard: 'attemptsLeft', target: 'restartDelay', actions: 'countFailure' }, { target: 'dead', actions: 'fail' }],
        KILL: 'dead',
        // A user restart does not count against the policy and has no delay: prestart runs again at once.
        RESTART: { target: 'prestart', actions: 'countRestart' },
        SIGNAL: same,
        UPDATE: same,
        TICK: same,
        SHUTDOWN: 'detachedRunning',
      },
    },
    /** The restart policy's delay (5 s plus jitter); a tick (10 s) ends it. */
    restartDelay: {
      meta: expect(TASK_STATES.pending, 'pending'),
      on: { TICK: 'prestart', KILL: 'dead', SHUTDOWN: 'detachedPending', RESTART: same, SIGNAL: same, UPDATE: same },
    },
    dead: {
      meta: expect(TASK_STATES.terminal, 'dead'),
      // Nomad runs shutdown hooks on agent shutdown even for a dead task (TaskRunner.Shutdown).
      on: { KILL: same, RESTART: same, SIGNAL: same, UPDATE: same, TICK: same, SHUTDOWN: 'detachedDead' },
    },
    detachedPending: { type: 'final', meta: expect(TASK_STATES.detached, 'pending') },
    detachedRunning: { type: 'final', meta: expect(TASK_STATES.detached, 'running') },
    detachedDead: { type: 'final', meta: expect(TASK_STATES.detached, 'dead') },
  },
});

/** The expectation a model snapshot stands for, with the counters from its context. */
export function taskExpectationOf(snap: { value: unknown; context: TaskModelContext; getMeta(): Record<string, unknown> }) {
  const meta = Object.values(snap.getMeta())[0] as { expect: TaskExpectation };
  return { ...meta.expect, failed: snap.context.failed, restarts: snap.context.restarts };
}
