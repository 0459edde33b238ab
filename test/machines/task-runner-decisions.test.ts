/**
 * The task runner's decisions after a run ends (Nomad's restart tracker flags: killed, restart requested,
 * start error, exit), and what kills, restarts and updates leave behind: the task state, its events, the
 * attempt each driver start gets and whether the task is stopped or parked. Stub actors, simulated clock.
 */
import { describe, expect, it } from 'vitest';
import type { AllocSpec, RestartPolicy } from '../../machines/model.ts';
import type { CommandRejection } from '../../machines/task-runner.ts';
import { settle } from '../../src/testing/simulated-clock.ts';
import { failure, forever, stubRunner, webTask } from './stub-task-runner.ts';

const retry: RestartPolicy = { attempts: 3, interval: 60 * 60_000, delay: 1_000, mode: 'fail' };
const alloc = (extra: Partial<AllocSpec> = {}): AllocSpec => ({ id: 'a1', job: 'j', group: 'g', type: 'service', tasks: [webTask], ...extra });

describe('task runner: what each run is judged as', () => {
  it('numbers each driver start: the first start is attempt 1 and the restart after a failed run is attempt 2', async () => {
    const r = stubRunner({ groupRestart: retry });
    await settle();
    r.exit({ exitCode: 1, signal: 0 });
    await r.clock.advanceUntil(() => r.starts.length === 2);
    expect(r.starts.map((s) => s.attempt)).toEqual([1, 2]);
  });

  it('restarts a task at once on a user restart, signalled with the reason "User requested restart"', async () => {
    const r = stubRunner({ groupRestart: retry });
    await settle();
    r.actor.send({ type: 'RESTART' });
    await r.clock.advance(0);
    expect(r.types()).toEqual(['Received', 'Task Setup', 'Started', 'Restart Signaled', 'Terminated', 'Restarting', 'Started']);
    expect(r.events()[3]).toEqual({ type: 'Restart Signaled', time: 1_000, restartReason: 'User requested restart', displayMessage: 'User requested restart' });
    expect(r.events()[5]).toMatchObject({ type: 'Restarting', startDelay: 0 });
    expect(r.starts.map((s) => s.attempt)).toEqual([1, 2]);
    expect(r.state()).toMatchObject({ state: 'running', restarts: 1, failed: false });
  });

  it('ends a run the dead agent had begun to kill (stoppedByAgent) as a kill: Killed, no restart, and the task is stopped, not parked', async () => {
    const r = stubRunner({ groupRestart: retry, parkWhenDead: true, hooks: { stop: ['logs'] } });
    await settle();
    r.exit({ exitCode: 143, signal: 15, stoppedByAgent: true });
    await settle();
    expect(r.types()).toEqual(['Received', 'Task Setup', 'Started', 'Terminated', 'Killed']);
    expect(r.state()).toMatchObject({ state: 'dead', failed: false, restarts: 0 });
    expect(r.value()).toEqual({ terminal: 'stopped' });
    expect(r.hookCalls.map((c) => `${c.phase}:${c.hook}`)).toEqual(['stop:logs']);
    expect(r.ctx().killRequested).toBe(true);
  });

  it('ends a run the dead agent had begun to restart (stoppedFor restart) as a user restart: Restarting at once, started again, not a failure', async () => {
    const r = stubRunner({ groupRestart: retry, parkWhenDead: true });
    await settle();
    r.exit({ exitCode: 130, signal: 2, stoppedByAgent: true, stoppedFor: 'restart' });
    await r.clock.advanceUntil(() => r.starts.length === 2);
    expect(r.types()).toEqual(['Received', 'Task Setup', 'Started', 'Terminated', 'Restarting', 'Started']);
    expect(r.events()[4]).toMatchObject({ type: 'Restarting', startDelay: 0 });
    expect(r.state()).toMatchObject({ state: 'running', failed: false, restarts: 1 });
    expect(r.ctx().killRequested).toBeFalsy();
  });

  it('judges a workload whose wait resolves without an exit result as a clean exit (code 0): a batch task completes', async () => {
    const r = stubRunner({ jobType: 'batch', groupRestart: retry });
    await settle();
    r.exit(undefined);
    await settle();
    expect(r.events().at(-1)).toEqual({ type: 'Terminated', time: 1_000, exitCode: 0, signal: 0, displayMessage: 'Exit Code: 0' });
    expect(r.state()).toMatchObject({ state: 'dead', failed: false, restarts: 0 });
    expect(r.starts).toHaveLength(1);
  });

  it('records a workload lost while nobody watched it as Failed Restoring Task, an exit with code -1 that the restart policy retries', async () => {
    const r = stubRunner({ groupRestart: retry, hooks: { exited: ['logs'] } });
    await settle();
    r.lose(failure('no such process'));
    await settle();
    const lost = r.events().find((e) => e.type === 'Failed Restoring Task');
    expect(lost).toEqual({
      type: 'Failed Restoring Task', time: 1_000, message: 'lost the workload: no such process', displayMessage: 'lost the workload: no such process',
    });
    expect(r.hookCalls[0]).toMatchObject({ phase: 'exited', exit: { exitCode: -1, signal: 0, err: 'lost the workload: no such process' } });
    expect(r.types().slice(-2)).toEqual(['Failed Restoring Task', 'Restarting']);
    expect(r.value()).toEqual({ pending: 'restartDelay' });
  });

  it('never retries a start that failed validation, even one the driver calls recoverable, and marks the task failed', async () => {
    const r = stubRunner({ groupRestart: retry }, { start: () => Promise.reject(failure('config.command is required', { eventType: 'Failed Validation', recoverable: true })) });
    await settle();
    expect(r.types()).toEqual(['Received', 'Task Setup', 'Failed Validation', 'Not Restarting']);
    expect(r.events()[2]).toEqual({
      type: 'Failed Validation', time: 1_000, message: 'config.command is required', failsTask: true, displayMessage: 'config.command is required',
    });
    expect(r.events()[3]!.displayMessage).toBe('Error was unrecoverable');
    expect(r.starts).toHaveLength(1);
    expect(r.state()).toMatchObject({ state: 'dead', failed: true });
  });

  it('treats a start error that does not say it is recoverable as unrecoverable: Driver Failure, then Not Restarting', async () => {
    const r = stubRunner({ groupRestart: retry }, { start: () => Promise.reject(new Error('exec format error')) });
    await settle();
    expect(r.types()).toEqual(['Received', 'Task Setup', 'Driver Failure', 'Not Restarting']);
    expect(r.events()[2]).toEqual({ type: 'Driver Failure', time: 1_000, message: 'exec format error', displayMessage: 'exec format error' });
    expect(r.events()[3]!.displayMessage).toBe('Error was unrecoverable');
    expect(r.starts).toHaveLength(1);
    expect(r.state()).toMatchObject({ state: 'dead', failed: true });
  });

  it('keeps a user restart a restart even when the driver reports that the agent stopped the workload', async () => {
    const r = stubRunner({ groupRestart: retry }, {
      shutdown: async () => r.exit({ exitCode: 143, signal: 15, stoppedByAgent: true }),
    });
    await settle();
    r.actor.send({ type: 'RESTART' });
    await r.clock.advance(0);
    expect(r.types().slice(3)).toEqual(['Restart Signaled', 'Terminated', 'Restarting', 'Started']);
    expect(r.state()).toMatchObject({ state: 'running', restarts: 1, failed: false });
    expect(r.ctx().killRequested).toBe(false);
  });

  it('records a failed validation by a prestart hook as the hook\'s own message, failing the task for good', async () => {
    const r = stubRunner({ groupRestart: retry, hooks: { prestart: ['validate'] } }, {
      hook: () => { throw failure('task name must not be empty', { eventType: 'Failed Validation', recoverable: true }); },
    });
    await settle();
    expect(r.types()).toEqual(['Received', 'Task Setup', 'Failed Validation', 'Not Restarting']);
    expect(r.events()[2]).toEqual({
      type: 'Failed Validation', time: 1_000, message: 'task name must not be empty', details: { hook: 'validate' }, failsTask: true,
      displayMessage: 'task name must not be empty',
    });
    expect(r.starts).toHaveLength(0);
    expect(r.state()).toMatchObject({ state: 'dead', failed: true, restarts: 0 });
  });

  it('names the hook in a failed prestart and retries it under the restart policy', async () => {
    const r = stubRunner({ groupRestart: retry, hooks: { prestart: ['artifact'] } }, {
      hook: () => { throw failure('connection refused'); },
    });
    await settle();
    expect(r.events()[2]).toEqual({
      type: 'Task hook failed', time: 1_000, message: 'artifact: connection refused', details: { hook: 'artifact' }, displayMessage: 'artifact: connection refused',
    });
    expect(r.types().at(-1)).toBe('Restarting');
  });
});

