/**
 * The task manager machine on xstate's SimulatedClock with a hand-driven `do` step, shared by the task
 * manager's suites: each test resolves or rejects the step it is waiting on, and the machine reacts.
 */
import { SimulatedClock, createActor } from 'xstate';
import {
  fromStep,
  taskManagerMachine,
  type ManagedTask,
  type TaskManagerBackoff,
  type TaskManagerEmitted,
  type TaskManagerStepInput,
  type TaskManagerStepOutput,
} from '../../machines/task-manager.ts';
import { SwarmTaskState } from '../../src/drivers/task-status.ts';
import { settle } from '../../src/testing/simulated-clock.ts';

/** A task as the tests hand it over: what the manager needs, plus a spec it must carry along untouched. */
export type TestTask = ManagedTask & { spec?: unknown };

/** A new task that wants to run. */
export function managedTask(overrides: Partial<TestTask> = {}): TestTask {
  return { id: 't1', desiredState: SwarmTaskState.RUNNING, status: { state: SwarmTaskState.NEW }, spec: { image: 'redis:7' }, ...overrides };
}

/** One `do` step the test settles by hand, with the signal the machine gave it. */
export interface StepCall {
  input: TaskManagerStepInput;
  signal: AbortSignal;
  resolve(output: TaskManagerStepOutput): void;
  reject(error: unknown): void;
}

/** The `do` actor's logic, as fromStep builds it. */
export type DoLogic = ReturnType<typeof fromStep>;

/** Starts the machine; its `do` step is hand-driven unless another `do` is given (`bare`: nothing provided). */
export function startManager(opts: { task?: ManagedTask; backoff?: TaskManagerBackoff; seed?: number; do?: DoLogic; bare?: boolean } = {}) {
  const clock = new SimulatedClock();
  const steps: StepCall[] = [];
  const handDriven = fromStep((input, signal) => new Promise((resolve, reject) => steps.push({ input, signal, resolve, reject })));
  const machine = opts.bare ? taskManagerMachine : taskManagerMachine.provide({ actors: { do: opts.do ?? handDriven } });
  const actor = createActor(machine, { clock, input: { task: opts.task ?? managedTask(), backoff: opts.backoff, seed: opts.seed } });
  const emitted: TaskManagerEmitted[] = [];
  actor.on('*', (ev) => emitted.push(ev));
  actor.start();
  /** Advances the simulated clock, then lets the promise results it caused settle. */
  const advance = async (ms: number) => {
    clock.increment(ms);
    await settle();
  };
  /** Resolves the latest step and lets the machine react. */
  const finishStep = async (output: TaskManagerStepOutput) => {
    steps[steps.length - 1]!.resolve(output);
    await settle();
  };
  /** Rejects the latest step and lets the machine react. */
  const failStep = async (error: unknown) => {
    steps[steps.length - 1]!.reject(error);
    await settle();
  };
  return {
    clock,
    actor,
    steps,
    emitted,
    advance,
    finishStep,
    failStep,
    value: () => actor.getSnapshot().value,
    context: () => actor.getSnapshot().context,
  };
}
