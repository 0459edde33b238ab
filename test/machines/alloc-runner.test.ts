import { describe, expect, it } from 'vitest';
import { createAllocRunner, type AllocRunnerOptions } from '../../src/runtime/create-alloc-runner.ts';
import type { AllocSpec, TaskSpec } from '../../src/jobspec/types.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { recordingAllocHook, recordingTaskHook, untilAborted, type HookCall } from '../../src/testing/hook-recorder.ts';

const HOUR = 3_600_000;

function task(name: string, config: Record<string, unknown>, extra: Partial<TaskSpec> = {}): TaskSpec {
  return { name, driver: 'mock', config, ...extra };
}

function alloc(tasks: TaskSpec[], extra: Partial<AllocSpec> = {}): AllocSpec {
  return { id: 'a1', job: 'example', group: 'web', type: 'service', tasks, ...extra };
}

function setup(spec: AllocSpec, opts: AllocRunnerOptions = {}) {
  const clock = new SimulatedClock(0);
  // Pure simulation: no built-in hooks, so nothing touches the disk.
  const runner = createAllocRunner(spec, { clock, seed: 3, builtinHooks: false, ...opts }).start();
  const st = (name: string) => runner.getState().taskStates[name]!;
  const types = (name: string) => st(name).events.map((e) => e.type);
  return { clock, runner, st, types };
}

const prestartInit = task('init', { run_for: '2s' }, { lifecycle: { hook: 'prestart' } });
const prestartSide = task('side', { run_for: '10h' }, { lifecycle: { hook: 'prestart', sidecar: true } });
const main = task('main', { run_for: '10s' });
const poststart = task('poststart', { run_for: '1s' }, { lifecycle: { hook: 'poststart' } });
const poststop = task('cleanup', { run_for: '1s' }, { lifecycle: { hook: 'poststop' } });

describe('alloc runner: lifecycle order', () => {
  it('runs prestart tasks before main, poststart after main, and poststop after all others die', async () => {
    const { clock, runner, st } = setup(alloc([prestartInit, prestartSide, main, poststart, poststop], { type: 'batch' }));
    await clock.advance(1);
    expect(st('init').state).toBe('running');
    expect(st('side').state).toBe('running');
    expect(st('main').state).toBe('pending');
    expect(st('poststart').state).toBe('pending');
    expect(runner.getState().clientStatus).toBe('running');

    await clock.advance(2_000);
    expect(st('init')).toMatchObject({ state: 'dead', failed: false });
    expect(st('main').state).toBe('running');
    expect(st('main').startedAt).toBe(2_000);
    expect(st('poststart').state).toBe('running');
    expect(st('cleanup').state).toBe('pending');

    await clock.advance(10_000);
    // main done → the sidecar is killed → only now may the poststop task run.
    expect(st('main').state).toBe('dead');
    expect(st('side').state).toBe('dead');
    expect(st('cleanup').state).toBe('running');
    expect(runner.getState().clientStatus).toBe('running');

    const final = await (async () => {
      await clock.advance(1_000);
      return runner.done;
    })();
    expect(final.clientStatus).toBe('complete');
    expect(st('cleanup').startedAt!).toBeGreaterThanOrEqual(st('side').finishedAt!);
  });

  it('keeps main blocked while a prestart sidecar has not started', async () => {
    const slowSide = task('side', { run_for: '10h', start_block_for: '5s' }, { lifecycle: { hook: 'prestart', sidecar: true } });
    const { clock, st } = setup(alloc([slowSide, main]));
    await clock.advance(4_000);
    expect(st('main').state).toBe('pending');
    await clock.advance(1_001);
    expect(st('main').state).toBe('running');
  });
});

