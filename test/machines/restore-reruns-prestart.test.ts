/**
 * A task runner resumed from a snapshot saved before its start was (mid-prestart, or while the driver started
 * it) runs its prestart hooks again from the first, skipping only the Done ones, before it starts: Nomad's
 * restored task runner has no handle then, and its prestart goes through every hook whose state is not
 * PrestartDone. The start is rewound, not repeated: the next one has the saved start's attempt, so the driver
 * still finds a workload the dead agent's start spawned, and a kill meanwhile reaps that attempt.
 * The machine alone, its actors stubbed, on a SimulatedClock.
 */
import { describe, expect, it } from 'vitest';
import { createActor, fromPromise } from 'xstate';
import {
  taskRunnerMachine, type DriverCallInput, type DriverReapOutput, type DriverShutdownInput, type DriverStartOutput, type TaskRunnerInput,
} from '../../machines/task-runner.ts';
import type { HookCallInput, HookCallOutput } from '../../machines/hook-calls.ts';
import type { ExitResult, TaskSpec } from '../../machines/model.ts';
import { SimulatedClock, settle } from '../../src/testing/simulated-clock.ts';

const task: TaskSpec = { name: 'web', driver: 'stub', config: {} };
// `validate` says Done (skipped on restore); `task_dir` and `template` do not (they run again).
const hooks: TaskRunnerInput['hooks'] = { prestart: ['validate', 'task_dir', 'template'] };

/** Stub actors: `blockAt` (a prestart hook, or 'start') never answers in the first runner; calls are recorded. */
function machineOf(blockAt?: string) {
  const calls: string[] = [];
  const starts: number[] = [];
  const reaps: number[] = [];
  const never = <T>() => new Promise<T>(() => undefined);
  const machine = taskRunnerMachine.provide({
    actors: {
      // Only calls that answer are counted: the one the restore makes again and the rewind stops is not.
      hook: fromPromise<HookCallOutput, HookCallInput>(async ({ input, signal }) => {
        if (input.phase !== 'prestart') return {};
        if (input.hook === blockAt) return never();
        await null;
        signal.throwIfAborted();
        calls.push(input.hook);
        return { done: input.hook === 'validate' };
      }),
      driverStart: fromPromise<DriverStartOutput, DriverCallInput>(async ({ input, signal }) => {
        if (blockAt === 'start') return never();
        await null;
        signal.throwIfAborted();
        starts.push(input.attempt!);
        return { handle: { pid: 1 } };
      }),
      driverWait: fromPromise<ExitResult, DriverCallInput>(() => never()),
      driverShutdown: fromPromise<void, DriverShutdownInput>(async () => undefined),
      driverReap: fromPromise<DriverReapOutput, DriverShutdownInput>(async ({ input }) => {
        reaps.push(input.attempt!);
        return {};
      }),
    },
  });
  return { machine, calls, starts, reaps };
}

const input = { allocId: 'a1', task, jobType: 'service' as const, hooks };

/** The first runner, stopped where `blockAt` holds it: its snapshot as the dead agent saved it, and where it was. */
async function savedAt(blockAt: 'template' | 'start', kill = false) {
  const clock = new SimulatedClock(0);
  const { machine } = machineOf(blockAt);
  const first = createActor(machine, { clock, input }).start();
  await settle();
  if (kill) first.send({ type: 'KILL' });
  const saved = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
  const value = first.getSnapshot().value;
  first.stop();
  return { clock, saved, value };
}

function restore(clock: SimulatedClock, saved: unknown) {
  const m = machineOf();
  const actor = createActor(m.machine, { clock, snapshot: saved as never, input }).start();
  actor.send({ type: 'RESTORED' });
  return { ...m, actor };
}

const RUNNING = { running: { active: { poststart: 'done', updates: 'idle' } } };

describe('a task runner restored before its start was saved', () => {
  it.each([
    { at: 'template', saved: { pending: { prestart: 'calling' } }, calls: ['task_dir', 'template'], starts: [1] },
    { at: 'start', saved: { pending: 'starting' }, calls: ['task_dir', 'template'], starts: [1] },
  ] as const)('saved at $at: the prestart hooks not Done run again from the first, then start attempt $starts', async ({ at, saved: where, calls, starts }) => {
    const { clock, saved, value } = await savedAt(at);
    expect(value).toEqual(where);
    const r = restore(clock, saved);
    await settle();
    expect(r.calls).toEqual(calls);
    expect(r.starts).toEqual(starts);
    expect(r.actor.getSnapshot().value).toEqual(RUNNING);
    expect(r.actor.getSnapshot().context.run).toMatchObject({ attempt: 1, restoredBeforeStart: undefined });
  });

  it.each([
    { at: 'template', reaps: [1] },
    { at: 'start', reaps: [1] },
  ] as const)('saved at $at and killed while its prestart hooks run again: the saved start\'s attempt $reaps is reaped', async ({ at, reaps }) => {
    const { clock, saved } = await savedAt(at);
    const m = machineOf('template');
    const actor = createActor(m.machine, { clock, snapshot: saved as never, input }).start();
    actor.send({ type: 'RESTORED' });
    await settle();
    expect(actor.getSnapshot().value).toEqual({ pending: { prestart: 'calling' } });
    actor.send({ type: 'KILL' });
    await settle();
    expect(m.reaps).toEqual(reaps);
    expect(m.starts).toEqual([]);
    expect(actor.getSnapshot().context.taskState.state).toBe('dead');
  });

  it('saved starting with a kill asked for: the start runs again and the kill follows it, no prestart hook again', async () => {
    const { clock, saved, value } = await savedAt('start', true);
    expect(value).toEqual({ pending: 'starting' });
    const r = restore(clock, saved);
    await settle();
    expect(r.calls).toEqual([]);
    expect(r.starts).toEqual([1]);
    expect(r.actor.getSnapshot().value).toMatchObject({ running: { killing: {} } });
  });
});
