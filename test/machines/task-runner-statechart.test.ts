/**
 * The task-runner statechart on its own, as XState's tests drive machines: `taskRunnerMachine` with stub
 * actors through `.provide()`, events sent, `snapshot.value` asserted. No runtime, drivers or hooks: the
 * stubs resolve when the test says so.
 */
import { createActor, fromPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import {
  taskRunnerMachine, type DriverCallInput, type DriverShutdownInput, type DriverStartOutput, type TaskRunnerInput,
} from '../../machines/task-runner.ts';
import type { HookCallInput, HookCallOutput } from '../../machines/hook-calls.ts';
import type { ExitResult, TaskSpec } from '../../machines/model.ts';
import { SimulatedClock, settle } from '../../src/testing/simulated-clock.ts';

const task: TaskSpec = { name: 'web', driver: 'stub', config: {} };

/** A workload the test ends: `exit(result)` resolves the pending `driver:wait`. */
function stubs(opts: { hookOutput?: (input: HookCallInput) => HookCallOutput; failHook?: string; failStart?: boolean } = {}) {
  const calls: string[] = [];
  let exitWorkload: ((r: ExitResult) => void) | undefined;
  let waits = 0;
  const machine = taskRunnerMachine.provide({
    actors: {
      hook: fromPromise<HookCallOutput, HookCallInput>(async ({ input }) => {
        calls.push(`${input.phase}:${input.hook}`);
        if (opts.failHook === `${input.phase}:${input.hook}`) throw Object.assign(new Error('boom'), { recoverable: true });
        return opts.hookOutput?.(input) ?? {};
      }),
      driverStart: fromPromise<DriverStartOutput, DriverCallInput>(async () => {
        calls.push('start');
        if (opts.failStart) throw Object.assign(new Error('no such binary'), { recoverable: false });
        return { handle: { pid: 1 } };
      }),
      driverWait: fromPromise<ExitResult, DriverCallInput>(() => {
        waits++;
        return new Promise((resolve) => (exitWorkload = resolve));
      }),
      driverShutdown: fromPromise<void, DriverShutdownInput>(async ({ input }) => {
        calls.push(`shutdown:${input.signal}`);
        exitWorkload?.({ exitCode: 130, signal: 2 });
      }),
      driverTerminate: fromPromise<void, DriverCallInput>(async () => void calls.push('terminate')),
      driverSignal: fromPromise<void, DriverCallInput & { signal: string }>(async ({ input }) => void calls.push(`signal:${input.signal}`)),
    },
  });
  return { machine, calls, exit: (r: ExitResult) => exitWorkload!(r), waits: () => waits };
}

function start(machine: ReturnType<typeof stubs>['machine'], input: Partial<TaskRunnerInput> = {}) {
  const clock = new SimulatedClock(0);
  const actor = createActor(machine, { clock, input: { allocId: 'a1', task, jobType: 'batch', parkWhenDead: false, ...input } }).start();
  return { clock, actor, value: () => actor.getSnapshot().value };
}

const RUNNING = { running: { active: { poststart: 'done', updates: 'idle' } } };

describe('taskRunnerMachine with stub actors', () => {
  it('waits at the gate until it opens, then starts the workload', async () => {
    const s = stubs();
    const { actor, value } = start(s.machine, { gateOpen: false });
    expect(value()).toEqual({ pending: 'gate' });
    actor.send({ type: 'GATE', open: true });
    expect(value()).toEqual({ pending: 'starting' });
    await settle();
    expect(value()).toEqual(RUNNING);
  });

  // Each microstep is a machine snapshot and a scan of every eventless transition: the GATE that opens a
  // waiting gate goes on in its own, not in a second one for the gate's `always`. Task events as before.
  // With prestart hooks it enters the phase at its first hook's call, not at `next` (one step more to pick it).
  it.each<[string, TaskRunnerInput['hooks'], unknown, number]>([
    ['no prestart hooks', {}, { pending: 'starting' }, 1],
    ['prestart hooks', { prestart: ['a'] }, { pending: { prestart: 'calling' } }, 1],
  ])('opens its gate and goes on in one microstep (%s); a GATE that does not open it stays', (_n, hooks, after, opening) => {
    const s = stubs();
    const clock = new SimulatedClock(0);
    const steps: string[] = [];
    const actor = createActor(s.machine, {
      clock,
      input: { allocId: 'a1', task, jobType: 'batch', parkWhenDead: false, gateOpen: false, hooks },
      inspect: (e) => void (e.type === '@xstate.microstep' && e.actorRef === actor && steps.push(e.event.type)),
    }).start();
    steps.length = 0;
    actor.send({ type: 'GATE', open: false });
    expect(actor.getSnapshot().value).toEqual({ pending: 'gate' });
    actor.send({ type: 'GATE', open: true });
    expect(steps).toEqual(Array(1 + opening).fill('GATE'));
    expect(actor.getSnapshot().value).toEqual(after);
    expect(actor.getSnapshot().context.taskState.events.map((e) => e.type)).toEqual(['Received', 'Task Setup']);
    actor.stop();
  });

  it('calls prestart hooks one at a time as <phase>:<hook> children before starting', async () => {
    const s = stubs();
    const { actor, value } = start(s.machine, { hooks: { prestart: ['a', 'b'] } });
    expect(value()).toEqual({ pending: { prestart: 'calling' } });
    expect(Object.keys(actor.getSnapshot().children)).toEqual(['prestart:a']);
    await settle();
    expect(s.calls).toEqual(['prestart:a', 'prestart:b', 'start']);
    expect(value()).toEqual(RUNNING);
  });

  it('ends a batch task that exits 0 in terminal.stopped, through its exited and stop hooks', async () => {
    const s = stubs();
    const { actor, value } = start(s.machine, { hooks: { exited: ['logs'], stop: ['logs'] } });
    await settle();
    s.exit({ exitCode: 0, signal: 0 });
    await settle();
    expect(value()).toEqual({ terminal: 'stopped' });
    expect(actor.getSnapshot().context.runComplete).toBe(true);
    expect(s.calls).toEqual(['start', 'exited:logs', 'stop:logs']);
  });

  it('keeps the one driver:wait while it kills: KILL moves running.active to running.killing', async () => {
    const s = stubs();
    const { actor, value, clock } = start(s.machine, { hooks: { preKilling: ['drain'] } });
    await settle();
    const wait = actor.getSnapshot().children['driver:wait'];
    actor.send({ type: 'KILL' });
    expect(value()).toEqual({ running: { killing: { preKill: 'calling' } } });
    expect(actor.getSnapshot().children['driver:wait']).toBe(wait);
    await clock.advance(1);
    expect(s.calls).toEqual(['start', 'preKilling:drain', 'shutdown:SIGINT']);
    expect(value()).toEqual({ terminal: 'stopped' });
    expect(s.waits()).toBe(1);
  });

  it('force-kills at the kill timeout when the workload ignores its signal', async () => {
    const s = stubs();
    const machine = s.machine.provide({ actors: { driverShutdown: fromPromise<void, DriverShutdownInput>(async () => {}) } });
    const { actor, value, clock } = start(machine, { task: { ...task, killTimeout: 2_000 } });
    await settle();
    actor.send({ type: 'KILL' });
    await settle();
    expect(value()).toEqual({ running: { killing: 'signalling' } });
    await clock.advance(2_000);
    expect(value()).toEqual({ running: { killing: 'awaitingExit' } });
    expect(s.calls).toContain('terminate');
    s.exit({ exitCode: 137, signal: 9 });
    await settle();
    expect(value()).toEqual({ terminal: 'stopped' });
  });

  it('restarts a failed service through pending.restartDelay, skipping prestart hooks that reported Done', async () => {
    const s = stubs({ hookOutput: (i) => (i.hook === 'artifact' ? { done: true, env: { FETCHED: '1' } } : {}) });
    const { actor, value, clock } = start(s.machine, {
      jobType: 'service',
      hooks: { prestart: ['artifact', 'template'] },
      groupRestart: { attempts: 2, interval: 60_000, delay: 1_000, mode: 'fail' },
    });
    await settle();
    s.exit({ exitCode: 1, signal: 0 });
    await settle();
    expect(value()).toEqual({ pending: 'restartDelay' });
    await clock.advance(1_250);
    expect(value()).toEqual(RUNNING);
    expect(s.calls).toEqual(['prestart:artifact', 'prestart:template', 'start', 'prestart:template', 'start']);
    expect(actor.getSnapshot().context.hookEnv).toEqual({ FETCHED: '1' });
    expect(actor.getSnapshot().context.taskState.restarts).toBe(1);
  });

  it('fails the start on a prestart hook error and lets the restart policy decide', async () => {
    const s = stubs({ failHook: 'prestart:vault' });
    const { value } = start(s.machine, { hooks: { prestart: ['vault'] }, groupRestart: { attempts: 0, interval: 1, delay: 1, mode: 'fail' } });
    await settle();
    expect(value()).toEqual({ terminal: 'stopped' });
    expect(s.calls).toEqual(['prestart:vault']);
  });

  it('records an unrecoverable start error and never restarts', async () => {
    const s = stubs({ failStart: true });
    const { actor, value } = start(s.machine, { jobType: 'service' });
    await settle();
    expect(value()).toEqual({ terminal: 'stopped' });
    expect(actor.getSnapshot().context.taskState.events.map((e) => e.type)).toEqual(['Received', 'Task Setup', 'Driver Failure', 'Not Restarting']);
  });

  it('parks a dead task under an alloc until the alloc restarts or kills it', async () => {
    const s = stubs();
    const { actor, value } = start(s.machine, { parkWhenDead: true });
    await settle();
    s.exit({ exitCode: 0, signal: 0 });
    await settle();
    expect(value()).toEqual({ terminal: 'parked' });
    actor.send({ type: 'RESTART', force: true });
    expect(value()).toEqual({ pending: 'starting' });
    await settle();
    actor.send({ type: 'KILL' });
    await settle();
    expect(value()).toEqual({ terminal: 'stopped' });
  });

  it('detaches on SHUTDOWN through its shutdown hooks, leaving the workload alone', async () => {
    const s = stubs();
    const { actor, value } = start(s.machine, { hooks: { shutdown: ['logmon'] } });
    await settle();
    actor.send({ type: 'SHUTDOWN' });
    expect(value()).toEqual({ detaching: 'calling' });
    await settle();
    expect(value()).toBe('detached');
    expect(s.calls).toEqual(['start', 'shutdown:logmon']);
  });

  it('runs update hooks in running.active.updates without leaving running', async () => {
    const s = stubs();
    const { actor, value } = start(s.machine, { hooks: { update: ['template'] } });
    await settle();
    actor.send({ type: 'UPDATE', alloc: { id: 'a1', job: 'j', group: 'g', type: 'batch', tasks: [task] } });
    expect(value()).toEqual({ running: { active: { poststart: 'done', updates: { updating: 'calling' } } } });
    await settle();
    expect(value()).toEqual(RUNNING);
    expect(s.calls).toEqual(['start', 'update:template']);
  });
});
