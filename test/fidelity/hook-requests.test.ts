/**
 * Hook request fields (Nomad's interfaces/task_lifecycle.go): what prestart and poststart hooks are given,
 * through a mock-driver alloc runner on the simulated clock.
 */
import { describe, expect, it } from 'vitest';
import type { Driver } from '../../src/drivers/controller.ts';
import type { TaskHook, TaskPoststartRequest, TaskPrestartRequest } from '../../src/hooks/types.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { StubController } from '../../src/testing/stub-controller.ts';

function spec(config: Record<string, unknown>): AllocSpec {
  return {
    id: 'a1',
    job: 'web',
    group: 'g',
    type: 'batch',
    tasks: [{ name: 'web', driver: 'mock', config, resources: { cpu: 500, memoryMB: 256 } }],
  };
}

function capture() {
  const prestart: TaskPrestartRequest[] = [];
  const poststart: TaskPoststartRequest[] = [];
  const hook: TaskHook = {
    name: 'capture',
    prestart: async (req) => void prestart.push(req),
    poststart: async (req) => void poststart.push(req),
  };
  return { hook, prestart, poststart };
}

describe('hook request fields', () => {
  it('TestTaskRunner_Prestart (TaskResources): prestart requests carry the task resources, frozen', async () => {
    const clock = new SimulatedClock();
    const c = capture();
    createAllocRunner(spec({ run_for: '1s' }), { clock, builtinHooks: false, taskHooks: [c.hook] }).start();
    await clock.advance(0);
    expect(c.prestart).toHaveLength(1);
    expect(c.prestart[0]!.resources).toEqual({ cpu: 500, memoryMB: 256 });
    expect(Object.isFrozen(c.prestart[0]!.resources)).toBe(true);
  });

  it('TestTaskRunner_Poststart (DriverNetwork): poststart requests carry the network the mock driver reports', async () => {
    const clock = new SimulatedClock();
    const c = capture();
    createAllocRunner(spec({ run_for: '1s', driver_ip: '10.0.0.7', driver_port_map: 'http:8080, db:5432' }), {
      clock,
      builtinHooks: false,
      taskHooks: [c.hook],
    }).start();
    await clock.advance(0);
    expect(c.poststart[0]!.driverNetwork).toEqual({ ip: '10.0.0.7', portMap: { http: 8080, db: 5432 }, autoAdvertise: false });
  });

  it('TestTaskRunner_Poststart (DriverExec): poststart requests carry an exec into the running task, timed by the clock', async () => {
    const clock = new SimulatedClock();
    const c = capture();
    createAllocRunner(spec({ run_for: '1m', exec_command: { run_for: '2s', exit_code: 3, stdout_string: 'degraded' } }), {
      clock,
      builtinHooks: false,
      taskHooks: [c.hook],
    }).start();
    await clock.advance(0);
    const exec = c.poststart[0]!.driverExec!;
    let result: unknown;
    void exec.exec('/bin/check', ['--deep'], { timeout: 5_000 }, new AbortController().signal).then((r) => (result = r));
    await clock.advance(1_999);
    expect(result).toBeUndefined();
    await clock.advance(1);
    expect(result).toEqual({ output: 'degraded', exitCode: 3 });
    const timedOut = exec.exec('/bin/check', [], { timeout: 1_000 }, new AbortController().signal);
    const settled = timedOut.then(() => 'resolved', (e: Error) => e.message);
    await clock.advance(1_000);
    expect(await settled).toBe('exec "/bin/check" in task "web" timed out after 1000 ms');
  });

  it('a driver without a network or exec leaves both fields out', async () => {
    const clock = new SimulatedClock();
    const c = capture();
    const plain: Driver = { name: 'plain', controller: () => new StubController({ wait: () => new Promise(() => {}) }) };
    createAllocRunner({ ...spec({}), tasks: [{ name: 'web', driver: 'plain', config: {} }] }, {
      clock,
      builtinHooks: false,
      drivers: { plain },
      taskHooks: [c.hook],
    }).start();
    await clock.advance(0);
    expect(c.poststart).toHaveLength(1);
    expect(c.poststart[0]!.driverNetwork).toBeUndefined();
    expect(c.poststart[0]!.driverExec).toBeUndefined();
    expect(c.prestart[0]!.resources).toEqual({});
  });
});
