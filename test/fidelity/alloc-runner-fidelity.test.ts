/**
 * Nomad's alloc runner rules the seeds named (issue #12, items 1-5): preTaskRestart hooks, terminal
 * allocations, commands after the tasks finished, the caller's restart event, postrun errors. Each test
 * drives createAllocRunner with the mock driver on the simulated clock and is named after the Nomad test
 * (alloc_runner_test.go, task_runner_test.go) it mirrors.
 */
import { describe, expect, it } from 'vitest';
import type { RunnerRejection } from '../../src/runtime/create-alloc-runner.ts';
import type { AllocRunnerHook, TaskHook, TaskPrestartResponse } from '../../src/hooks/types.ts';
import type { AllocSpec, TaskEvent, TaskSpec } from '../../src/jobspec/types.ts';
import { createAllocRunner, type AllocRunner, type AllocRunnerOptions } from '../../src/runtime/create-alloc-runner.ts';
import { recordingAllocHook, type HookCall } from '../../src/testing/hook-recorder.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { task } from './mock-task.ts';


function alloc(tasks: TaskSpec[], extra: Partial<AllocSpec> = {}): AllocSpec {
  return { id: 'a1', job: 'web', group: 'g', type: 'service', tasks, ...extra };
}

/** A started runner on a simulated clock, with a recording alloc hook and every rejection collected. */
function start(spec: AllocSpec, opts: AllocRunnerOptions & { hookImpl?: Parameters<typeof recordingAllocHook>[2] } = {}) {
  const clock = new SimulatedClock();
  const log: HookCall[] = [];
  const { hookImpl, ...rest } = opts;
  const runner: AllocRunner = createAllocRunner(spec, {
    clock,
    builtinHooks: false,
    seed: 1,
    allocHooks: [recordingAllocHook('rec', log, hookImpl)],
    ...rest,
  });
  const rejections: RunnerRejection[] = [];
  runner.rejections$.subscribe((r) => rejections.push(r));
  runner.start();
  const calls = () => log.map((c) => c.method);
  const events = (name: string) => runner.getState().taskStates[name]!.events.map((e) => e.type);
  return { clock, runner, log, calls, events, rejections };
}

describe('item 1: preTaskRestart hooks', () => {
  it('TestAllocRunner_Lifecycle_Restart (RestartRunning): preTaskRestart hooks run before the running tasks restart', async () => {
    let release!: () => void;
    const r = start(alloc([task('web', { run_for: '1h' })]), {
      hookImpl: { preTaskRestart: () => new Promise<void>((res) => (release = res)) },
    });
    await r.clock.advance(1_000);
    r.runner.send({ type: 'RESTART' });
    await r.clock.advance(0);
    expect(r.calls()).toEqual(['prerun', 'preTaskRestart']);
    // The task is not touched while the hook runs.
    expect(r.events('web')).toEqual(['Received', 'Task Setup', 'Started']);
    expect(r.runner.actor.getSnapshot().matches({ running: { busy: { restarts: 'preTaskRestart' } } })).toBe(true);
    release();
    await r.clock.advance(2_000);
    expect(r.events('web')).toEqual(['Received', 'Task Setup', 'Started', 'Restart Signaled', 'Terminated', 'Restarting', 'Started']);
    expect(r.runner.getState().taskStates.web!.restarts).toBe(1);
  });

  it('TestAllocRunner_Lifecycle_Restart (RestartAll): preTaskRestart hooks run, then every task restarts, dead ones too', async () => {
    const r = start(
      alloc([task('init', { run_for: '1s' }, { lifecycle: { hook: 'prestart' } }), task('web', { run_for: '1h' })]),
    );
    await r.clock.advance(5_000);
    expect(r.events('init')).toEqual(['Received', 'Task Setup', 'Started', 'Terminated']);
    r.runner.send({ type: 'RESTART', all: true });
    await r.clock.advance(10_000);
    expect(r.calls()).toEqual(['prerun', 'preTaskRestart']);
    expect(r.events('init').filter((e) => e === 'Started')).toHaveLength(2);
    expect(r.events('web').filter((e) => e === 'Started')).toHaveLength(2);
  });

  it('TestAllocRunner_TaskRestart (RestartTask): restarting one task calls no preTaskRestart hook, as Nomad\'s RestartTask does not', async () => {
    const r = start(alloc([task('web', { run_for: '1h' })]));
    await r.clock.advance(1_000);
    r.runner.send({ type: 'RESTART', task: 'web' });
    await r.clock.advance(2_000);
    expect(r.calls()).toEqual(['prerun']);
    expect(r.runner.getState().taskStates.web!.restarts).toBe(1);
  });

  it('a failing preTaskRestart hook is recorded in AllocState and the restart goes on', async () => {
    const r = start(alloc([task('web', { run_for: '1h' })]), {
      hookImpl: { preTaskRestart: async () => Promise.reject(new Error('consul deregistration failed')) },
    });
    await r.clock.advance(1_000);
    r.runner.send({ type: 'RESTART' });
    await r.clock.advance(2_000);
    expect(r.runner.getState().hookErrors).toEqual([{ phase: 'preTaskRestart', hook: 'rec', message: 'consul deregistration failed' }]);
    expect(r.runner.getState().taskStates.web!.restarts).toBe(1);
  });

  it('a second restart while the hooks run is answered with ErrRestartInProgress', async () => {
    const r = start(alloc([task('web', { run_for: '1h' })]), { hookImpl: { preTaskRestart: () => new Promise<void>(() => {}) } });
    await r.clock.advance(1_000);
    r.runner.send({ type: 'RESTART' });
    r.runner.send({ type: 'RESTART', all: true });
    await r.clock.advance(0);
    expect(r.rejections.map((x) => x.code)).toEqual(['ErrRestartInProgress']);
  });

  it('restarting an allocation that is stopping is refused: "restart of an alloc that should not run"', async () => {
    const r = start(alloc([task('web', { run_for: '1h', kill_after: '10s' })]));
    await r.clock.advance(1_000);
    r.runner.send({ type: 'KILL' });
    r.runner.send({ type: 'RESTART' });
    await r.clock.advance(0);
    expect(r.rejections).toMatchObject([{ command: 'RESTART', code: 'ErrAllocNotRunning', message: expect.stringContaining('restart of an alloc that should not run') }]);
    expect(r.calls()).not.toContain('preTaskRestart');
  });
});

