/**
 * What the runtime hands a task's driver and hooks (task-bindings.ts): the DriverContext of each start
 * (Nomad's task ID attempt, the prestart hooks' mounts and devices), and the request of each hook phase
 * (interfaces/task_lifecycle.go). Standalone task runners on stub controllers and a simulated clock.
 */
import { of, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { createTaskRunner, type TaskRunnerOptions } from '../../src/runtime/create-task-runner.ts';
import type { Controller, DriverContext, ResourceUsage } from '../../src/drivers/controller.ts';
import type { TaskExitedRequest, TaskHook, TaskPoststartRequest } from '../../src/hooks/types.ts';
import type { ExitResult, TaskMount, TaskSpec } from '../../src/jobspec/types.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { StubController } from '../../src/testing/stub-controller.ts';
import { recordingTaskHook, untilAborted, type HookCall } from '../../src/testing/hook-recorder.ts';
import { capturingDriver } from '../../src/testing/capturing-driver.ts';


/** A stub whose workload runs until it is stopped. */
const longRunning = () => new StubController({ wait: async (signal) => untilAborted(signal).then(() => ({ exitCode: 0, signal: 0 })) });

const RESTART_ONCE = { attempts: 1, interval: 3_600_000, delay: 1_000, mode: 'fail' as const };

function run<C extends Controller>(make: () => C, opts: TaskRunnerOptions = {}, task: Partial<TaskSpec> = {}) {
  const clock = new SimulatedClock(0);
  const d = capturingDriver({ make });
  const runner = createTaskRunner({ name: 'web', driver: 'stub', config: {}, ...task }, { clock, drivers: { stub: d.driver }, seed: 1, ...opts }).start();
  return { clock, runner, ...d };
}

describe("the driver's context for each start (Nomad's TaskConfig)", () => {
  it('tells the driver which start it is: 1 for the first, 2 for the restart after it', async () => {
    const { clock, runner, contexts } = run(() => new StubController({ wait: async () => ({ exitCode: 1, signal: 0 }) }), { groupRestart: RESTART_ONCE });
    await clock.advanceUntil(() => runner.getState().state === 'dead');
    expect(contexts.map((c) => c.attempt)).toEqual([1, 2]);
  });

  it("gives the driver the mounts and devices the prestart hooks asked for (Nomad's hookResources)", async () => {
    const volumes: TaskHook = {
      name: 'volumes',
      prestart: async (_req, res) => {
        res.mounts = [{ hostPath: '/srv/data', taskPath: '/data', readOnly: true }];
        res.devices = [{ hostPath: '/dev/fuse', taskPath: '/dev/fuse' }];
      },
    };
    const { clock, contexts } = run(longRunning, { hooks: [volumes] });
    await clock.advance(1);
    expect(contexts[0]!.mounts).toEqual([{ hostPath: '/srv/data', taskPath: '/data', readOnly: true }]);
    expect(contexts[0]!.devices).toEqual([{ hostPath: '/dev/fuse', taskPath: '/dev/fuse' }]);
    expect(Object.keys(contexts[0]!)).toEqual(['attempt', 'allocId', 'taskDir', 'allocDir', 'logs', 'clock', 'mounts', 'devices', 'env']);
  });

  it('gives the driver no mounts or devices at all when no prestart hook asked for any', async () => {
    const { clock, contexts } = run(longRunning, { hooks: [{ name: 'plain', prestart: async () => undefined }] });
    await clock.advance(1);
    expect(contexts[0]).not.toHaveProperty('mounts');
    expect(contexts[0]).not.toHaveProperty('devices');
  });

  it('hands every start the same context: its keys in one order, and an env built only when the driver reads it', async () => {
    const { clock, runner, contexts } = run(() => new StubController({ wait: async () => ({ exitCode: 1, signal: 0 }) }), { groupRestart: RESTART_ONCE }, { env: { A: '1' } });
    await clock.advanceUntil(() => runner.getState().state === 'dead');
    expect(contexts).toHaveLength(2);
    for (const ctx of contexts) {
      expect(Object.keys(ctx)).toEqual(['attempt', 'allocId', 'taskDir', 'allocDir', 'logs', 'clock', 'env']);
      expect(Object.getOwnPropertyDescriptor(ctx, 'env')).toMatchObject({ enumerable: true, set: undefined });
      expect(ctx.env['A']).toBe('1');
      expect(ctx.env).toBe(ctx.env);
      expect(Object.isFrozen(ctx.env)).toBe(true);
    }
  });

  it("keeps a prestart hook's mounts as they were returned: a hook changing its response later changes nothing", async () => {
    let returned: TaskMount[] = [];
    const volumes: TaskHook = {
      name: 'volumes',
      prestart: async (_req, res) => {
        returned = [{ hostPath: '/srv/a', taskPath: '/a' }];
        res.mounts = returned;
      },
    };
    const { clock, runner, contexts } = run(() => new StubController({ wait: async () => ({ exitCode: 1, signal: 0 }) }), { hooks: [volumes], groupRestart: RESTART_ONCE });
    await clock.advance(1);
    returned[0]!.hostPath = '/tmp/elsewhere';
    returned.push({ hostPath: '/srv/b', taskPath: '/b' });
    await clock.advanceUntil(() => runner.getState().state === 'dead');
    expect(contexts.map((c) => c.mounts)).toEqual([
      [{ hostPath: '/srv/a', taskPath: '/a' }],
      [{ hostPath: '/srv/a', taskPath: '/a' }],
    ]);
  });
});

describe("what poststart hooks get from the task's controller (Nomad's TaskPoststartRequest)", () => {
  it("a poststart hook's stats stream is the controller's, at the interval the hook asks for", async () => {
    const usage: ResourceUsage = { timestamp: 5, cpu: { percent: 12, userMs: 1, systemMs: 2 }, memory: { rss: 4096 } };
    const intervals: number[] = [];
    const withStats = () => Object.assign(longRunning(), {
      stats: (ms: number): Observable<ResourceUsage> => {
        intervals.push(ms);
        return of(usage);
      },
    });
    const got: ResourceUsage[] = [];
    const reader: TaskHook = { name: 'reader', poststart: async (req) => void req.stats!(250).subscribe((u) => got.push(u)) };
    const { clock } = run(withStats, { hooks: [reader] });
    await clock.advance(1);
    expect(intervals).toEqual([250]);
    expect(got).toEqual([usage]);
  });

  it('a controller without stats, network or exec gives poststart hooks none of them', async () => {
    const seen: TaskPoststartRequest[] = [];
    const { clock } = run(longRunning, { hooks: [{ name: 'reader', poststart: async (req) => void seen.push(req) }] });
    await clock.advance(1);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.stats).toBeUndefined();
    expect(seen[0]).not.toHaveProperty('driverNetwork');
    expect(seen[0]).not.toHaveProperty('driverExec');
    expect(seen[0]!.task.name).toBe('web');
  });
});

