/**
 * The kill gate (src/runtime/kill-gate.ts) under an in-process agent: mock-driver allocations on a
 * SimulatedClock, saved to a store in memory that can hold its saves back. A kill that a task's death
 * causes reaches the driver only once that death is saved; a KILL from outside does not wait for a save.
 * (That the order holds across a real agent's death: test/restore/crash-points.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { createAgent } from '../../src/runtime/create-agent.ts';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { until } from '../drivers/until.ts';
import { MemoryStore } from './memory-store.ts';

/** A sidecar that runs until stopped beside a main task that ends (failed) after 1 s. */
const spec = (id: string): AllocSpec => ({
  id, job: 'j', group: 'g', type: 'batch',
  restart: { attempts: 0, interval: 60_000, delay: 0, mode: 'fail' },
  tasks: [
    { name: 'side', driver: 'mock', lifecycle: { hook: 'prestart', sidecar: true }, config: { run_for: '1h' } },
    { name: 'main', driver: 'mock', config: { run_for: '1s', exit_code: 1 } },
  ],
});

async function running(id: string) {
  const clock = new SimulatedClock(0);
  const store = new MemoryStore();
  const mock = createMockDriver();
  const agent = createAgent({ dataDir: '/nonexistent/allocrun-kill-gate', store, clock, drivers: { mock }, builtinHooks: false, seed: 1 });
  const runner = agent.run(spec(id));
  await clock.advance(10);
  expect(runner.getState().taskStates.main!.state).toBe('running');
  const controllerOf = (task: string) => mock.controllers.find((c) => c.handle?.()?.taskName === task)!;
  const side = controllerOf('side');
  const main = controllerOf('main');
  let release!: () => void;
  store.hold = new Promise<void>((r) => (release = r));
  return { clock, store, agent, runner, side, main, release };
}

describe('the kill gate', () => {
  it('stops the sidecar only once the save recording the main task\'s death is done', async () => {
    const { clock, store, agent, runner, side, release } = await running('death');
    await clock.advance(1_000);
    expect(runner.getState().taskStates.main!.state).toBe('dead');
    // The alloc is killing its sidecar, and the save showing main dead is held: nothing reached the driver.
    await until(() => store.writing > 0, 'a save in flight');
    expect(side.calls).not.toContain('shutdown');
    store.hold = undefined;
    release();
    await until(() => side.calls.includes('shutdown'), 'the sidecar stopped');
    expect(store.saves.some((r) => r.state.taskStates.main!.state === 'dead')).toBe(true);
    await clock.advance(100);
    expect((await runner.done).clientStatus).toBe('failed');
    await agent.shutdown();
  });

  it('lets a KILL from outside reach the driver while a save is held', async () => {
    const { clock, store, agent, runner, main, release } = await running('kill');
    runner.send({ type: 'KILL' });
    await until(() => store.writing > 0, 'a save in flight');
    // No task died: the main task's stop goes out with its Killing not yet saved (the stop marker covers that).
    await until(() => main.calls.includes('shutdown'), 'the main task stopped');
    expect(store.saves.some((r) => r.state.taskStates.main!.events.some((e) => e.type === 'Killing'))).toBe(false);
    store.hold = undefined;
    release();
    await clock.advance(100);
    expect((await runner.done).clientStatus).toBe('complete');
    await agent.shutdown();
  });
});
