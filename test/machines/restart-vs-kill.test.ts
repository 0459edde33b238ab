/**
 * What a restart skips that a kill does (Nomad's TaskRunner.Restart vs Kill/handleKill): both run the
 * preKilling hooks and stop the workload, but only a kill waits out shutdown_delay, emits Killing/Killed, marks
 * the tracker killed and ends the task with its stop hooks; a restart emits Restart Signaled and runs again.
 */
import { describe, expect, it } from 'vitest';
import { createTaskRunner, createAllocRunner } from '../../src/index.ts';
import type { TaskSpec } from '../../machines/model.ts';
import { recordingTaskHook, SimulatedClock, type HookCall } from '../../src/testing/index.ts';

const noRestart = { attempts: 0, interval: 3_600_000, delay: 1_000, mode: 'fail' as const };

function run(extra: Partial<TaskSpec> = {}) {
  const clock = new SimulatedClock(0);
  const log: HookCall[] = [];
  const t: TaskSpec = { name: 'web', driver: 'mock', config: { run_for: '1h' }, shutdownDelay: 5_000, restart: noRestart, ...extra };
  const runner = createTaskRunner(t, { clock, hooks: [recordingTaskHook('rec', log)], seed: 1 }).start();
  const types = () => runner.getState().events.map((e) => e.type);
  const methods = () => log.map((c) => c.method);
  return { clock, runner, types, methods };
}

describe('restart vs kill', () => {
  it('both run the preKilling hooks; only a kill waits out shutdown_delay', async () => {
    const restart = run();
    await restart.clock.advance(1);
    restart.runner.send({ type: 'RESTART' });
    await restart.clock.advance(1);
    expect(restart.methods()).toContain('preKilling');
    expect(restart.types()).not.toContain('Waiting for shutdown delay');
    expect(restart.runner.getState()).toMatchObject({ state: 'running', restarts: 1 });

    const kill = run();
    await kill.clock.advance(1);
    kill.runner.send({ type: 'KILL' });
    await kill.clock.advance(1);
    expect(kill.methods()).toContain('preKilling');
    expect(kill.types()).toContain('Waiting for shutdown delay');
    expect(kill.runner.getState().state).not.toBe('dead');
    await kill.clock.advance(5_000);
    expect(kill.runner.getState().state).toBe('dead');
  });

  it('a restart emits Restart Signaled and no Killing/Killed; a kill emits Killing and Killed and no Restarting', async () => {
    const restart = run({ shutdownDelay: 0 });
    await restart.clock.advance(1);
    restart.runner.send({ type: 'RESTART' });
    await restart.clock.advance(1);
    expect(restart.types()).toEqual(['Received', 'Task Setup', 'Started', 'Restart Signaled', 'Terminated', 'Restarting', 'Started']);

    const kill = run({ shutdownDelay: 0 });
    await kill.clock.advance(1);
    kill.runner.send({ type: 'KILL' });
    await kill.clock.advance(1);
    expect(kill.types()).toEqual(['Received', 'Task Setup', 'Started', 'Killing', 'Terminated', 'Killed']);
  });

  it('stop hooks run after a kill, never after a restart; the exited hooks run after both', async () => {
    const restart = run({ shutdownDelay: 0 });
    await restart.clock.advance(1);
    restart.runner.send({ type: 'RESTART' });
    await restart.clock.advance(1);
    expect(restart.methods().filter((m) => m === 'stop')).toHaveLength(0);
    expect(restart.methods().filter((m) => m === 'exited')).toHaveLength(1);
    expect(restart.methods().filter((m) => m === 'prestart')).toHaveLength(2);

    const kill = run({ shutdownDelay: 0 });
    await kill.clock.advance(1);
    kill.runner.send({ type: 'KILL' });
    await kill.clock.advance(1);
    expect(kill.methods().filter((m) => m === 'stop')).toHaveLength(1);
    expect(kill.methods().filter((m) => m === 'exited')).toHaveLength(1);
  });

  it('a user restart is not counted by the restart policy (attempts 0 still runs again); a failure-flagged one is', async () => {
    const plain = run({ shutdownDelay: 0 });
    await plain.clock.advance(1);
    plain.runner.send({ type: 'RESTART' });
    await plain.clock.advance(1);
    expect(plain.runner.getState()).toMatchObject({ state: 'running', failed: false });

    const failure = run({ shutdownDelay: 0 });
    await failure.clock.advance(1);
    failure.runner.send({ type: 'RESTART', failure: true });
    await failure.clock.advance(1);
    expect(failure.types()).toContain('Not Restarting');
    expect(failure.runner.getState()).toMatchObject({ state: 'dead', failed: true });
  });

  it('a kill during the restart delay ends the task; a restart there is refused', async () => {
    const t = run({ config: { run_for: '1s', exit_code: 1 }, restart: { attempts: 2, interval: 3_600_000, delay: 10_000, mode: 'fail' } });
    await t.clock.advance(1_000);
    expect(t.types().at(-1)).toBe('Restarting');
    t.runner.send({ type: 'RESTART' });
    await t.clock.advance(1);
    expect(t.runner.actor.getSnapshot().context.rejections.map((r) => r.code)).toEqual(['ErrTaskNotRunning']);
    t.runner.send({ type: 'KILL' });
    await t.clock.advance(1);
    expect(t.runner.getState()).toMatchObject({ state: 'dead', failed: false });
    await t.clock.advance(60_000);
    expect(t.types().filter((e) => e === 'Started')).toHaveLength(1);
  });

  it('at the alloc: RESTART keeps the alloc running with no preKill hooks; KILL runs them and ends it', async () => {
    const log: HookCall[] = [];
    const clock = new SimulatedClock(0);
    const spec = { id: 'rk', job: 'j', group: 'g', type: 'service' as const, tasks: [{ name: 'web', driver: 'mock', config: { run_for: '1h' } }] };
    const { recordingAllocHook } = await import('../../src/testing/index.ts');
    const runner = createAllocRunner(spec, { clock, builtinHooks: false, allocHooks: [recordingAllocHook('rec', log, {}, ['preKill', 'postrun'])] }).start();
    await clock.advance(1);
    runner.send({ type: 'RESTART' });
    await clock.advance(1);
    expect(log.map((c) => c.method)).toEqual([]);
    expect(runner.getState().clientStatus).toBe('running');
    runner.send({ type: 'KILL' });
    await clock.advance(1);
    await runner.done;
    expect(log.map((c) => c.method)).toEqual(['preKill', 'postrun']);
  });
});