describe('what the other task hook phases are given', () => {
  it("an exited hook gets the workload's exit code, signal and error message (Nomad's TaskExitedRequest)", async () => {
    const exit: ExitResult = { exitCode: 137, signal: 9, err: 'OOM killed' };
    const seen: TaskExitedRequest[] = [];
    const { clock } = run(() => new StubController({ wait: async () => exit }), { jobType: 'batch', hooks: [{ name: 'watch', exited: async (req) => void seen.push(req) }] }, {
      restart: { attempts: 0, interval: 3_600_000, delay: 1_000, mode: 'fail' },
    });
    await clock.advance(1);
    expect(seen).toEqual([{ exitCode: 137, signal: 9, error: 'OOM killed', task: expect.objectContaining({ name: 'web' }) }]);
  });

  it('a preKilling hook is told which task is being killed', async () => {
    const log: HookCall[] = [];
    const { clock, runner } = run(longRunning, { hooks: [recordingTaskHook('drain', log, {}, ['preKilling'])] });
    await clock.advance(1);
    runner.send({ type: 'KILL' });
    await clock.advance(1);
    expect(log.map((c) => [c.method, (c.req as { task: TaskSpec }).task.name])).toEqual([['preKilling', 'web']]);
  });

  it('a shutdown hook is told which task the runner is detaching from', async () => {
    const log: HookCall[] = [];
    const { clock, runner } = run(longRunning, { hooks: [recordingTaskHook('persist', log, {}, ['shutdown'])] });
    await clock.advance(1);
    runner.send({ type: 'SHUTDOWN' });
    await clock.advance(1);
    expect(log.map((c) => [c.method, (c.req as { task: TaskSpec }).task.name])).toEqual([['shutdown', 'web']]);
  });
});
