import { describe, expect, it } from 'vitest';
import { createTaskRunner, type TaskRunnerOptions } from '../../src/runtime/create-task-runner.ts';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.ts';
import type { Driver, DriverContext } from '../../src/drivers/controller.ts';
import { HookError, type TaskHook } from '../../src/hooks/types.ts';
import type { TaskSpec } from '../../src/jobspec/types.ts';
import { SimulatedClock, settle } from '../../src/testing/simulated-clock.ts';
import { recordingTaskHook, untilAborted, type HookCall } from '../../src/testing/hook-recorder.ts';

const MIN = 60_000;

function mockTask(config: Record<string, unknown>, extra: Partial<TaskSpec> = {}): TaskSpec {
  return { name: 'web', driver: 'mock', config, ...extra };
}

function setup(task: TaskSpec, opts: TaskRunnerOptions = {}) {
  const clock = new SimulatedClock(1_000);
  const mock = createMockDriver();
  const runner = createTaskRunner(task, { clock, drivers: { mock }, seed: 7, ...opts }).start();
  const types = () => runner.getState().events.map((e) => e.type);
  const value = () => runner.actor.getSnapshot().value;
  return { clock, mock, runner, types, value };
}

describe('task runner: a clean run', () => {
  it('runs a batch task to completion with Nomad event order and no restart', async () => {
    const log: HookCall[] = [];
    const { clock, runner, types } = setup(mockTask({ run_for: '10s' }), {
      jobType: 'batch',
      hooks: [recordingTaskHook('recorder', log)],
    });
    await clock.advance(1);
    expect(runner.getState().state).toBe('running');
    await clock.advance(10_000);
    const final = await runner.done;
    expect(types()).toEqual(['Received', 'Task Setup', 'Started', 'Terminated']);
    expect(final).toMatchObject({ state: 'dead', failed: false, restarts: 0, startedAt: 1_000, finishedAt: 11_000 });
    expect(log.map((c) => c.method)).toEqual(['prestart', 'poststart', 'exited', 'stop']);
  });

  it('records the exit code and signal in the Terminated event', async () => {
    const { clock, runner } = setup(mockTask({ run_for: '1s', exit_code: 3, exit_signal: 0 }), {
      groupRestart: { attempts: 0, interval: 30 * MIN, delay: 15_000, mode: 'fail' },
    });
    await clock.advance(1_000);
    const ev = runner.getState().events.find((e) => e.type === 'Terminated');
    expect(ev).toMatchObject({ exitCode: 3, signal: 0, displayMessage: 'Exit Code: 3' });
  });
});

