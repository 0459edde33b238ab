/**
 * SwarmKit's task manager (agent/task.go) as a statechart: it drives one task by running SwarmKit's `Do`
 * step after step, one at a time, keeping its own copy of the task whose status is the authoritative one.
 *
 *   running ─ progress ─▶ running (the next step at once)
 *           ─ noop ─────▶ idle (until an update; at once if one arrived during the step)
 *           ─ retry ────▶ retryWait ─ after the backoff ─▶ running
 *           ─ error ────▶ running (a failed controller update is reported, never retried)
 *           ─ throw ────▶ retryWait (a broken step must not spin the CPU)
 *   UPDATE (a real change): while running, the step is cancelled but still awaited, and whatever status it
 *     returns is kept (a cancelled Do is ErrTaskRetry, so the next step waits the backoff); from idle or
 *     retryWait ─▶ running at once
 *   CLOSE: from running ─▶ running.closing (the cancelled step finishes, its status kept) ─▶ closed;
 *     from idle or retryWait ─▶ closed. Updates are rejected from then on; the workload lives on.
 *
 * The step itself is the named actor `do`, supplied by the runtime with `.provide()` (see fromStep and
 * src/runtime/create-task-manager.ts); this file says only what happens when.
 */
import { assign, emit, enqueueActions, sendTo, setup, stateIn, type ActorRefFrom } from 'xstate';
import { clockNow } from './clock.ts';
import { mulberry32 } from './restart-tracker.ts';
import {
  fromStep,
  type TaskManagerOutcome,
  type TaskManagerStepInput,
  type TaskManagerStepOutput,
  type TaskManagerStepReport,
} from './task-manager-step.ts';

export {
  fromStep,
  type TaskManagerOutcome,
  type TaskManagerStepCommand,
  type TaskManagerStepFn,
  type TaskManagerStepInput,
  type TaskManagerStepOutput,
  type TaskManagerStepReport,
} from './task-manager-step.ts';

/** SwarmKit's fixed retry delay (ms): enough to keep a failing task from spinning the CPU (swarmkit#927). */
export const DEFAULT_TASK_RETRY_DELAY = 1_000;

/** How many rejected updates the context keeps; older ones are only in the emitted events. */
const MAX_REJECTIONS = 10;

/** What the manager needs of a task; the runtime's SwarmTask fits it, and the rest of the task is kept as is. */
export interface ManagedTask {
  id: string;
  /** SwarmKit's numeric desired state: an update may raise it, never lower it. */
  desiredState: number;
  /** The agent-observed status; the manager's copy wins over any status an update carries. */
  status: unknown;
  /** Object metadata, ignored when deciding whether an update changes anything. */
  meta?: unknown;
}

/** When to retry after ErrTaskRetry: SwarmKit's fixed delay, or exponential with jitter (swarmkit#2617). */
export type TaskManagerBackoff =
  | { kind: 'fixed'; delay: number }
  | {
      kind: 'exponential';
      /** The first retry's delay (ms). */
      initial: number;
      /** The cap (ms). */
      max: number;
      /** Growth per consecutive retry; default 2. */
      factor?: number;
      /** The fraction of the delay taken off at random, 0..1; default 0.2. */
      jitter?: number;
    };

/** How a task manager starts. */
export interface TaskManagerInput {
  task: ManagedTask;
  /** Default: SwarmKit's fixed 1 s. */
  backoff?: TaskManagerBackoff;
  /** Seed of the jitter's random source, so runs are reproducible. */
  seed?: number;
}

/** An update that arrived after CLOSE: recorded and emitted instead of silently dropped. */
export interface UpdateRejection {
  code: 'ErrClosed';
  message: string;
  taskId: string;
  time: number;
}

/** Why an update was ignored (SwarmKit logs these and carries on). */
export type UpdateIgnoredReason = 'unchanged' | 'otherTask' | 'lowerDesiredState';

/** A step that failed outside Do (a failed controller update, or a step that threw). */
export interface StepFailure {
  message: string;
  time: number;
}

/** The manager's data: JSON only, so it persists and the inspector can show it. */
export interface TaskManagerContext {
  task: ManagedTask;
  /** The spec changed since the last dispatch: the next step calls the controller's update first. */
  updated: boolean;
  /** Whether the step in flight (or the last one) was dispatched with `updated`; cleared at dispatch as in agent/task.go. */
  stepUpdated: boolean;
  backoff: TaskManagerBackoff;
  /** Consecutive retries; reset by progress or an update. */
  retries: number;
  /** The delay of the current (or last) retry wait, in ms. */
  retryDelay: number;
  /** The jitter's PRNG state: `mulberry32(seed)` continues where the last draw left off. */
  seed: number;
  lastFailure?: StepFailure;
  rejections: UpdateRejection[];
}

/**
 * Commands: a new version of the task from the manager, or CLOSE (the agent is going away; idempotent). The
 * `do` step reports with STEP_DONE / STEP_ERROR.
 */