describe('alloc runner: the task-state reducer', () => {
  it('kills the followers with Leader Task Dead when the leader finishes', async () => {
    const leader = task('leader', { run_for: '5s' }, { leader: true });
    const follower = task('follower', { run_for: '10h' });
    const { clock, runner, types, st } = setup(alloc([leader, follower], { type: 'batch' }));
    await clock.advance(5_000);
    await runner.done;
    expect(types('follower')).toEqual(['Received', 'Task Setup', 'Started', 'Leader Task Dead', 'Killing', 'Terminated', 'Killed']);
    expect(st('follower').failed).toBe(false);
    expect(runner.getState().clientStatus).toBe('complete');
  });

  it('fails the alloc and kills the others with Sibling Task Failed when a task fails', async () => {
    const bad = task('bad', { run_for: '1s', exit_code: 1 }, { restart: { attempts: 0, interval: HOUR, delay: 1_000, mode: 'fail' } });
    const good = task('good', { run_for: '10h' });
    const { clock, runner, types } = setup(alloc([bad, good]));
    await clock.advance(1_000);
    const final = await runner.done;
    expect(final.clientStatus).toBe('failed');
    expect(types('good')).toEqual(['Received', 'Task Setup', 'Started', 'Sibling Task Failed', 'Killing', 'Terminated', 'Killed']);
    expect(final.taskStates.good!.events[3]!.displayMessage).toBe('Task\'s sibling "bad" failed');
  });

  it('kills sidecars with Main Tasks Dead once the main tasks finish', async () => {
    const side = task('proxy', { run_for: '10h' }, { lifecycle: { hook: 'poststart', sidecar: true } });
    const { clock, runner, types } = setup(alloc([task('main', { run_for: '3s' }), side], { type: 'batch' }));
    await clock.advance(3_000);
    await runner.done;
    expect(types('proxy')).toEqual(['Received', 'Task Setup', 'Started', 'Main Tasks Dead', 'Killing', 'Terminated', 'Killed']);
  });
});

describe('alloc runner: kill', () => {
  it('kills in order: ephemeral before main before sidecars, poststop last', async () => {
    const log: HookCall[] = [];
    const spec = alloc([
      task('init', { run_for: '1s' }, { lifecycle: { hook: 'prestart' } }),
      task('side', { run_for: '10h', kill_after: '2s' }, { lifecycle: { hook: 'prestart', sidecar: true }, killTimeout: 10_000 }),
      task('main', { run_for: '10h', kill_after: '3s' }, { killTimeout: 10_000 }),
      task('cleanup', { run_for: '1s' }, { lifecycle: { hook: 'poststop' } }),
    ]);
    const { clock, runner, st } = setup(spec, { allocHooks: [recordingAllocHook('group_services', log, {}, ['preKill'])] });
    await clock.advance(5_000);
    runner.send({ type: 'KILL' });
    await clock.advanceUntil(() => runner.getState().taskStates.cleanup!.state === 'dead');
    const f = (n: string) => st(n).finishedAt!;
    expect(f('init')).toBeLessThan(f('main'));
    expect(f('main')).toBeLessThan(f('side'));
    expect(f('side')).toBeLessThan(f('cleanup'));
    expect(log.map((c) => `${c.hook}.${c.method}`)).toEqual(['group_services.preKill']);
    expect(runner.getState().clientStatus).toBe('complete');
  });

  it('kills the leader before its followers', async () => {
    const spec = alloc([
      task('follower', { run_for: '10h', kill_after: '1s' }, { killTimeout: 10_000 }),
      task('leader', { run_for: '10h', kill_after: '2s' }, { leader: true, killTimeout: 10_000 }),
    ]);
    const { clock, runner, st } = setup(spec);
    await clock.advance(1);
    runner.send({ type: 'KILL' });
    await clock.advanceUntil(() => runner.getState().clientStatus === 'complete');
    expect(st('leader').finishedAt!).toBeLessThan(st('follower').finishedAt!);
  });

  it('waits the group shutdown_delay before killing tasks', async () => {
    const { clock, runner, st } = setup(alloc([task('main', { run_for: '10h' })], { shutdownDelay: 5_000 }));
    await clock.advance(1);
    runner.send({ type: 'KILL' });
    await clock.advance(4_999);
    expect(st('main').state).toBe('running');
    await clock.advance(1);
    expect(st('main').state).toBe('dead');
  });
});

