/**
 * The lifecycle a hook is built with (Nomad's TaskLifecycle): what it asks becomes an event to the
 * allocation's actor, so the machines decide. A restart that is a failure meets the restart policy
 * (check_restart), one that is not does not; a signal reaches the task; an emitted event lands on the
 * task's state. The mock driver on a SimulatedClock.
 */
import { describe, expect, it } from 'vitest';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import type { TaskLifecycle } from '../../src/hooks/types.ts';
import type { AllocSpec, TaskSpec } from '../../src/jobspec/types.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { TEST_NODE } from '../properties/world.ts';

const web: TaskSpec = { name: 'web', driver: 'mock', config: { run_for: '1h' }, killTimeout: 1_000 };
const spec = (restart: AllocSpec['restart']): AllocSpec => ({ id: 'lc', job: 'j', group: 'g', type: 'service', tasks: [web], restart });

async function running(restart: AllocSpec['restart']) {
  const clock = new SimulatedClock(0);
  const lifecycles = new Map<string, TaskLifecycle>();
  const runner = createAllocRunner(spec(restart), {
    clock,
    builtinHooks: false,
    node: TEST_NODE,
    hostEnv: {},
    seed: 1,
    taskHooks: (task, lifecycle) => {
      lifecycles.set(task.name, lifecycle);
      return [];
    },
  }).start();
  await clock.advance(10);
  expect(runner.getState().taskStates.web?.state).toBe('running');
  return { clock, runner, lifecycle: lifecycles.get('web')! };
}

const types = (r: Awaited<ReturnType<typeof running>>) => r.runner.getState().taskStates.web!.events.map((e) => e.type);

describe('a hook asks its task runner through the lifecycle it was built with', () => {
  it('a restart that is a failure is counted against the restart policy: once attempts are spent the task is not restarted and fails', async () => {
    const r = await running({ attempts: 1, interval: 3_600_000, delay: 1_000, mode: 'fail' });
    r.lifecycle.restart({ reason: 'healthcheck: check "http" unhealthy', failure: true });
    await r.clock.advance(5_000);
    const events = r.runner.getState().taskStates.web!.events;
    expect(events.find((e) => e.type === 'Restart Signaled')?.displayMessage).toBe('healthcheck: check "http" unhealthy');
    expect(r.runner.getState().taskStates.web?.state).toBe('running');
    expect(r.runner.getState().taskStates.web?.restarts).toBe(1);
    r.lifecycle.restart({ reason: 'healthcheck: check "http" unhealthy', failure: true });
    await r.clock.advance(5_000);
    expect(types(r).at(-1)).toBe('Not Restarting');
    expect(r.runner.getState().taskStates.web).toMatchObject({ state: 'dead', failed: true });
    r.runner.stop();
  });

  it('a restart that is not a failure (a re-rendered template) does not spend the restart policy', async () => {
    const r = await running({ attempts: 1, interval: 3_600_000, delay: 1_000, mode: 'fail' });
    for (let i = 0; i < 3; i++) {
      r.lifecycle.restart({ reason: 'Template with change_mode restart re-rendered', failure: false });
      await r.clock.advance(5_000);
    }
    expect(r.runner.getState().taskStates.web).toMatchObject({ state: 'running', failed: false });
    expect(types(r).filter((t) => t === 'Restart Signaled')).toHaveLength(3);
    r.runner.stop();
  });

  it('a signal reaches the running task and an emitted event lands on its state', async () => {
    const r = await running(undefined);
    r.lifecycle.signal('SIGHUP');
    r.lifecycle.emit({ type: 'Template', message: 'Missing: nomadVar.block(nomad/jobs/j)' });
    await r.clock.advance(10);
    const events = r.runner.getState().taskStates.web!.events;
    expect(events.find((e) => e.type === 'Signaling')?.details).toMatchObject({ signal: 'SIGHUP' });
    expect(events.find((e) => e.type === 'Template')?.message).toBe('Missing: nomadVar.block(nomad/jobs/j)');
    r.runner.stop();
  });
});
