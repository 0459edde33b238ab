/**
 * A task-runner statechart on stub actors the test steers: every hook call and driver call is recorded with
 * its input, and each answers the way the test says (resolve, throw, or wait until the test ends it). Used by
 * task-runner-decisions.test.ts and task-runner-events.test.ts to observe what the machine's actions record.
 */
import { createActor, fromPromise } from 'xstate';
import {
  taskRunnerMachine, type DriverCallInput, type DriverShutdownInput, type DriverStartOutput, type TaskRunnerInput,
} from '../../machines/task-runner.ts';
import type { HookCallInput, HookCallOutput } from '../../machines/hook-calls.ts';
import type { ExitResult, TaskSpec } from '../../machines/model.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

/** An error as drivers and hooks raise it: a message, and optionally whether it is recoverable and its event type. */
export function failure(message: string, extra: { recoverable?: boolean; eventType?: string } = {}): Error {
  return Object.assign(new Error(message), extra);
}

export interface StubBehaviour {
  /** A hook's answer; throw to fail it, return a never-settling promise to keep it running. */
  hook?: (input: HookCallInput) => HookCallOutput | Promise<HookCallOutput>;
  /** The driver's start; defaults to a handle naming the attempt. */
  start?: (input: DriverCallInput) => DriverStartOutput | Promise<DriverStartOutput>;
  /** driver:shutdown; defaults to ending the workload with exit code 130, signal 2. */
  shutdown?: (input: DriverShutdownInput) => Promise<void>;
  /** driver:terminate; defaults to resolving (the workload is then ended by the test). */
  terminate?: (input: DriverCallInput) => Promise<void>;
  /** driver:signal; defaults to resolving. */
  signal?: (input: DriverCallInput & { signal: string }) => Promise<void>;
}

export const webTask: TaskSpec = { name: 'web', driver: 'stub', config: {} };

/** A task runner on stub actors and a SimulatedClock at 1000; `exit`/`lose` end the pending driver:wait. */
export function stubRunner(input: Partial<TaskRunnerInput> = {}, b: StubBehaviour = {}) {
  const hookCalls: HookCallInput[] = [];
  const starts: DriverCallInput[] = [];
  const shutdowns: DriverShutdownInput[] = [];
  const terminates: DriverCallInput[] = [];
  const signals: (DriverCallInput & { signal: string })[] = [];
  let endWait: { resolve: (r: ExitResult | undefined) => void; reject: (e: unknown) => void } | undefined;
  const exit = (r: ExitResult | undefined) => endWait!.resolve(r);
  const machine = taskRunnerMachine.provide({
    actors: {
      hook: fromPromise<HookCallOutput, HookCallInput>(async ({ input: i }) => {
        hookCalls.push(i);
        return (await b.hook?.(i)) ?? {};
      }),
      driverStart: fromPromise<DriverStartOutput, DriverCallInput>(async ({ input: i }) => {
        starts.push(i);
        return b.start ? b.start(i) : { handle: { pid: i.attempt } };
      }),
      driverWait: fromPromise<ExitResult, DriverCallInput>(
        () => new Promise<ExitResult>((resolve, reject) => (endWait = { resolve: resolve as (r: ExitResult | undefined) => void, reject })),
      ),
      driverShutdown: fromPromise<void, DriverShutdownInput>(async ({ input: i }) => {
        shutdowns.push(i);
        if (b.shutdown) return b.shutdown(i);
        exit({ exitCode: 130, signal: 2 });
      }),
      driverTerminate: fromPromise<void, DriverCallInput>(async ({ input: i }) => {
        terminates.push(i);
        if (b.terminate) return b.terminate(i);
      }),
      driverSignal: fromPromise<void, DriverCallInput & { signal: string }>(async ({ input: i }) => {
        signals.push(i);
        if (b.signal) return b.signal(i);
      }),
    },
  });
  const clock = new SimulatedClock(1_000);
  const actor = createActor(machine, {
    clock,
    input: { allocId: 'a1', task: webTask, jobType: 'service', parkWhenDead: false, ...input },
  }).start();
  const ctx = () => actor.getSnapshot().context;
  return {
    actor,
    clock,
    hookCalls,
    starts,
    shutdowns,
    terminates,
    signals,
    exit,
    lose: (err: unknown) => endWait!.reject(err),
    ctx,
    value: () => actor.getSnapshot().value,
    state: () => ctx().taskState,
    events: () => ctx().taskState.events,
    types: () => ctx().taskState.events.map((e) => e.type),
  };
}

/** A promise that never settles: a hook or driver call that is still running. */
export const forever = <T>() => new Promise<T>(() => {});