describe('task runner: restarts', () => {
  const failing = () => mockTask({ run_for: '1s', exit_code: 1 });

  it('restarts a failing task `attempts` times, then stops with Not Restarting in mode fail', async () => {
    const { clock, runner, types } = setup(failing(), {
      groupRestart: { attempts: 2, interval: 30 * MIN, delay: 15_000, mode: 'fail' },
    });
    await clock.advanceUntil(() => runner.getState().state === 'dead');
    expect(types()).toEqual([
      'Received', 'Task Setup', 'Started', 'Terminated', 'Restarting',
      'Started', 'Terminated', 'Restarting', 'Started', 'Terminated', 'Not Restarting',
    ]);
    const state = runner.getState();
    expect(state.failed).toBe(true);
    expect(state.restarts).toBe(2);
    const delays = state.events.filter((e) => e.type === 'Restarting').map((e) => e.startDelay!);
    for (const d of delays) expect(d).toBeGreaterThanOrEqual(15_000), expect(d).toBeLessThan(18_750);
    expect(state.events.at(-1)!.displayMessage).toBe('Exceeded allowed attempts 2 in interval 30m0s and mode is "fail"');
  });

  it('waits out the rest of the interval in mode delay, then restarts again', async () => {
    const interval = 5 * MIN;
    const { clock, runner } = setup(failing(), { groupRestart: { attempts: 2, interval, delay: 15_000, mode: 'delay' } });
    await clock.advanceUntil(() => runner.getState().restarts === 3);
    const restarting = runner.getState().events.filter((e) => e.type === 'Restarting');
    const third = restarting[2]!;
    expect(third.displayMessage).toMatch(/^Task restarting in/);
    expect(third.startDelay!).toBeGreaterThan(18_750);
    expect(third.startDelay!).toBeLessThanOrEqual(interval);
    expect(runner.getState().failed).toBe(false);
    // After the delay the window has expired, so the count starts again and the task runs.
    await clock.advance(third.startDelay!);
    expect(runner.getState().state).toBe('running');
  });

  it('restarts a running task on RESTART without counting it against the policy', async () => {
    const { clock, runner, types } = setup(mockTask({ run_for: '1h' }), {
      groupRestart: { attempts: 0, interval: 30 * MIN, delay: 15_000, mode: 'fail' },
    });
    await clock.advance(1);
    runner.send({ type: 'RESTART' });
    await clock.advance(1);
    expect(types()).toEqual(['Received', 'Task Setup', 'Started', 'Restart Signaled', 'Terminated', 'Restarting', 'Started']);
    expect(runner.getState()).toMatchObject({ state: 'running', restarts: 1, failed: false });
  });

  it('fails the task without restarting on an unrecoverable start error', async () => {
    const { clock, runner, types } = setup(mockTask({ start_error: 'no such image' }));
    await clock.advance(1);
    expect(types()).toEqual(['Received', 'Task Setup', 'Driver Failure', 'Not Restarting']);
    expect(runner.getState()).toMatchObject({ state: 'dead', failed: true });
    expect(runner.getState().events.at(-1)!.displayMessage).toBe('Error was unrecoverable');
  });

  it('retries a recoverable start error under the restart policy', async () => {
    const { clock, runner } = setup(mockTask({ start_error: 'port busy', start_error_recoverable: true }), {
      groupRestart: { attempts: 1, interval: 30 * MIN, delay: 1_000, mode: 'fail' },
    });
    await clock.advanceUntil(() => runner.getState().state === 'dead');
    expect(runner.getState().events.map((e) => e.type)).toEqual([
      'Received', 'Task Setup', 'Driver Failure', 'Restarting', 'Driver Failure', 'Not Restarting',
    ]);
  });

  it('reports a bad driver config as Failed Validation and never restarts', async () => {
    const { clock, runner } = setup(mockTask({ run_for: 'soon' }));
    await clock.advance(1);
    const failure = runner.getState().events.find((e) => e.type === 'Failed Validation');
    expect(failure?.displayMessage).toContain('config.run_for');
    expect(runner.getState()).toMatchObject({ state: 'dead', failed: true });
  });
});

describe('task runner: prestart hooks', () => {
  it('skips a Done prestart hook after a restart but keeps its env', async () => {
    const log: HookCall[] = [];
    const seenEnv: Record<string, string>[] = [];
    const artifact = recordingTaskHook('artifact', log, {
      prestart: async (_req, res) => {
        res.env = { ARTIFACT_PATH: '/local/app.tar' };
        res.done = true;
      },
    }, ['prestart']);
    const template = recordingTaskHook('template', log, {
      prestart: async (req) => {
        seenEnv.push({ ...req.env });
      },
    }, ['prestart']);
    const driverEnvs: Record<string, string>[] = [];
    const mock = createMockDriver();
    const spy: Driver = {
      name: 'mock',
      controller: (task: TaskSpec, ctx: DriverContext) => {
        driverEnvs.push({ ...ctx.env });
        return mock.controller(task, ctx);
      },
    };
    const { clock, runner } = setup(mockTask({ run_for: '1s', exit_code: 1 }), {
      drivers: { mock: spy },
      hooks: [artifact, template],
      groupRestart: { attempts: 1, interval: 30 * MIN, delay: 1_000, mode: 'fail' },
    });
    await clock.advanceUntil(() => runner.getState().state === 'dead');
    expect(log.map((c) => c.hook)).toEqual(['artifact', 'template', 'template']);
    expect(seenEnv.map((e) => e.ARTIFACT_PATH)).toEqual(['/local/app.tar', '/local/app.tar']);
    expect(driverEnvs.map((e) => e.ARTIFACT_PATH)).toEqual(['/local/app.tar', '/local/app.tar']);
  });

  it('passes a hook its previous state on the next start', async () => {
    const previous: unknown[] = [];
    const counter: TaskHook = {
      name: 'counter',
      prestart: async (req, res) => {
        previous.push(req.previousState);
        res.state = { runs: ((req.previousState as { runs?: number } | undefined)?.runs ?? 0) + 1 };
      },
    };
    const { clock, runner } = setup(mockTask({ run_for: '1s', exit_code: 1 }), {
      hooks: [counter],
      groupRestart: { attempts: 2, interval: 30 * MIN, delay: 1_000, mode: 'fail' },
    });
    await clock.advanceUntil(() => runner.getState().state === 'dead');
    expect(previous).toEqual([undefined, { runs: 1 }, { runs: 2 }]);
  });

  it('records a failing prestart hook as Task hook failed and restarts when it is recoverable', async () => {
    let calls = 0;
    const flaky: TaskHook = {
      name: 'flaky',
      prestart: async () => {
        if (calls++ === 0) throw new Error('vault unreachable');
      },
    };
    const { clock, runner } = setup(mockTask({ run_for: '1h' }), {
      hooks: [flaky],
      groupRestart: { attempts: 2, interval: 30 * MIN, delay: 1_000, mode: 'fail' },
    });
    await clock.advanceUntil(() => runner.getState().state === 'running');
    const types = runner.getState().events.map((e) => e.type);
    expect(types).toEqual(['Received', 'Task Setup', 'Task hook failed', 'Restarting', 'Started']);
    expect(runner.getState().events[2]!.displayMessage).toBe('flaky: vault unreachable');
  });

  it('fails the task at once when a prestart hook error is unrecoverable', async () => {
    const bad: TaskHook = {
      name: 'validate',
      prestart: async () => {
        throw new HookError('task "web" has no command', false, 'Failed Validation');
      },
    };
    const { clock, runner, types } = setup(mockTask({ run_for: '1h' }), { hooks: [bad] });
    await clock.advance(1);
    expect(types()).toEqual(['Received', 'Task Setup', 'Failed Validation', 'Not Restarting']);
    expect(runner.getState().failed).toBe(true);
  });

  it('records poststart and exited hook errors without failing the task', async () => {
    const noisy: TaskHook = {
      name: 'noisy',
      poststart: async () => {
        throw new Error('consul down');
      },
      exited: async () => {
        throw new Error('still down');
      },
    };
    const { clock, runner, types } = setup(mockTask({ run_for: '1s' }), { hooks: [noisy], jobType: 'batch' });
    await clock.advance(1_000);
    expect(types()).toEqual(['Received', 'Task Setup', 'Started', 'Task hook failed', 'Terminated', 'Task hook failed']);
    expect(runner.getState()).toMatchObject({ state: 'dead', failed: false });
  });
});