describe('alloc runner: alloc hooks', () => {
  it('fails every task with Setup Failure and the alloc when a prerun hook fails', async () => {
    const log: HookCall[] = [];
    const hooks = [
      recordingAllocHook('alloc_dir', log, { prerun: async () => Promise.reject(new Error('disk full')) }, ['prerun', 'postrun']),
      recordingAllocHook('network', log, {}, ['prerun', 'postrun']),
    ];
    const { clock, runner, types } = setup(alloc([main, poststop]), { allocHooks: hooks });
    await clock.advance(1);
    const final = await runner.done;
    expect(final.clientStatus).toBe('failed');
    expect(types('main')).toEqual(['Received', 'Setup Failure']);
    expect(types('cleanup')).toEqual(['Received', 'Setup Failure']);
    expect(final.taskStates.main!.events[1]!.displayMessage).toBe('failed to setup alloc: pre-run hook "alloc_dir" failed: disk full');
    // The second prerun hook never runs; postrun hooks all run.
    expect(log.map((c) => `${c.hook}.${c.method}`)).toEqual(['alloc_dir.prerun', 'alloc_dir.postrun', 'network.postrun']);
  });

  it('runs every postrun hook even when one fails, and records the error', async () => {
    const log: HookCall[] = [];
    const hooks = [
      recordingAllocHook('a', log, { postrun: async () => Promise.reject(new Error('boom')) }, ['postrun']),
      recordingAllocHook('b', log, {}, ['postrun']),
    ];
    const { clock, runner } = setup(alloc([task('main', { run_for: '1s' })], { type: 'batch' }), { allocHooks: hooks });
    await clock.advance(1_000);
    await runner.done;
    expect(log.map((c) => c.hook)).toEqual(['a', 'b']);
    expect(runner.actor.getSnapshot().context.hookErrors).toEqual([{ phase: 'postrun', hook: 'a', message: 'boom' }]);
  });

  it('runs destroy hooks once on DESTROY, after killing the tasks and running postrun', async () => {
    const log: HookCall[] = [];
    const { clock, runner } = setup(alloc([task('main', { run_for: '10h' })]), {
      allocHooks: [recordingAllocHook('alloc_dir', log, {}, ['postrun', 'destroy'])],
    });
    await clock.advance(1);
    runner.send({ type: 'DESTROY' });
    runner.send({ type: 'DESTROY' });
    await clock.advance(1);
    expect(runner.actor.getSnapshot().value).toBe('destroyed');
    runner.send({ type: 'DESTROY' });
    expect(log.map((c) => c.method)).toEqual(['postrun', 'destroy']);
    expect(runner.getState().clientStatus).toBe('complete');
  });

  it('shows every hook as an actor named after it in the inspection stream', async () => {
    const ids = new Set<string>();
    const log: HookCall[] = [];
    const { clock, runner } = setup(alloc([task('main', { run_for: '1s' })], { type: 'batch' }), {
      allocHooks: [recordingAllocHook('alloc_dir', log, {}, ['prerun', 'postrun'])],
      taskHooks: [recordingTaskHook('task_dir', log, {}, ['prestart', 'stop'])],
      inspect: (ev) => {
        if (ev.type === '@xstate.actor') ids.add((ev.actorRef as unknown as { id: string }).id);
      },
    });
    await clock.advance(1_000);
    await runner.done;
    expect([...ids]).toEqual(expect.arrayContaining(['prerun:alloc_dir', 'main', 'prestart:task_dir', 'driver:start', 'stop:task_dir', 'postrun:alloc_dir']));
  });
});