export type TaskManagerEvent = { type: 'UPDATE'; task: ManagedTask } | { type: 'CLOSE' } | TaskManagerStepReport;

/** What the manager reports: every status a step returns (SwarmKit's reporter), and updates it did not take. */
export type TaskManagerEmitted =
  | { type: 'status'; taskId: string; status: unknown; outcome: TaskManagerOutcome }
  | { type: 'step.failed'; taskId: string; failure: StepFailure }
  | { type: 'update.ignored'; taskId: string; reason: UpdateIgnoredReason }
  | { type: 'update.rejected'; rejection: UpdateRejection };

/**
 * The delay before retry number `attempt` (1-based). `random` is a draw in [0, 1): jitter only shortens the
 * delay, so the cap holds and tasks that reached it still spread out.
 */
export function retryDelayOf(backoff: TaskManagerBackoff, attempt: number, random: number): number {
  if (backoff.kind === 'fixed') return backoff.delay;
  const base = Math.min(backoff.max, backoff.initial * (backoff.factor ?? 2) ** Math.max(0, attempt - 1));
  return Math.round(base * (1 - (backoff.jitter ?? 0.2) * random));
}

/** Whether two tasks are the same apart from status and meta (SwarmKit's TasksEqualStable). */
export function tasksEqualStable(a: ManagedTask, b: ManagedTask): boolean {
  return deepEqual({ ...a, status: undefined, meta: undefined }, { ...b, status: undefined, meta: undefined });
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  // A key holding undefined counts as absent, as it would after a JSON round trip.
  for (const key of new Set([...Object.keys(ra), ...Object.keys(rb)])) if (!deepEqual(ra[key], rb[key])) return false;
  return true;
}

function stepOutputOf(event: TaskManagerEvent): TaskManagerStepOutput {
  return event.type === 'STEP_DONE' ? event.output : { outcome: 'error', error: 'not a step result' };
}

function updateOf(event: TaskManagerEvent): ManagedTask | undefined {
  return event.type === 'UPDATE' ? event.task : undefined;
}

const doNotProvided = fromStep(async () => {
  throw new Error('taskManagerMachine: the do actor is not provided; use createTaskManager() or .provide({ actors: { do: fromStep(fn) } })');
});