describe('task runner: kill', () => {
  it('kills during prestart: the hook is aborted and the task goes dead with no Terminated or Killed', async () => {
    const log: HookCall[] = [];
    const blocking = recordingTaskHook('template', log, { prestart: async (_r, _s, abort) => untilAborted(abort) }, ['prestart', 'stop']);
    const { clock, runner, types, mock } = setup(mockTask({ run_for: '1h' }), { hooks: [blocking] });
    await clock.advance(1);
    expect(runner.actor.getSnapshot().matches({ pending: 'prestart' })).toBe(true);
    runner.send({ type: 'KILL' });
    await clock.advance(1);
    expect(types()).toEqual(['Received', 'Task Setup', 'Killing']);
    expect(log[0]!.aborted).toBe(true);
    expect(log.map((c) => c.method)).toEqual(['prestart', 'stop']);
    expect(mock.controllers).toHaveLength(0);
    expect(runner.getState().state).toBe('dead');
  });

  it('kills a running task: Killing, Terminated with the kill signal, then Killed', async () => {
    const { clock, runner, types } = setup(mockTask({ run_for: '1h' }, { killSignal: 'SIGTERM' }));
    await clock.advance(1);
    runner.send({ type: 'KILL' });
    await clock.advance(1);
    expect(types()).toEqual(['Received', 'Task Setup', 'Started', 'Killing', 'Terminated', 'Killed']);
    expect(runner.getState().events[4]).toMatchObject({ exitCode: 143, signal: 15 });
    expect(runner.getState()).toMatchObject({ state: 'dead', failed: false });
    expect(runner.actor.getSnapshot().matches({ terminal: 'stopped' })).toBe(true);
  });

  it('kills during the restart delay without starting the task again', async () => {
    const { clock, runner, types, mock } = setup(mockTask({ run_for: '1s', exit_code: 1 }));
    await clock.advance(1_000);
    expect(runner.actor.getSnapshot().matches({ pending: 'restartDelay' })).toBe(true);
    runner.send({ type: 'KILL' });
    await clock.advance(60_000);
    expect(types()).toEqual(['Received', 'Task Setup', 'Started', 'Terminated', 'Restarting', 'Killing']);
    expect(mock.controllers).toHaveLength(1);
    expect(runner.getState().state).toBe('dead');
  });

  it('force-kills a task that ignores the kill signal once kill_timeout passes', async () => {
    const { clock, runner, mock } = setup(mockTask({ run_for: '1h', kill_after: '10m' }, { killTimeout: 5_000, killSignal: 'SIGTERM' }));
    await clock.advance(1);
    runner.send({ type: 'KILL' });
    await clock.advance(4_999);
    expect(runner.getState().state).toBe('running');
    expect(runner.actor.getSnapshot().matches({ running: { killing: 'signalling' } })).toBe(true);
    await clock.advance(1);
    const terminated = runner.getState().events.find((e) => e.type === 'Terminated')!;
    expect(terminated).toMatchObject({ exitCode: 137, signal: 9, time: 1_001 + 5_000 });
    expect(mock.controllers[0]!.calls).toContain('terminate');
    expect(runner.getState().events.at(-1)!.type).toBe('Killed');
  });

  it('caps kill_timeout at the client max_kill_timeout', async () => {
    const { clock, runner } = setup(mockTask({ run_for: '1h', kill_after: '10m' }, { killTimeout: 60_000 }), { maxKillTimeout: 2_000 });
    await clock.advance(1);
    runner.send({ type: 'KILL' });
    await clock.advance(2_000);
    expect(runner.getState().state).toBe('dead');
    expect(runner.getState().events.find((e) => e.type === 'Killing')!.displayMessage).toBe('Sent interrupt. Waiting 2s before force killing');
  });

  it('waits the task shutdown_delay before signalling the task', async () => {
    const log: HookCall[] = [];
    const { clock, runner, types } = setup(mockTask({ run_for: '1h' }, { shutdownDelay: 3_000 }), {
      hooks: [recordingTaskHook('services', log, {}, ['preKilling'])],
    });
    await clock.advance(1);
    runner.send({ type: 'KILL' });
    await clock.advance(2_999);
    expect(log.map((c) => c.method)).toEqual(['preKilling']);
    expect(runner.getState().state).toBe('pending');
    await clock.advance(1);
    expect(types()).toEqual(['Received', 'Task Setup', 'Started', 'Killing', 'Waiting for shutdown delay', 'Terminated', 'Killed']);
  });
});

