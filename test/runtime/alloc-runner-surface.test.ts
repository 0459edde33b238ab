/**
 * What `createAllocRunner` offers its caller, on the mock driver and a SimulatedClock: `events$` (every task
 * event once, in order), `state$` (one value per change of the public AllocState), `done`, `rejections$`
 * (the alloc's and its task runners'), `latestAllocStats`, `logs()`, and the wiring it does on the way
 * (hook names checked, the alloc dir, config interpolation, supervisor files of a reused alloc dir).
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Subject } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { createAllocRunner, type AllocRunnerOptions, type RunnerRejection } from '../../src/runtime/create-alloc-runner.ts';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.ts';
import type { Driver, ResourceUsage } from '../../src/drivers/controller.ts';
import type { AllocRunnerHook, TaskHook } from '../../src/hooks/types.ts';
import type { AllocSpec, AllocState, TaskEvent, TaskSpec } from '../../src/jobspec/types.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { TEST_NODE } from '../properties/world.ts';
import { tempDir } from '../temp-dirs.ts';

const alloc = (tasks: TaskSpec[], extra: Partial<AllocSpec> = {}): AllocSpec => ({ id: 'surface', job: 'j', group: 'g', type: 'batch', tasks, ...extra });
const mock = (name: string, config: Record<string, unknown>, extra: Partial<TaskSpec> = {}): TaskSpec => ({ name, driver: 'mock', config, killTimeout: 1_000, ...extra });

function build(spec: AllocSpec, opts: AllocRunnerOptions = {}) {
  const clock = new SimulatedClock(0);
  const runner = createAllocRunner(spec, { clock, builtinHooks: false, node: TEST_NODE, hostEnv: {}, seed: 1, ...opts });
  return { clock, runner };
}

/** The mock driver, keeping every controller's task (as the driver was given it) and context. */
function capturingDriver() {
  const inner = createMockDriver();
  const made: { task: TaskSpec; env: Readonly<Record<string, string>> }[] = [];
  const driver: Driver = {
    name: 'mock',
    controller: (task, ctx) => {
      made.push({ task, env: ctx.env });
      return inner.controller(task, ctx);
    },
  };
  return { driver, made };
}

describe('events$', () => {
  it('emits every task event exactly once, in the order each task recorded it', async () => {
    const { clock, runner } = build(alloc([mock('init', { run_for: '1s' }, { lifecycle: { hook: 'prestart' } }), mock('main', { run_for: '2s' })]));
    const seen: { task: string; event: TaskEvent }[] = [];
    runner.events$.subscribe((e) => seen.push(e));
    runner.start();
    await clock.advance(3_100);
    const final = await runner.done;
    for (const task of ['init', 'main']) expect(seen.filter((e) => e.task === task).map((e) => e.event)).toEqual(final.taskStates[task]!.events);
    expect(seen).toHaveLength(final.taskStates.init!.events.length + final.taskStates.main!.events.length);
    expect(final.taskStates.main!.events.map((e) => e.type)).toEqual(['Received', 'Task Setup', 'Started', 'Terminated']);
  });
});

describe('state$', () => {
  it('emits the current state first, then once for each new set of task states, never twice for one', async () => {
    const { clock, runner } = build(alloc([mock('web', { run_for: '2s' })]));
    const mirrored: AllocState['taskStates'][] = [runner.getState().taskStates];
    runner.actor.subscribe((s) => {
      if (s.context.taskStates !== mirrored.at(-1)) mirrored.push(s.context.taskStates);
    });
    const emitted: AllocState[] = [];
    runner.state$.subscribe((s) => emitted.push(s));
    runner.start();
    await clock.advance(2_100);
    await runner.done;
    expect(emitted.length).toBe(mirrored.length);
    emitted.forEach((s, i) => expect(s.taskStates).toBe(mirrored[i]));
    expect(emitted.map((s) => s.clientStatus)).toContain('running');
    expect(emitted.at(-1)!.clientStatus).toBe('complete');
  });

  it('does not emit for a command the alloc refuses (nothing public changed), which rejections$ carries instead', async () => {
    const { clock, runner } = build(alloc([mock('web', { run_for: '1h' })]));
    runner.start();
    await clock.advance(10);
    const emitted: AllocState[] = [];
    const rejections: RunnerRejection[] = [];
    runner.state$.subscribe((s) => emitted.push(s));
    runner.rejections$.subscribe((r) => rejections.push(r));
    runner.send({ type: 'RESTART', task: 'nope' });
    runner.send({ type: 'SIGNAL', task: 'nope', signal: 'SIGHUP' });
    await clock.advance(10);
    expect(emitted).toHaveLength(1); // the current value, on subscribing
    expect(rejections.map((r) => r.code)).toEqual(['ErrUnknownTask', 'ErrUnknownTask']);
  });

  it('emits when the deployment turns healthy, though no task state changed', async () => {
    const spec = alloc([mock('web', { run_for: '1h' })], { type: 'service', update: { minHealthyTime: 10_000, healthyDeadline: 300_000 } });
    const { clock, runner } = build(spec);
    runner.start();
    await clock.advance(9_000);
    const emitted: AllocState[] = [];
    runner.state$.subscribe((s) => emitted.push(s));
    await clock.advance(1_000);
    expect(emitted.map((s) => s.deploymentStatus)).toEqual([undefined, { healthy: true, timestamp: 10_000 }]);
    expect(emitted[1]!.taskStates).toBe(emitted[0]!.taskStates);
  });

  it('emits when an alloc hook fails, though no task state changed', async () => {
    const failing: AllocRunnerHook = { name: 'cleanup', postrun: async () => Promise.reject(new Error('disk gone')) };
    const { clock, runner } = build(alloc([mock('web', { run_for: '1s' })]), { allocHooks: [failing] });
    const emitted: AllocState[] = [];
    runner.state$.subscribe((s) => emitted.push(s));
    runner.start();
    await clock.advance(1_100);
    const final = await runner.done;
    expect(final.hookErrors).toEqual([{ phase: 'postrun', hook: 'cleanup', message: 'disk gone' }]);
    expect(emitted.at(-1)).toEqual(final);
    expect(emitted.at(-2)!.hookErrors).toBeUndefined();
    expect(emitted.at(-2)!.taskStates).toBe(final.taskStates);
  });
});