/** SwarmKit's task manager loop; provide the `do` actor (one step: controller update if needed, then Do). */
export const taskManagerMachine = setup({
  types: {
    context: {} as TaskManagerContext,
    events: {} as TaskManagerEvent,
    input: {} as TaskManagerInput,
    emitted: {} as TaskManagerEmitted,
  },
  actors: {
    /** One step: the controller's update when `updated`, then Do. Provided by the runtime (see fromStep). */
    do: doNotProvided,
  },
  guards: {
    updateChangesNothing: ({ context, event }) => {
      const task = updateOf(event);
      return task !== undefined && tasksEqualStable(task, context.task);
    },
    updateIsForAnotherTask: ({ context, event }) => updateOf(event)?.id !== context.task.id,
    updateLowersDesiredState: ({ context, event }) => (updateOf(event)?.desiredState ?? 0) < context.task.desiredState,
    stepOutcome: ({ event }, params: { outcome: TaskManagerOutcome }) => stepOutputOf(event).outcome === params.outcome,
    /** Nothing to do (a noop) and no update arrived while the step ran: SwarmKit waits to be pumped by an update. */
    noopWithNoUpdate: ({ context, event }) => stepOutputOf(event).outcome === 'noop' && !context.updated,
    /** A step is in flight and not being closed down. */
    stepping: stateIn({ running: 'stepping' }),
    /** CLOSE arrived while a step was in flight. */
    closeRequested: stateIn({ running: 'closing' }),
  },
  actions: {
    /** Adopts the new spec but keeps the manager's own status, which is canonical. */
    adoptUpdate: assign(({ context, event }) => {
      const task = updateOf(event);
      return task ? { task: { ...task, status: context.task.status }, updated: true, retries: 0 } : {};
    }),
    ignoreUpdate: emit(({ context }, params: { reason: UpdateIgnoredReason }) => ({
      type: 'update.ignored' as const,
      taskId: context.task.id,
      reason: params.reason,
    })),
    rejectUpdate: enqueueActions(({ context, event, system, enqueue }) => {
      const rejection: UpdateRejection = {
        code: 'ErrClosed',
        message: 'the task manager is closed: updates are no longer accepted',
        taskId: updateOf(event)?.id ?? context.task.id,
        time: clockNow(system),
      };
      enqueue.assign({ rejections: [...context.rejections, rejection].slice(-MAX_REJECTIONS) });
      enqueue.emit({ type: 'update.rejected', rejection });
    }),
    /** Snapshots and clears `updated` as the step is dispatched: an update arriving during the step sets it again. */
    dispatch: assign(({ context }) => ({ stepUpdated: context.updated, updated: false })),
    /** Cancels the step in flight; it still reports, and its status is kept (agent/task.go cancels opctx). */
    cancelStep: sendTo('do', { type: 'CANCEL' }),
    /** Stores and reports the step's status, even when the step was cancelled: SwarmKit keeps every status Do returns. */
    applyStep: enqueueActions(({ context, event, system, enqueue }) => {
      const out = stepOutputOf(event);
      const task = out.status === undefined ? context.task : { ...context.task, status: out.status };
      enqueue.assign({ task, retries: out.outcome === 'progress' ? 0 : context.retries });
      if (out.status !== undefined) enqueue.emit({ type: 'status', taskId: task.id, status: out.status, outcome: out.outcome });
      if (out.outcome === 'error') {
        const failure = { message: out.error ?? 'the step failed', time: clockNow(system) };
        enqueue.assign({ lastFailure: failure });
        enqueue.emit({ type: 'step.failed', taskId: task.id, failure });
      }
    }),
    /** A step that threw is a bug or a broken controller: recorded, and retried after the backoff. */
    recordStepError: enqueueActions(({ context, event, system, enqueue }) => {
      const failure = { message: event.type === 'STEP_ERROR' ? event.error : 'the step failed', time: clockNow(system) };
      enqueue.assign({ lastFailure: failure });
      enqueue.emit({ type: 'step.failed', taskId: context.task.id, failure });
    }),
    /** Draws the next retry delay; a fixed backoff leaves the PRNG untouched. */
    planRetry: assign(({ context }) => {
      const attempt = context.retries + 1;
      if (context.backoff.kind === 'fixed') return { retries: attempt, retryDelay: retryDelayOf(context.backoff, attempt, 0) };
      const rng = mulberry32(context.seed);
      return { retries: attempt, retryDelay: retryDelayOf(context.backoff, attempt, rng.next()), seed: rng.seed };
    }),
  },
  delays: {
    retryDelay: ({ context }) => context.retryDelay,
  },
}).createMachine({
  id: 'taskManager',
  context: ({ input }) => ({
    task: input.task,
    updated: false,
    stepUpdated: false,
    backoff: input.backoff ?? { kind: 'fixed', delay: DEFAULT_TASK_RETRY_DELAY },
    retries: 0,
    retryDelay: 0,
    seed: input.seed ?? 0x5eed,
    rejections: [],
  }),
  // SwarmKit primes the pump: the first step runs at once.
  initial: 'running',
  on: {
    // Checked in SwarmKit's order. An accepted update while a step runs cancels it (the step still reports);
    // from idle or the retry wait it runs the next step at once, which cancels the wait.
    UPDATE: [
      { guard: 'updateChangesNothing', actions: { type: 'ignoreUpdate', params: { reason: 'unchanged' } } },
      { guard: 'updateIsForAnotherTask', actions: { type: 'ignoreUpdate', params: { reason: 'otherTask' } } },
      { guard: 'updateLowersDesiredState', actions: { type: 'ignoreUpdate', params: { reason: 'lowerDesiredState' } } },
      { guard: 'stepping', actions: ['adoptUpdate', 'cancelStep'] },
      { target: '.running', actions: 'adoptUpdate' },
    ],
    // Nothing in flight: closed at once. `running` handles CLOSE itself.
    CLOSE: { target: '.closed' },
  },
  states: {
    /** The last step was a noop: nothing to do until an update. */
    idle: {},
    running: {
      entry: 'dispatch',
      invoke: {
        id: 'do',
        src: 'do',
        input: ({ context }) => ({ task: context.task, updated: context.stepUpdated }),
        onError: { target: 'retryWait', actions: 'recordStepError' },
      },
      initial: 'stepping',
      states: {
        stepping: {
          on: { CLOSE: { target: 'closing', actions: 'cancelStep' } },
        },
        /** CLOSE arrived: the cancelled step is awaited (its status kept); no further step is dispatched. */
        closing: {
          on: { UPDATE: { actions: 'rejectUpdate' }, CLOSE: {} },
        },
      },
      on: {
        STEP_DONE: [
          { guard: 'closeRequested', target: 'closed', actions: 'applyStep' },
          { guard: { type: 'stepOutcome', params: { outcome: 'retry' } }, target: 'retryWait', actions: 'applyStep' },
          { guard: 'noopWithNoUpdate', target: 'idle', actions: 'applyStep' },
          // progress, a failed controller update, or a noop with an update pending: the next step at once.
          { target: 'running', reenter: true, actions: 'applyStep' },
        ],
        STEP_ERROR: [
          { guard: 'closeRequested', target: 'closed', actions: 'recordStepError' },
          { target: 'retryWait', actions: 'recordStepError' },
        ],
      },
    },
    retryWait: {
      entry: 'planRetry',
      after: { retryDelay: { target: 'running' } },
    },
    /** Not final, so that late updates are still answered (rejected) rather than dropped. Shutdown and remove are never called. */
    closed: {
      on: { UPDATE: { actions: 'rejectUpdate' }, CLOSE: {} },
    },
  },
});

/** A running task manager actor. */
export type TaskManagerActor = ActorRefFrom<typeof taskManagerMachine>;