describe('task runner: kills', () => {
  it('fails a running task on FAIL_SETUP: Setup Failure, the driver stops the same workload, and the task is stopped, not parked', async () => {
    const r = stubRunner({ groupRestart: retry, parkWhenDead: true });
    await settle();
    r.actor.send({ type: 'FAIL_SETUP', reason: 'network setup failed' });
    await settle();
    expect(r.events()[3]).toEqual({ type: 'Setup Failure', time: 1_000, message: 'network setup failed', failsTask: true, displayMessage: 'network setup failed' });
    expect(r.shutdowns.map((s) => s.handle)).toEqual([{ pid: 1 }]);
    expect(r.types().slice(-2)).toEqual(['Terminated', 'Killed']);
    expect(r.state()).toMatchObject({ state: 'dead', failed: true });
    expect(r.value()).toEqual({ terminal: 'stopped' });
  });

  it('kills a task the updated allocation no longer holds, with a Killing event that fails it', async () => {
    const r = stubRunner({ groupRestart: retry, task: { ...webTask, killTimeout: 3_000 } });
    await settle();
    r.actor.send({ type: 'UPDATE', alloc: alloc({ tasks: [{ ...webTask, name: 'db' }] }) });
    await settle();
    expect(r.events()[3]).toEqual({
      type: 'Killing', time: 1_000, message: 'task is no longer in the allocation', failsTask: true, killTimeout: 3_000,
      displayMessage: 'Sent interrupt. Waiting 3s before force killing',
    });
    expect(r.state()).toMatchObject({ state: 'dead', failed: true });
  });

  it('stops the workload with the kill signal of the task as last updated', async () => {
    const r = stubRunner({ groupRestart: retry });
    await settle();
    r.actor.send({ type: 'UPDATE', alloc: alloc({ tasks: [{ ...webTask, killSignal: 'SIGTERM', killTimeout: 7_000 }] }) });
    await settle();
    r.actor.send({ type: 'KILL' });
    await settle();
    expect(r.shutdowns.map((s) => [s.signal, s.timeout])).toEqual([['SIGTERM', 7_000]]);
    expect(r.events().find((e) => e.type === 'Killing')!.killTimeout).toBe(7_000);
  });

  it('sends no Killing event when killing a task that already finished once and has not run since its force restart', async () => {
    let prestarts = 0;
    const r = stubRunner({ groupRestart: retry, parkWhenDead: true, jobType: 'batch', hooks: { prestart: ['artifact'] } }, {
      hook: () => (++prestarts === 1 ? {} : forever()),
    });
    await settle();
    r.exit({ exitCode: 0, signal: 0 });
    await settle();
    expect(r.value()).toEqual({ terminal: 'parked' });
    r.actor.send({ type: 'RESTART', force: true });
    await settle();
    r.actor.send({ type: 'KILL' });
    await settle();
    expect(r.types()).toEqual(['Received', 'Task Setup', 'Started', 'Terminated', 'Restart Signaled', 'Restarting']);
    expect(r.state().state).toBe('dead');
  });
});