describe('item 2: terminal allocations', () => {
  for (const desiredStatus of ['stop', 'evict'] as const) {
    it(`TestAllocRunner_PreKill_RunOnDone (desired ${desiredStatus}): no prerun, no task starts, preKill and postrun run, and the alloc is complete`, async () => {
      const r = start(alloc([task('web', { run_for: '1h' }), task('side', { run_for: '1h' }, { lifecycle: { hook: 'prestart', sidecar: true } })], { desiredStatus }));
      const final = await Promise.race([r.runner.done, r.clock.advance(1_000).then(() => r.runner.done)]);
      expect(r.calls()).toEqual(['preKill', 'postrun']);
      expect(final.clientStatus).toBe('complete');
      for (const name of ['web', 'side']) {
        expect(final.taskStates[name]).toMatchObject({ state: 'dead', failed: false });
        expect(r.events(name)).toEqual(['Received']);
      }
      expect(r.runner.actor.getSnapshot().value).toBe('terminal');
    });
  }

  it('TestAllocRunner_Lifecycle_Poststop (terminal alloc): a poststop task still runs its cleanup, as Nomad runs it', async () => {
    const r = start(alloc([task('web', { run_for: '1h' }), task('flush', { run_for: '2s' }, { lifecycle: { hook: 'poststop' } })], { desiredStatus: 'stop' }));
    await r.clock.advance(5_000);
    const final = await r.runner.done;
    expect(r.events('web')).toEqual(['Received']);
    expect(r.events('flush')).toEqual(['Received', 'Task Setup', 'Started', 'Terminated']);
    expect(final.clientStatus).toBe('complete');
  });
});

describe('item 3: commands after the tasks finished', () => {
  it('TestTaskRunner_RestartSignalTask_NotRunning (alloc terminal): RESTART and SIGNAL are answered with ErrTaskNotRunning', async () => {
    const r = start(alloc([task('job', { run_for: '1s' })], { type: 'batch' }));
    await r.clock.advance(2_000);
    await r.runner.done;
    expect(r.runner.actor.getSnapshot().value).toBe('terminal');
    r.runner.send({ type: 'RESTART', task: 'job' });
    r.runner.send({ type: 'RESTART', all: true });
    r.runner.send({ type: 'SIGNAL', signal: 'SIGHUP' });
    r.runner.send({ type: 'SIGNAL', task: 'nope', signal: 'SIGHUP' });
    expect(r.rejections.map((x) => [x.command, x.code])).toEqual([
      ['RESTART', 'ErrTaskNotRunning'],
      ['RESTART', 'ErrTaskNotRunning'],
      ['SIGNAL', 'ErrTaskNotRunning'],
      ['SIGNAL', 'ErrUnknownTask'],
    ]);
    expect(r.rejections[0]!.message).toBe('task "job" is not running: the allocation has finished');
  });

  it('commands during postrun are answered too', async () => {
    const r = start(alloc([task('job', { run_for: '1s' })], { type: 'batch' }), { hookImpl: { postrun: () => new Promise<void>(() => {}) } });
    await r.clock.advance(2_000);
    expect(r.runner.actor.getSnapshot().value).toMatchObject({ postrun: 'calling' });
    r.runner.send({ type: 'SIGNAL', task: 'job', signal: 'SIGHUP' });
    expect(r.rejections).toMatchObject([{ command: 'SIGNAL', code: 'ErrTaskNotRunning' }]);
  });
});

