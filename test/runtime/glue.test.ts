/**
 * What hooks and drivers actually receive from the runtime: the environment they are given and in which
 * precedence, the state a stop hook gets back, the alloc env of alloc hooks, and what happens to a controller
 * whose start failed. Each test is named after the Nomad rule it checks.
 */
import { describe, expect, it } from 'vitest';
import { createAllocRunner, createMockDriver, HookError, type Controller, type Driver, type TaskHook } from '../../src/index.ts';
import type { AllocSpec, TaskSpec } from '../../machines/model.ts';
import { recordingAllocHook, recordingTaskHook, SimulatedClock, StubController, type HookCall } from '../../src/testing/index.ts';
import { TEST_NODE } from '../properties/world.ts';

function alloc(tasks: TaskSpec[], extra: Partial<AllocSpec> = {}): AllocSpec {
  return { id: 'glue', job: 'j', group: 'g', type: 'batch', tasks, ...extra };
}

/** The mock driver, remembering the env every controller was built with. */
function envCapturingDriver() {
  const mock = createMockDriver();
  const envs: Record<string, Readonly<Record<string, string>>[]> = {};
  const driver: Driver = {
    name: 'mock',
    controller: (task, ctx) => {
      (envs[task.name] ??= []).push(ctx.env);
      return mock.controller(task, ctx);
    },
  };
  return { driver, envs };
}

function start(spec: AllocSpec, opts: Parameters<typeof createAllocRunner>[1] = {}) {
  const clock = new SimulatedClock(0);
  const runner = createAllocRunner(spec, { clock, builtinHooks: false, node: TEST_NODE, hostEnv: {}, seed: 1, ...opts }).start();
  return { clock, runner };
}

describe("runtime glue: the task environment (Nomad's taskenv Builder order)", () => {
  // A task's own env cannot name a NOMAD_* variable (validateAllocSpec refuses it, test/jobspec), so the
  // order left to check is task env < prestart hook env, and NOMAD_* < prestart hook env.
  it('a prestart hook env var overrides the task env and a NOMAD_* variable', async () => {
    const { driver, envs } = envCapturingDriver();
    const hookEnvSeen: Record<string, string>[] = [];
    const setter: TaskHook = {
      name: 'setter',
      prestart: async (req, res) => {
        hookEnvSeen.push({ ...req.env });
        res.env = { SHARED: 'from-hook', NOMAD_ALLOC_NAME: 'hooked' };
      },
    };
    const t: TaskSpec = { name: 'web', driver: 'mock', config: { run_for: '1s' }, env: { SHARED: 'from-task', ONLY_TASK: 'yes' } };
    const { clock } = start(alloc([t]), { drivers: { mock: driver }, taskHooks: [setter] });
    await clock.advance(1);
    const env = envs.web![0]!;
    expect(env).toMatchObject({ SHARED: 'from-hook', ONLY_TASK: 'yes', NOMAD_ALLOC_NAME: 'hooked', NOMAD_TASK_NAME: 'web' });
    // The hook itself saw the task's env and the runtime's variables, without its own output.
    expect(hookEnvSeen[0]).toMatchObject({ SHARED: 'from-task', NOMAD_TASK_NAME: 'web', NOMAD_ALLOC_NAME: expect.any(String) });
    expect(hookEnvSeen[0]!.NOMAD_ALLOC_NAME).not.toBe('hooked');
  });

  it('prestart hook env vars apply in the order the hooks ran: a later hook wins, and sees the earlier one', async () => {
    const { driver, envs } = envCapturingDriver();
    const seenBySecond: Record<string, string>[] = [];
    const first: TaskHook = { name: 'first', prestart: async (_req, res) => void (res.env = { ORDER: 'first', FIRST: '1' }) };
    const second: TaskHook = {
      name: 'second',
      prestart: async (req, res) => {
        seenBySecond.push({ ...req.env });
        res.env = { ORDER: 'second' };
      },
    };
    const { clock } = start(alloc([{ name: 'web', driver: 'mock', config: { run_for: '1s' } }]), { drivers: { mock: driver }, taskHooks: [first, second] });
    await clock.advance(1);
    expect(seenBySecond[0]).toMatchObject({ ORDER: 'first', FIRST: '1' });
    expect(envs.web![0]).toMatchObject({ ORDER: 'second', FIRST: '1' });
  });

  it("a Done prestart hook's env is applied again on the next start, though the hook is not called", async () => {
    const { driver, envs } = envCapturingDriver();
    const log: HookCall[] = [];
    const once = recordingTaskHook('once', log, { prestart: async (_req, res) => void Object.assign(res, { env: { TOKEN: 't1' }, done: true }) }, ['prestart']);
    const t: TaskSpec = { name: 'web', driver: 'mock', config: { run_for: '1s', exit_code: 1 }, restart: { attempts: 1, interval: 3_600_000, delay: 1_000, mode: 'fail' } };
    const { clock, runner } = start(alloc([t], { type: 'service' }), { drivers: { mock: driver }, taskHooks: [once] });
    await clock.advanceUntil(() => runner.getState().taskStates.web!.state === 'dead');
    expect(log.filter((c) => c.method === 'prestart')).toHaveLength(1);
    expect(envs.web!.map((e) => e.TOKEN)).toEqual(['t1', 't1']);
  });

  it("one task's env and hook env never appear in another task's env", async () => {
    const { driver, envs } = envCapturingDriver();
    const hook: TaskHook = { name: 'tagger', prestart: async (req, res) => void (res.env = { [`TAG_${req.task.name}`]: 'x' }) };
    const a: TaskSpec = { name: 'a', driver: 'mock', config: { run_for: '1s' }, env: { A_ONLY: '1' } };
    const b: TaskSpec = { name: 'b', driver: 'mock', config: { run_for: '1s' }, env: { B_ONLY: '1' } };
    const { clock } = start(alloc([a, b]), { drivers: { mock: driver }, taskHooks: [hook] });
    await clock.advance(1);
    expect(Object.keys(envs.a![0]!)).not.toContain('B_ONLY');
    expect(Object.keys(envs.a![0]!)).not.toContain('TAG_b');
    expect(Object.keys(envs.b![0]!)).not.toContain('A_ONLY');
    expect(Object.keys(envs.b![0]!)).not.toContain('TAG_a');
  });
});