describe('alloc runner: restarts and signals', () => {
  const spec = () =>
    alloc([
      task('init', { run_for: '1s' }, { lifecycle: { hook: 'prestart' } }),
      task('side', { run_for: '10h' }, { lifecycle: { hook: 'prestart', sidecar: true } }),
      task('main', { run_for: '10h' }),
    ]);

  it('restarts one task on RESTART { task }', async () => {
    const { clock, runner, st } = setup(spec());
    await clock.advance(1_001);
    runner.send({ type: 'RESTART', task: 'main' });
    await clock.advance(1);
    expect([st('init').restarts, st('side').restarts, st('main').restarts]).toEqual([0, 0, 1]);
    expect(st('main').state).toBe('running');
  });

  it('restarts the running tasks on RESTART {}, leaving dead one-shots dead', async () => {
    const { clock, runner, st } = setup(spec());
    await clock.advance(1_001);
    runner.send({ type: 'RESTART' });
    await clock.advance(1);
    expect([st('init').restarts, st('side').restarts, st('main').restarts]).toEqual([0, 1, 1]);
    expect(st('init').state).toBe('dead');
    expect(st('main').state).toBe('running');
  });

  it('reruns every task in lifecycle order on RESTART { all: true }', async () => {
    const { clock, runner, st } = setup(spec());
    await clock.advance(1_001);
    runner.send({ type: 'RESTART', all: true });
    await clock.advance(1);
    expect(st('init').state).toBe('running');
    expect(st('main').state).toBe('pending');
    await clock.advance(1_000);
    expect(st('main').state).toBe('running');
    expect([st('init').restarts, st('side').restarts, st('main').restarts]).toEqual([1, 1, 1]);
  });

  it('answers a restart of an unknown task with a rejection', async () => {
    const { clock, runner } = setup(spec());
    const rejected: string[] = [];
    runner.rejections$.subscribe((r) => rejected.push(r.message));
    await clock.advance(1);
    runner.send({ type: 'RESTART', task: 'nope' });
    expect(rejected).toEqual(['no task named "nope" in allocation a1']);
  });

  it('signals one task, or every running task', async () => {
    const { clock, runner, types } = setup(spec());
    await clock.advance(1_001);
    runner.send({ type: 'SIGNAL', task: 'main', signal: 'SIGHUP' });
    runner.send({ type: 'SIGNAL', signal: 'SIGUSR1' });
    await clock.advance(1);
    expect(types('main').filter((t) => t === 'Signaling')).toHaveLength(2);
    expect(types('side').filter((t) => t === 'Signaling')).toHaveLength(1);
    expect(types('init').filter((t) => t === 'Signaling')).toHaveLength(0);
  });
});

describe('alloc runner: updates, shutdown', () => {
  it('serializes alloc update hooks and keeps only the newest queued update', async () => {
    const log: HookCall[] = [];
    const release: (() => void)[] = [];
    const hook = recordingAllocHook('services', log, { update: () => new Promise<void>((r) => release.push(r)) }, ['update']);
    const base = alloc([task('main', { run_for: '10h' })]);
    const { clock, runner } = setup(base, { allocHooks: [hook] });
    await clock.advance(1);
    for (const i of [1, 2, 3]) runner.send({ type: 'UPDATE', alloc: { ...base, modifyIndex: i, meta: { v: String(i) } } });
    // An older update never displaces a newer one.
    runner.send({ type: 'UPDATE', alloc: { ...base, modifyIndex: 2, meta: { v: 'stale' } } });
    await clock.advance(1);
    const seen = () => log.map((c) => (c.req as { alloc: AllocSpec }).alloc.meta?.v);
    expect(seen()).toEqual(['1']);
    release.shift()!();
    await clock.advance(1);
    expect(seen()).toEqual(['1', '3']);
    release.shift()!();
    await clock.advance(1);
    expect(seen()).toEqual(['1', '3']);
  });

  it('kills the tasks when an update sets the desired status to stop', async () => {
    const base = alloc([task('main', { run_for: '10h' })]);
    const { clock, runner } = setup(base);
    await clock.advance(1);
    runner.send({ type: 'UPDATE', alloc: { ...base, desiredStatus: 'stop', modifyIndex: 5 } });
    await clock.advance(1);
    expect((await runner.done).clientStatus).toBe('complete');
  });

  it('leaves tasks running on SHUTDOWN, with shutdown hooks and no postrun', async () => {
    const log: HookCall[] = [];
    const { clock, runner, st } = setup(alloc([task('main', { run_for: '10h' })]), {
      allocHooks: [recordingAllocHook('alloc_dir', log, {}, ['postrun', 'shutdown'])],
      taskHooks: [recordingTaskHook('logmon', log, {}, ['stop', 'shutdown'])],
    });
    await clock.advance(1);
    runner.send({ type: 'SHUTDOWN' });
    await clock.advance(1);
    expect(runner.actor.getSnapshot().value).toBe('detached');
    expect(st('main').state).toBe('running');
    expect(log.map((c) => `${c.hook}.${c.method}`)).toEqual(['logmon.shutdown', 'alloc_dir.shutdown']);
  });

  it('blocks in a prestart hook until killed, then completes', async () => {
    const hook = recordingTaskHook('vault', [], { prestart: async (_r, _s, abort) => untilAborted(abort) }, ['prestart']);
    const { clock, runner } = setup(alloc([task('main', { run_for: '1s' })]), { taskHooks: [hook] });
    await clock.advance(1);
    runner.send({ type: 'KILL' });
    await clock.advance(1);
    expect((await runner.done).taskStates.main!.state).toBe('dead');
  });
});
