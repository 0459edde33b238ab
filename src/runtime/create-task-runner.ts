/**
 * A single task runner outside an allocation: the task-runner machine bound to drivers and hooks, with
 * rxjs views of its TaskState. The alloc runner builds the same bindings for each of its tasks.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BehaviorSubject, Subject, type Observable } from 'rxjs';
import { createActor, type InspectionEvent, type Observer } from 'xstate';
import type { TaskRunnerActor, TaskRunnerEvent } from '../../machines/task-runner.ts';
import { realClock, type Clock } from '../drivers/clock.ts';
import type { Driver } from '../drivers/controller.ts';
import type { TaskHook } from '../hooks/types.ts';
import type { AllocSpec, JobType, RestartPolicy, TaskEvent, TaskSpec, TaskState } from '../jobspec/types.ts';
import { withDefaultDrivers } from './default-drivers.ts';
import { registerRunner, type RunnerBindings } from './runner-registry.ts';
import { straysSettled } from './stray-calls.ts';
import { checkHookNames, hookPlanOf, providedTaskRunnerMachine } from './task-bindings.ts';

export interface TaskRunnerOptions {
  allocId?: string;
  jobType?: JobType;
  groupRestart?: RestartPolicy;
  drivers?: Record<string, Driver>;
  hooks?: TaskHook[];
  clock?: Clock;
  /** Wraps the clock the machine reads (a recording's `machineClock`), as createAllocRunner's option does. */
  machineClock?: (clock: Clock) => Clock;
  inspect?: Observer<InspectionEvent> | ((ev: InspectionEvent) => void);
  /** Seed for the restart jitter, for reproducible runs. */
  seed?: number;
  maxKillTimeout?: number;
  /** Where the task's directory lives; default: a directory under the OS temp dir. */
  allocDir?: string;
}

export interface TaskRunner {
  /** The task's actor (taskRunnerMachine). */
  readonly actor: TaskRunnerActor;
  start(): TaskRunner;
  send(event: TaskRunnerEvent): void;
  getState(): TaskState;
  /** Every task event as it is appended. */
  readonly events$: Observable<TaskEvent>;
  /** The TaskState, current value first. */
  readonly state$: Observable<TaskState>;
  /** Resolves when the task will never run again (stop hooks done) or the runner detached on SHUTDOWN. */
  readonly done: Promise<TaskState>;
  stop(): void;
}

function frozenEnv(task: TaskSpec, allocId: string, hookEnv: Record<string, string>): Readonly<Record<string, string>> {
  return Object.freeze({ ...task.env, ...hookEnv, NOMAD_TASK_NAME: task.name, NOMAD_ALLOC_ID: allocId });
}

/** Builds (but does not start) a runner for one task. */
export function createTaskRunner(task: TaskSpec, opts: TaskRunnerOptions = {}): TaskRunner {
  const allocId = opts.allocId ?? `standalone-${task.name}`;
  const clock = opts.clock ?? realClock;
  const hooks = opts.hooks ?? [];
  checkHookNames(hooks, `task ${JSON.stringify(task.name)}`);
  const allocDir = opts.allocDir ?? join(tmpdir(), `allocrun-${allocId}`);
  // The one provided task-runner machine; this runner's live objects are registered under its actor system.
  const actor = createActor(providedTaskRunnerMachine, {
    clock: opts.machineClock?.(clock) ?? clock,
    inspect: opts.inspect,
    input: {
      allocId,
      task,
      jobType: opts.jobType ?? 'service',
      groupRestart: opts.groupRestart,
      hooks: hookPlanOf(hooks),
      seed: opts.seed,
      maxKillTimeout: opts.maxKillTimeout,
      parkWhenDead: false,
    },
  });
  const bindings: RunnerBindings = {
    allocId,
    drivers: withDefaultDrivers(opts.drivers),
    hooksFor: () => hooks,
    clock,
    allocDir,
    taskDirOf: (t) => join(allocDir, t.name),
    envFor: (t, hookEnv) => frozenEnv(t, allocId, hookEnv),
    controllers: new Map(),
  };
  registerRunner(actor.system, bindings);

  const state$ = new BehaviorSubject<TaskState>(actor.getSnapshot().context.taskState);
  const events$ = new Subject<TaskEvent>();
  let seen = 0;
  let ending = false;
  let resolveDone!: (s: TaskState) => void;
  let rejectDone!: (e: unknown) => void;
  const done = new Promise<TaskState>((res, rej) => {
    resolveDone = res;
    rejectDone = rej;
  });
  // Rejected when the actor fails; a caller that never asks for `done` must not have that end the process.
  done.catch(() => undefined);
  actor.subscribe({
    next: (snap) => {
      const ts = snap.context.taskState;
      for (; seen < ts.events.length; seen++) events$.next(ts.events[seen]!);
      if (state$.value !== ts) state$.next(ts);
      if ((snap.status === 'done' || snap.matches({ terminal: 'stopped' })) && !ending) {
        ending = true;
        // Not done while a hook call a kill cut short is still at work (stray-calls.ts).
        const strays = straysSettled(bindings);
        if (strays) void strays.then(() => resolveDone(ts));
        else resolveDone(ts);
      }
    },
    error: (err) => rejectDone(err),
  });

  const runner: TaskRunner = {
    actor,
    start() {
      actor.start();
      return runner;
    },
    send: (event) => actor.send(event),
    getState: () => actor.getSnapshot().context.taskState,
    events$: events$.asObservable(),
    state$: state$.asObservable(),
    done,
    stop: () => actor.stop(),
  };
  return runner;
}
