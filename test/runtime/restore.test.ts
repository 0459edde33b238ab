import { describe, expect, it } from 'vitest';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { recordingTaskHook, type HookCall } from '../../src/testing/hook-recorder.ts';

const spec: AllocSpec = {
  id: 'r1', job: 'j', group: 'g', type: 'batch',
  tasks: [
    { name: 'init', driver: 'mock', config: { run_for: '1s' }, lifecycle: { hook: 'prestart' } },
    { name: 'main', driver: 'mock', config: { run_for: '1h' } },
  ],
};

describe('restore', () => {
  it('resumes a running allocation in a new runtime: no second start, and it completes when the workload exits', async () => {
    const clock = new SimulatedClock(0);
    const log: HookCall[] = [];
    const first = createAllocRunner(spec, { clock, builtinHooks: false, drivers: { mock: createMockDriver() } }).start();
    await clock.advance(10_000);
    expect(first.getState().taskStates.main!.state).toBe('running');
    const saved = JSON.parse(JSON.stringify(first.persist()));
    first.stop(); // the agent dies; the workload does not

    const mock = createMockDriver();
    const second = createAllocRunner(spec, {
      clock,
      builtinHooks: false,
      drivers: { mock },
      snapshot: saved,
      taskHooks: [recordingTaskHook('recorder', log, {}, ['prestart', 'stop'])],
    }).start();
    await clock.advance(1);
    expect(second.getState().taskStates.main!.state).toBe('running');
    expect(mock.controllers).toHaveLength(1); // reattached through the handle, not started again
    await clock.advance(3_600_000);
    const final = await second.done;
    expect(final.clientStatus).toBe('complete');
    expect(final.taskStates.main!.events.map((e) => e.type)).toEqual(['Received', 'Task Setup', 'Started', 'Terminated']);
    expect(final.taskStates.main!.finishedAt).toBe(3_601_000);
  });

  it('restores a pending restart delay from its absolute deadline', async () => {
    const clock = new SimulatedClock(0);
    const failing: AllocSpec = { ...spec, type: 'service', tasks: [{ name: 'main', driver: 'mock', config: { run_for: '1s', exit_code: 1 }, restart: { attempts: 3, interval: 3_600_000, delay: 60_000, mode: 'fail' } }] };
    const first = createAllocRunner(failing, { clock, builtinHooks: false, seed: 1 }).start();
    await clock.advance(1_000);
    const restarting = first.getState().taskStates.main!.events.at(-1)!;
    expect(restarting.type).toBe('Restarting');
    await clock.advance(30_000);
    const saved = first.persist();
    first.stop();

    const second = createAllocRunner(failing, { clock, builtinHooks: false, snapshot: saved }).start();
    await clock.advance(restarting.time + restarting.startDelay! - clock.now() - 1);
    expect(second.getState().taskStates.main!.state).toBe('pending');
    await clock.advance(1);
    expect(second.getState().taskStates.main!.state).toBe('running');
  });

  it("re-runs, on restore, a running task's prestart hooks that are not Done and its poststart hooks (Nomad's RestoreState)", async () => {
    const clock = new SimulatedClock(0);
    const main: AllocSpec = { ...spec, tasks: [spec.tasks[1]!] };
    const hooks = (log: HookCall[]) => [
      // `once` says Done, so a restore only re-applies its env; `each` is not Done, so it runs again.
      recordingTaskHook('once', log, { prestart: async (_req, res) => void Object.assign(res, { done: true, env: { ONCE: '1' } }) }, ['prestart']),
      recordingTaskHook('each', log, {}, ['prestart', 'poststart']),
    ];
    const before: HookCall[] = [];
    const first = createAllocRunner(main, { clock, builtinHooks: false, taskHooks: hooks(before) }).start();
    await clock.advance(10);
    expect(before.map((c) => `${c.hook}.${c.method}`)).toEqual(['once.prestart', 'each.prestart', 'each.poststart']);
    const saved = first.persist();
    first.stop();

    const after: HookCall[] = [];
    const second = createAllocRunner(main, { clock, builtinHooks: false, taskHooks: hooks(after), snapshot: saved }).start();
    await clock.advance(10);
    expect(after.map((c) => `${c.hook}.${c.method}`)).toEqual(['each.prestart', 'each.poststart']);
    const task = second.actor.getSnapshot().children.main!.getSnapshot() as { context: { hookEnv: Record<string, string> } };
    expect(task.context.hookEnv.ONCE).toBe('1');
    expect(second.getState().taskStates.main!.events.filter((e) => e.type === 'Started')).toHaveLength(1);
    second.send({ type: 'KILL' });
    await clock.advance(10_000);
    await second.done;
  });
});