describe('task runner: stop hooks and shutdown', () => {
  it('runs stop hooks exactly once, however many kills arrive', async () => {
    const log: HookCall[] = [];
    const { clock, runner } = setup(mockTask({ run_for: '1h' }), { hooks: [recordingTaskHook('logmon', log, {}, ['stop'])] });
    await clock.advance(1);
    runner.send({ type: 'KILL' });
    runner.send({ type: 'KILL' });
    await clock.advance(1);
    runner.send({ type: 'KILL' });
    await clock.advance(1);
    expect(log.filter((c) => c.method === 'stop')).toHaveLength(1);
  });

  it('runs stop hooks once after the task fails for good', async () => {
    const log: HookCall[] = [];
    const { clock, runner } = setup(mockTask({ run_for: '1s', exit_code: 2 }), {
      hooks: [recordingTaskHook('logmon', log, {}, ['stop'])],
      groupRestart: { attempts: 0, interval: 30 * MIN, delay: 1_000, mode: 'fail' },
    });
    await clock.advance(1_000);
    await runner.done;
    expect(log.map((c) => c.method)).toEqual(['stop']);
  });

  it('leaves the task running on SHUTDOWN and runs shutdown hooks but no stop hooks', async () => {
    const log: HookCall[] = [];
    const { clock, runner, mock } = setup(mockTask({ run_for: '1h' }), {
      hooks: [recordingTaskHook('logmon', log, {}, ['shutdown', 'stop', 'preKilling'])],
    });
    await clock.advance(1);
    runner.send({ type: 'SHUTDOWN' });
    await clock.advance(1);
    expect(runner.actor.getSnapshot().status).toBe('done');
    expect(log.map((c) => c.method)).toEqual(['shutdown']);
    expect(runner.getState().state).toBe('running');
    expect(mock.controllers[0]!.calls).not.toContain('shutdown');
    expect(mock.controllers[0]!.calls).not.toContain('terminate');
  });
});