describe('done and rejections$', () => {
  it('done rejects with the error of an actor that fails (a snapshot this runtime cannot resume)', async () => {
    const { clock, runner } = build(alloc([mock('web', { run_for: '1h' })]));
    runner.start();
    await clock.advance(10);
    const persisted = runner.persist() as { __allocrun: 'alloc-runner'; snapshot: { children: Record<string, { snapshot: Record<string, unknown> }> } };
    runner.stop();
    const web = persisted.snapshot.children.web!;
    web.snapshot = { ...web.snapshot, context: {} };
    const resumed = build(alloc([mock('web', { run_for: '1h' })]), { snapshot: persisted }).runner;
    const outcome = resumed.done.then(() => 'resolved', (e: unknown) => e);
    resumed.start();
    expect(resumed.actor.getSnapshot().status).toBe('error');
    expect(await outcome).toBeInstanceOf(Error);
  });

  it("rejections$ carries a task runner's own refusals too", async () => {
    const { clock, runner } = build(alloc([mock('short', { run_for: '1s' }), mock('long', { run_for: '1h' })]));
    const rejections: RunnerRejection[] = [];
    runner.rejections$.subscribe((r) => rejections.push(r));
    runner.start();
    await clock.advance(2_000);
    runner.send({ type: 'RESTART', task: 'short' });
    await clock.advance(1);
    expect(rejections).toEqual([expect.objectContaining({ command: 'RESTART', code: 'ErrTaskNotRunning' })]);
    expect((rejections[0] as { message: string }).message).toContain('"short"');
  });
});

describe('latestAllocStats and logs()', () => {
  it('latestAllocStats sums the running tasks and takes the newest sample time; with a task name, that task alone', async () => {
    // The mock driver, each controller with a stats stream the test feeds.
    const inner = createMockDriver();
    const streams: Record<string, Subject<ResourceUsage>> = {};
    const byTask: Driver = { name: 'mock', controller: (task, ctx) => Object.assign(inner.controller(task, ctx), { stats: () => (streams[task.name] ??= new Subject()) }) };
    const dataDir = tempDir('allocrun-surface-');
    const { clock, runner } = build(alloc([mock('web', { run_for: '1h' }), mock('db', { run_for: '1h' })]), { drivers: { mock: byTask }, builtinHooks: true, dataDir });
    runner.start();
    // The builtin hooks make the dirs on disk (real I/O): wait until both tasks run and their streams are open.
    await vi.waitFor(async () => {
      await clock.advance(1);
      expect(runner.latestAllocStats()).toEqual({ timestamp: 0, usage: { cpuPercent: 0, memoryRss: 0 }, tasks: {} });
      expect(Object.keys(streams).sort()).toEqual(['db', 'web']);
    });
    const sample = (cpu: number, rss: number, timestamp: number): ResourceUsage => ({ timestamp, cpu: { percent: cpu, userMs: 0, systemMs: 0, totalTicks: 0 }, memory: { rss, vms: 0, swap: 0 }, pids: [1] });
    streams.web!.next(sample(20, 200, 5));
    streams.db!.next(sample(5, 50, 7));
    expect(runner.latestAllocStats()).toMatchObject({ timestamp: 7, usage: { cpuPercent: 25, memoryRss: 250 } });
    expect(runner.latestAllocStats('web')).toEqual({ timestamp: 5, usage: { cpuPercent: 20, memoryRss: 200 }, tasks: { web: sample(20, 200, 5) } });
    runner.stop();
  });

  it('logs() errors, naming the alloc and the task, for a task whose driver this runner does not have', () => {
    const { runner } = build(alloc([{ name: 'web', driver: 'docker', config: {} }]));
    let err: unknown;
    runner.logs('web', {}).subscribe({ error: (e) => (err = e) });
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toBe('allocation surface has no task "web" with a known driver');
  });
});