describe("runtime glue: what a stop hook gets back (Nomad's TaskStopRequest.ExistingState)", () => {
  /** Returns `{ n: previous n + 1 }`; the calls `fails` picks (by call number, from 1) throw instead. */
  const statefulHook = (log: HookCall[], fails: (call: number) => boolean) => {
    let calls = 0;
    return recordingTaskHook('stateful', log, {
      prestart: async (req, res) => {
        const n = ((req.previousState as { n: number } | undefined)?.n ?? 0) + 1;
        if (fails(++calls)) throw new HookError(`call ${calls} failed`, true);
        res.state = { n };
      },
    }, ['prestart', 'stop']);
  };

  it('a stop hook gets the state its prestart returned last', async () => {
    const log: HookCall[] = [];
    const t: TaskSpec = { name: 'web', driver: 'mock', config: { run_for: '1s', exit_code: 1 }, restart: { attempts: 2, interval: 3_600_000, delay: 1_000, mode: 'fail' } };
    const { clock, runner } = start(alloc([t], { type: 'service' }), { taskHooks: [statefulHook(log, () => false)] });
    await clock.advanceUntil(() => runner.getState().clientStatus === 'failed');
    await clock.advance(1);
    const prestarts = log.filter((c) => c.method === 'prestart');
    expect(prestarts.map((c) => (c.req as { previousState?: unknown }).previousState)).toEqual([undefined, { n: 1 }, { n: 2 }]);
    const stops = log.filter((c) => c.method === 'stop');
    expect(stops).toHaveLength(1);
    expect((stops[0]!.req as { existingState?: unknown }).existingState).toEqual({ n: 3 });
  });

  it('a failed prestart call stores nothing: the next call and the stop hook get the last successful state', async () => {
    const log: HookCall[] = [];
    const t: TaskSpec = { name: 'web', driver: 'mock', config: { run_for: '1s', exit_code: 1 }, restart: { attempts: 2, interval: 3_600_000, delay: 1_000, mode: 'fail' } };
    // Call 2 fails; call 3 therefore sees the state of call 1.
    const { clock, runner } = start(alloc([t], { type: 'service' }), { taskHooks: [statefulHook(log, (call) => call === 2)] });
    await clock.advanceUntil(() => runner.getState().clientStatus === 'failed');
    await clock.advance(1);
    const prev = log.filter((c) => c.method === 'prestart').map((c) => (c.req as { previousState?: unknown }).previousState);
    expect(prev).toEqual([undefined, { n: 1 }, { n: 1 }]);
    expect((log.find((c) => c.method === 'stop')!.req as { existingState?: unknown }).existingState).toEqual({ n: 2 });
  });

  it('a stop hook whose prestart never ran gets no state, and still runs once', async () => {
    const log: HookCall[] = [];
    const init: TaskSpec = { name: 'init', driver: 'mock', config: { run_for: '1s', exit_code: 1 }, lifecycle: { hook: 'prestart' }, restart: { attempts: 0, interval: 3_600_000, delay: 1_000, mode: 'fail' } };
    const main: TaskSpec = { name: 'main', driver: 'mock', config: { run_for: '1h' } };
    const { clock, runner } = start(alloc([init, main]), {
      taskHooks: (task) => (task.name === 'main' ? [statefulHook(log, () => false)] : []),
    });
    await clock.advance(1_000);
    await runner.done;
    expect(log.map((c) => c.method)).toEqual(['stop']);
    expect((log[0]!.req as { existingState?: unknown }).existingState).toBeUndefined();
  });
});