describe('task runner: updates and signals', () => {
  it('runs update hooks serially, in order, coalescing updates that arrive meanwhile', async () => {
    const log: HookCall[] = [];
    const release: (() => void)[] = [];
    const slow = (name: string) => recordingTaskHook(name, log, { update: () => new Promise<void>((r) => release.push(r)) }, ['update']);
    const task = mockTask({ run_for: '1h' });
    const { clock, runner } = setup(task, { hooks: [slow('a'), slow('b')] });
    await clock.advance(1);
    const alloc = (v: string) => ({ id: 'a1', job: 'j', group: 'g', type: 'service' as const, tasks: [{ ...task, meta: { v } }] });
    runner.send({ type: 'UPDATE', alloc: alloc('1') });
    runner.send({ type: 'UPDATE', alloc: alloc('2') });
    runner.send({ type: 'UPDATE', alloc: alloc('3') });
    await settle();
    const order = () => log.map((c) => `${c.hook}${(c.req as { task: TaskSpec }).task.meta?.v}`);
    expect(order()).toEqual(['a1']);
    for (const expected of [['a1', 'b1'], ['a1', 'b1', 'a3'], ['a1', 'b1', 'a3', 'b3'], ['a1', 'b1', 'a3', 'b3']]) {
      release.shift()?.();
      await settle();
      expect(order()).toEqual(expected);
    }
  });

  it('kills the task with a failing Killing event when an update drops it from the allocation', async () => {
    const { clock, runner } = setup(mockTask({ run_for: '1h' }));
    await clock.advance(1);
    runner.send({ type: 'UPDATE', alloc: { id: 'a1', job: 'j', group: 'g', type: 'service', tasks: [] } });
    await clock.advance(1);
    expect(runner.getState()).toMatchObject({ state: 'dead', failed: true });
  });

  it('sends a signal to a running task with a Signaling event', async () => {
    const { clock, runner, mock } = setup(mockTask({ run_for: '1h' }));
    await clock.advance(1);
    runner.send({ type: 'SIGNAL', signal: 'SIGHUP' });
    await clock.advance(1);
    expect(runner.getState().events.at(-1)).toMatchObject({ type: 'Signaling', displayMessage: 'Task being sent signal SIGHUP' });
    expect(mock.controllers[0]!.calls).toContain('signal:SIGHUP');
    expect(runner.actor.getSnapshot().context.rejections).toEqual([]);
  });

  it("records the driver's error when a signal fails", async () => {
    const { clock, runner } = setup(mockTask({ run_for: '1h', signal_error: 'not allowed' }));
    await clock.advance(1);
    runner.send({ type: 'SIGNAL', signal: 'SIGHUP' });
    await clock.advance(1);
    expect(runner.actor.getSnapshot().context.rejections).toMatchObject([{ command: 'SIGNAL', code: 'ErrSignalFailed', message: 'not allowed' }]);
  });

  it('answers SIGNAL and RESTART on a task that is not running with an error record', async () => {
    const blocking: TaskHook = { name: 'vault', prestart: async (_r, _s, abort) => untilAborted(abort) };
    const { clock, runner } = setup(mockTask({ run_for: '1h' }), { hooks: [blocking] });
    const rejected: string[] = [];
    runner.actor.on('command.rejected', (e) => rejected.push(`${e.rejection.command}:${e.rejection.code}`));
    await clock.advance(1);
    runner.send({ type: 'SIGNAL', signal: 'SIGHUP' });
    runner.send({ type: 'RESTART' });
    await clock.advance(1);
    expect(rejected).toEqual(['SIGNAL:ErrTaskNotRunning', 'RESTART:ErrTaskNotRunning']);
    expect(runner.actor.getSnapshot().context.rejections[0]!.message).toBe('cannot signal task "web": the task is not running');
    expect(runner.getState().events.map((e) => e.type)).toEqual(['Received', 'Task Setup']);
  });

  it('answers RESTART on a dead task with an error record', async () => {
    const { clock, runner } = setup(mockTask({ run_for: '1s' }), { jobType: 'batch' });
    await clock.advance(1_000);
    await runner.done;
    runner.send({ type: 'RESTART' });
    expect(runner.actor.getSnapshot().context.rejections.map((r) => r.code)).toEqual(['ErrTaskRunComplete']);
  });
});

describe('task runner: inspection', () => {
  it('shows each hook call and driver call as an actor named after it', async () => {
    const ids = new Set<string>();
    const log: HookCall[] = [];
    const { clock, runner } = setup(mockTask({ run_for: '1s' }), {
      jobType: 'batch',
      hooks: [recordingTaskHook('task_dir', log, {}, ['prestart', 'stop'])],
      inspect: (ev) => {
        if (ev.type === '@xstate.actor') ids.add((ev.actorRef as unknown as { id: string }).id);
      },
    });
    await clock.advance(1_000);
    await runner.done;
    expect([...ids]).toEqual(expect.arrayContaining(['prestart:task_dir', 'driver:start', 'driver:wait', 'stop:task_dir']));
  });
});