describe('wiring', () => {
  it('refuses two task hooks of one name, naming the task', () => {
    const hook: TaskHook = { name: 'twice' };
    expect(() => build(alloc([mock('web', {})]), { taskHooks: [hook, { ...hook }] })).toThrow(/^task "web": two hooks are named "twice"/);
  });

  it('refuses two alloc hooks of one name, naming the allocation', () => {
    const hook: AllocRunnerHook = { name: 'twice' };
    expect(() => build(alloc([mock('web', {})]), { allocHooks: [hook, { ...hook }] })).toThrow(/^allocation surface: two hooks are named "twice"/);
  });

  it('puts the alloc dir under allocrun/allocs/<id> in the OS temp dir when no data dir is given', async () => {
    const { driver, made } = capturingDriver();
    // Builtin hooks off: the dirs are only named in the env, never made.
    const { clock, runner } = build(alloc([mock('web', { run_for: '1s' })]), { drivers: { mock: driver } });
    runner.start();
    await clock.advance(1);
    expect(made[0]!.env.NOMAD_ALLOC_DIR).toBe(join(tmpdir(), 'allocrun', 'allocs', 'surface', 'alloc'));
    expect(made[0]!.env.NOMAD_TASK_DIR).toBe(join(tmpdir(), 'allocrun', 'allocs', 'surface', 'web', 'local'));
  });

  it("interpolates ${...} in a task's config with the task's env before its driver gets it", async () => {
    const { driver, made } = capturingDriver();
    const { clock, runner } = build(alloc([mock('web', { run_for: '1s', banner: '${NOMAD_TASK_NAME} on ${node.unique.name}', plain: 'x' })]), { drivers: { mock: driver } });
    runner.start();
    await clock.advance(1);
    expect(made[0]!.task.config).toEqual({ run_for: '1s', banner: `web on ${TEST_NODE.name}`, plain: 'x' });
  });

  /** A raw_exec task (run by the mock driver under that name) whose private dir holds an earlier runner's files. */
  function reusedAllocDir() {
    const dataDir = tempDir('allocrun-surface-');
    const spec: AllocSpec = { id: 'reused', job: 'j', group: 'g', type: 'batch', tasks: [{ name: 'web', driver: 'raw_exec', config: { run_for: '1h' }, killTimeout: 1_000 }] };
    const priv = join(dataDir, 'allocs', 'reused', 'web', 'private');
    mkdirSync(priv, { recursive: true });
    writeFileSync(join(priv, 'exec-0-abc.exit'), '0');
    writeFileSync(join(priv, 'keep.txt'), 'not a supervisor file');
    return { dataDir, spec, priv };
  }

  it("a fresh runner in a reused alloc dir clears the earlier runner's supervisor files of its raw_exec tasks", async () => {
    const { dataDir, spec, priv } = reusedAllocDir();
    const { clock, runner } = build(spec, { dataDir, drivers: { raw_exec: { ...createMockDriver(), name: 'raw_exec' } } });
    runner.start();
    expect(readdirSync(priv)).toEqual(['keep.txt']);
    runner.send({ type: 'KILL' });
    await clock.advance(5_000);
    await runner.done;
  });

  it('a fresh runner leaves the private dir of a task of another driver alone', async () => {
    const { dataDir, spec, priv } = reusedAllocDir();
    const { clock, runner } = build({ ...spec, tasks: [{ ...spec.tasks[0]!, driver: 'mock' }] }, { dataDir });
    runner.start();
    expect(readdirSync(priv).sort()).toEqual(['exec-0-abc.exit', 'keep.txt']);
    runner.send({ type: 'KILL' });
    await clock.advance(5_000);
    await runner.done;
  });

  it('a restored runner keeps the supervisor files: they belong to the workloads it adopts', async () => {
    const { dataDir, spec, priv } = reusedAllocDir();
    const drivers = { raw_exec: { ...createMockDriver(), name: 'raw_exec' } };
    const { clock, runner } = build(spec, { dataDir, drivers });
    // A snapshot taken before the runner starts: nothing of it has run yet.
    const snapshot = runner.persist();
    writeFileSync(join(priv, 'exec-1-def.exit'), '0');
    const resumed = createAllocRunner(spec, { clock, builtinHooks: false, node: TEST_NODE, hostEnv: {}, dataDir, drivers, snapshot }).start();
    expect(readdirSync(priv).sort()).toEqual(['exec-0-abc.exit', 'exec-1-def.exit', 'keep.txt']);
    resumed.stop();
  });
});
