/**
 * Issue 24: a task resumed from a snapshot that predates a start the dead agent made (the snapshot has it
 * pending) is killed through pending.reaping: driver:reap is asked for start attempt + 1 and stops that
 * workload before the task goes dead. The machine alone, its driver actors stubbed.
 */
import { describe, expect, it } from 'vitest';
import { createActor, fromPromise } from 'xstate';
import { taskRunnerMachine, type DriverReapOutput, type DriverShutdownInput } from '../../machines/task-runner.ts';
import type { TaskSpec } from '../../machines/model.ts';
import { SimulatedClock, settle } from '../../src/testing/simulated-clock.ts';

const task: TaskSpec = { name: 'side', driver: 'stub', config: {}, killSignal: 'SIGINT', killTimeout: 7_000 };

/** The machine with stub actors; `reap` answers driver:reap, and every input it got is kept. */
function machineWith(reap: (input: DriverShutdownInput) => DriverReapOutput) {
  const reaped: DriverShutdownInput[] = [];
  const machine = taskRunnerMachine.provide({
    actors: {
      hook: fromPromise(async () => ({})),
      driverReap: fromPromise<DriverReapOutput, DriverShutdownInput>(async ({ input }) => {
        reaped.push(input);
        return reap(input);
      }),
    },
  });
  return { machine, reaped };
}

/** A snapshot of a task waiting on its lifecycle gate (never started), as a dead agent saved it. */
function savedWhilePending(machine: ReturnType<typeof machineWith>['machine'], clock: SimulatedClock) {
  const first = createActor(machine, { clock, input: { allocId: 'a1', task, jobType: 'service', gateOpen: false } }).start();
  const saved = first.getPersistedSnapshot();
  first.stop();
  return saved;
}

function restore(machine: ReturnType<typeof machineWith>['machine'], clock: SimulatedClock, saved: unknown) {
  const actor = createActor(machine, { clock, snapshot: saved as never, input: { allocId: 'a1', task, jobType: 'service' } }).start();
  actor.send({ type: 'RESTORED' });
  return actor;
}

const types = (actor: { getSnapshot(): { context: { taskState: { events: { type: string }[] } } } }) =>
  actor.getSnapshot().context.taskState.events.map((e) => e.type);

describe('issue 24: killing a task restored before any start', () => {
  it('asks driver:reap for the start after the last one the snapshot knows, with the kill signal and timeout', async () => {
    const clock = new SimulatedClock(0);
    const { machine, reaped } = machineWith(() => ({}));
    const actor = restore(machine, clock, savedWhilePending(machine, clock));
    actor.send({ type: 'KILL' });
    await settle();
    expect(reaped).toHaveLength(1);
    expect(reaped[0]).toMatchObject({ attempt: 1, signal: 'SIGINT', timeout: 7_000 });
  });

  it('records the found workload\'s end and the kill, then goes dead', async () => {
    const clock = new SimulatedClock(0);
    const { machine } = machineWith(() => ({ exit: { exitCode: 130, signal: 2 } }));
    const actor = restore(machine, clock, savedWhilePending(machine, clock));
    actor.send({ type: 'KILL' });
    await settle();
    expect(types(actor).slice(-3)).toEqual(['Killing', 'Terminated', 'Killed']);
    expect(actor.getSnapshot().context.taskState.state).toBe('dead');
  });

  it('goes dead with only Killing when that start spawned nothing', async () => {
    const clock = new SimulatedClock(0);
    const { machine } = machineWith(() => ({}));
    const actor = restore(machine, clock, savedWhilePending(machine, clock));
    actor.send({ type: 'KILL' });
    await settle();
    expect(types(actor).slice(-1)).toEqual(['Killing']);
    expect(actor.getSnapshot().context.taskState.state).toBe('dead');
  });

  it('asks nothing of the driver when the task was never restored: a kill in pending needs no driver call', async () => {
    const clock = new SimulatedClock(0);
    const { machine, reaped } = machineWith(() => ({}));
    const actor = createActor(machine, { clock, input: { allocId: 'a1', task, jobType: 'service', gateOpen: false } }).start();
    actor.send({ type: 'KILL' });
    await settle();
    expect(reaped).toEqual([]);
    expect(actor.getSnapshot().context.taskState.state).toBe('dead');
  });
});