describe("item 4: the caller's restart event", () => {
  it('TestAllocRunner_RestartTask (event): RESTART { task, event } records the given TaskEvent, time and reason, instead of the default', async () => {
    const r = start(alloc([task('web', { run_for: '1h' })]));
    await r.clock.advance(1_000);
    const event: TaskEvent = { type: 'Restart Signaled', time: 777, displayMessage: 'check failed', restartReason: 'healthcheck: status=critical' };
    r.runner.send({ type: 'RESTART', task: 'web', event });
    await r.clock.advance(2_000);
    expect(r.runner.getState().taskStates.web!.events).toContainEqual(event);
  });

  it('RestartRunning forwards the event to every restarted task', async () => {
    const r = start(alloc([task('a', { run_for: '1h' }), task('b', { run_for: '1h' })]));
    await r.clock.advance(1_000);
    const event: TaskEvent = { type: 'Restart Signaled', time: 900, displayMessage: 'operator', restartReason: 'alloc restart' };
    r.runner.send({ type: 'RESTART', event });
    await r.clock.advance(2_000);
    for (const name of ['a', 'b']) expect(r.runner.getState().taskStates[name]!.events).toContainEqual(event);
  });
});

describe('item 5: postrun errors', () => {
  it('TestAllocRunner_Postrun (errors aggregated): a failing postrun hook shows in AllocState and in what done resolves with', async () => {
    const log: HookCall[] = [];
    const failing: AllocRunnerHook = { name: 'cleanup', postrun: async () => Promise.reject(new Error('could not unmount volume')) };
    const r = start(alloc([task('job', { run_for: '1s' })], { type: 'batch' }), { allocHooks: [recordingAllocHook('rec', log), failing] });
    await r.clock.advance(2_000);
    const final = await r.runner.done;
    expect(final.hookErrors).toEqual([{ phase: 'postrun', hook: 'cleanup', message: 'could not unmount volume' }]);
    // Every postrun hook still ran.
    expect(log.map((c) => c.method)).toContain('postrun');
  });

  it('no hookErrors field when every hook succeeded', async () => {
    const r = start(alloc([task('job', { run_for: '1s' })], { type: 'batch' }));
    await r.clock.advance(2_000);
    expect('hookErrors' in (await r.runner.done)).toBe(false);
  });
});

describe('item 5: prestart mounts and devices', () => {
  it('TestTaskRunner_Prestart (hook resources): mounts and devices from prestart responses reach the driver', async () => {
    const seen: { mounts?: unknown; devices?: unknown }[] = [];
    const hook: TaskHook = {
      name: 'volumes',
      prestart: async (_req, res: TaskPrestartResponse) => {
        res.mounts = [{ hostPath: '/srv/data', taskPath: '/data', readOnly: true }];
        res.devices = [{ hostPath: '/dev/fuse', taskPath: '/dev/fuse' }];
      },
    };
    const r = start(alloc([task('job', { run_for: '1s' })], { type: 'batch' }), {
      taskHooks: [hook],
      drivers: {
        mock: {
          name: 'mock',
          controller: (_t, ctx) => {
            seen.push({ mounts: ctx.mounts, devices: ctx.devices });
            return new (class {
              prepare = async () => {};
              start = async () => {};
              wait = async () => ({ exitCode: 0, signal: 0 });
              shutdown = async () => {};
              terminate = async () => {};
              remove = async () => {};
              close = async () => {};
            })();
          },
        },
      },
    });
    await r.clock.advance(2_000);
    expect(seen).toEqual([
      { mounts: [{ hostPath: '/srv/data', taskPath: '/data', readOnly: true }], devices: [{ hostPath: '/dev/fuse', taskPath: '/dev/fuse' }] },
    ]);
  });
});