describe('task runner: a dead task under its alloc (parked)', () => {
  async function parked(input: Parameters<typeof stubRunner>[0] = {}) {
    const r = stubRunner({ jobType: 'batch', groupRestart: retry, parkWhenDead: true, ...input });
    await settle();
    r.exit({ exitCode: 0, signal: 0 });
    await settle();
    expect(r.value()).toEqual({ terminal: 'parked' });
    return r;
  }

  it('refuses a plain RESTART of a dead task with ErrTaskNotRunning and stays dead', async () => {
    const r = await parked();
    const rejected: CommandRejection[] = [];
    r.actor.on('command.rejected', (e) => rejected.push(e.rejection));
    r.actor.send({ type: 'RESTART' });
    expect(r.value()).toEqual({ terminal: 'parked' });
    expect(rejected).toEqual([{ command: 'RESTART', code: 'ErrTaskNotRunning', message: 'cannot restart task "web": the task is dead', time: 1_000 }]);
    expect(r.starts).toHaveLength(1);
  });

  it('force-restarts a dead task at once: Restart Signaled, Restarting with no delay, pending, and the next start is attempt 2', async () => {
    const r = await parked();
    r.actor.send({ type: 'RESTART', force: true });
    expect(r.state()).toMatchObject({ state: 'pending', restarts: 1 });
    expect(r.events().slice(-2)).toEqual([
      { type: 'Restart Signaled', time: 1_000, restartReason: 'User requested restart', displayMessage: 'User requested restart' },
      { type: 'Restarting', time: 1_000, startDelay: 0, displayMessage: 'Task restarting in 0s' },
    ]);
    await settle();
    expect(r.starts.map((s) => s.attempt)).toEqual([1, 2]);
    expect(r.state().state).toBe('running');
  });

  it('judges the run after a force restart on its own exit: a clean batch exit completes without a restart', async () => {
    const r = await parked();
    r.actor.send({ type: 'RESTART', force: true });
    await settle();
    r.exit({ exitCode: 0, signal: 0 });
    await settle();
    expect(r.value()).toEqual({ terminal: 'parked' });
    expect(r.state()).toMatchObject({ state: 'dead', failed: false, restarts: 1 });
  });

  it('marks a parked task killed when its alloc kills it, so it is only ever stopped', async () => {
    const r = await parked({ hooks: { stop: ['logs'] } });
    expect(r.ctx().killRequested).toBe(false);
    r.actor.send({ type: 'KILL' });
    await settle();
    expect(r.ctx().killRequested).toBe(true);
    expect(r.value()).toEqual({ terminal: 'stopped' });
  });
});

describe('task runner: alloc updates', () => {
  it('runs update hooks for an alloc update, but not for an update that stops the alloc', async () => {
    const r = stubRunner({ groupRestart: retry, hooks: { update: ['template'] } });
    await settle();
    r.actor.send({ type: 'UPDATE', alloc: alloc({ desiredStatus: 'stop', modifyIndex: 2 }) });
    await settle();
    expect(r.hookCalls).toHaveLength(0);
    r.actor.send({ type: 'UPDATE', alloc: alloc({ modifyIndex: 3 }) });
    await settle();
    expect(r.hookCalls.map((c) => [c.phase, c.alloc?.modifyIndex])).toEqual([['update', 3]]);
  });

  it('gives prestart hooks the newest alloc the task heard of before it started', async () => {
    const r = stubRunner({ groupRestart: retry, gateOpen: false, hooks: { prestart: ['template'] } });
    const update = alloc({ modifyIndex: 4, meta: { version: '2' } });
    r.actor.send({ type: 'UPDATE', alloc: update });
    r.actor.send({ type: 'GATE', open: true });
    await settle();
    expect(r.hookCalls.map((c) => [c.phase, c.alloc])).toEqual([['prestart', update]]);
  });
});