describe('runtime glue: alloc hooks get the alloc env of the alloc they are about', () => {
  it('prerun gets the env of the alloc it starts; update hooks get the env of the new alloc version, in order', async () => {
    const log: HookCall[] = [];
    const t: TaskSpec = { name: 'web', driver: 'mock', config: { run_for: '1h' } };
    const spec = alloc([t], { meta: { version: 'v1' }, modifyIndex: 1 });
    const { clock, runner } = start(spec, { allocHooks: [recordingAllocHook('watcher', log, {}, ['prerun', 'update'])] });
    await clock.advance(1);
    runner.send({ type: 'UPDATE', alloc: { ...spec, meta: { version: 'v2' }, modifyIndex: 2 } });
    await clock.advance(1);
    runner.send({ type: 'UPDATE', alloc: { ...spec, meta: { version: 'v3' }, modifyIndex: 3 } });
    await clock.advance(1);
    const prerun = log.find((c) => c.method === 'prerun')!.req as Record<string, string>;
    expect(prerun.NOMAD_META_version).toBe('v1');
    expect(prerun.NOMAD_ALLOC_ID).toBe('glue');
    const updates = log.filter((c) => c.method === 'update').map((c) => c.req as { alloc: AllocSpec; allocEnv: Record<string, string> });
    expect(updates.map((u) => [u.alloc.modifyIndex, u.allocEnv.NOMAD_META_version])).toEqual([[2, 'v2'], [3, 'v3']]);
  });

  it('an update whose AllocModifyIndex is not newer than the running alloc is never applied (Nomad client: only newer allocs)', async () => {
    const log: HookCall[] = [];
    const t: TaskSpec = { name: 'web', driver: 'mock', config: { run_for: '1h' } };
    const spec = alloc([t], { modifyIndex: 5 });
    const { clock, runner } = start(spec, { allocHooks: [recordingAllocHook('watcher', log, {}, ['update'])] });
    await clock.advance(1);
    runner.send({ type: 'UPDATE', alloc: { ...spec, modifyIndex: 7 } });
    await clock.advance(1);
    runner.send({ type: 'UPDATE', alloc: { ...spec, modifyIndex: 6 } });
    runner.send({ type: 'UPDATE', alloc: { ...spec, modifyIndex: 7 } });
    await clock.advance(1);
    expect(log.map((c) => (c.req as { alloc: AllocSpec }).alloc.modifyIndex)).toEqual([7]);
  });
});

describe('runtime glue: controllers', () => {
  function stubDriver(make: () => StubController) {
    const made: StubController[] = [];
    const driver: Driver = {
      name: 'mock',
      controller: (): Controller => {
        const c = make();
        made.push(c);
        return c;
      },
    };
    return { driver, made };
  }

  it("a controller whose start failed is removed and closed before the next attempt gets a new one (SwarmKit's Remove/Close)", async () => {
    const { driver, made } = stubDriver(() => new StubController({ start: async () => Promise.reject(Object.assign(new Error('port busy'), { recoverable: true })) }));
    const t: TaskSpec = { name: 'web', driver: 'mock', config: {}, restart: { attempts: 1, interval: 3_600_000, delay: 1_000, mode: 'fail' } };
    const { clock, runner } = start(alloc([t], { type: 'service' }), { drivers: { mock: driver } });
    await clock.advanceUntil(() => runner.getState().taskStates.web!.state === 'dead');
    expect(made).toHaveLength(2);
    for (const c of made) {
      expect(c.callCount('start')).toBe(1);
      expect(c.callCount('remove')).toBe(1);
      expect(c.callCount('close')).toBe(1);
      expect(c.callCount('wait')).toBe(0);
    }
    expect(runner.getState().taskStates.web!.events.filter((e) => e.type === 'Driver Failure')).toHaveLength(2);
  });

  it('the controller of an exited workload is released once, and a restart builds a fresh one', async () => {
    let exits = 0;
    const { driver, made } = stubDriver(() => new StubController({ wait: async () => ({ exitCode: ++exits < 2 ? 1 : 0, signal: 0 }) }));
    const t: TaskSpec = { name: 'web', driver: 'mock', config: {}, restart: { attempts: 1, interval: 3_600_000, delay: 1_000, mode: 'fail' } };
    const { clock, runner } = start(alloc([t]), { drivers: { mock: driver } });
    await clock.advanceUntil(() => runner.getState().taskStates.web!.state === 'dead');
    expect(made).toHaveLength(2);
    for (const c of made) expect([c.callCount('remove'), c.callCount('close')]).toEqual([1, 1]);
    expect(runner.getState().taskStates.web).toMatchObject({ failed: false, restarts: 1 });
  });
});
