/**
 * Hooks marked signal-free (src/hooks/signal-free.ts) are handed one shared never-aborted signal, so their
 * calls make no AbortSignal; every other hook still gets its call's own, aborted when the call is stopped.
 * The built-in hooks that never read theirs carry the mark.
 */
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { providedAllocRunnerMachine } from '../../src/runtime/alloc-bindings.ts';
import { createTaskRunner } from '../../src/runtime/create-task-runner.ts';
import { registerRunner } from '../../src/runtime/runner-registry.ts';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.ts';
import { allocDirHook } from '../../src/hooks/alloc-dir-hook.ts';
import { isSignalFree, NEVER_ABORTED, signalFree } from '../../src/hooks/signal-free.ts';
import { statsHook } from '../../src/hooks/stats-hook.ts';
import { taskDirHook } from '../../src/hooks/task-dir-hook.ts';
import type { AllocRunnerHook, TaskHook } from '../../src/hooks/types.ts';
import { validateHook } from '../../src/hooks/validate-hook.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { AllocStatsReporter } from '../../src/runtime/alloc-stats.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

/** A task hook whose prestart and poststart record the signal they are handed. */
function signalTaker(name: string, seen: AbortSignal[]): TaskHook {
  return {
    name,
    async prestart(_req, _res, signal) {
      seen.push(signal);
    },
    async poststart(_req, signal) {
      seen.push(signal);
    },
  };
}

describe('signal-free hooks', () => {
  it('a marked task hook is handed the one never-aborted signal in every call; an unmarked one a signal per call', async () => {
    const free: AbortSignal[] = [];
    const plain: AbortSignal[] = [];
    const clock = new SimulatedClock(0);
    const runner = createTaskRunner(
      { name: 'web', driver: 'mock', config: { run_for: '1s' } },
      { clock, jobType: 'batch', hooks: [signalFree(signalTaker('free', free)), signalTaker('plain', plain)], allocDir: '/nonexistent/a' },
    ).start();
    await clock.advanceUntil(() => runner.getState().state === 'dead');
    expect(free).toHaveLength(2);
    for (const s of free) expect(s).toBe(NEVER_ABORTED);
    expect(NEVER_ABORTED.aborted).toBe(false);
    expect(plain).toHaveLength(2);
    expect(plain[0]).not.toBe(plain[1]);
    expect(plain).not.toContain(NEVER_ABORTED);
    runner.stop();
  });

  it("an unmarked hook's signal is still aborted when its call is stopped (a kill during prestart)", async () => {
    const signals: AbortSignal[] = [];
    const stuck: TaskHook = {
      name: 'stuck',
      prestart: (_req, _res, signal) => {
        signals.push(signal);
        return new Promise(() => undefined);
      },
    };
    const clock = new SimulatedClock(0);
    const runner = createTaskRunner({ name: 'web', driver: 'mock', config: { run_for: '1s' } }, { clock, hooks: [stuck], allocDir: '/nonexistent/a' }).start();
    await clock.advance(1);
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(false);
    runner.send({ type: 'KILL' });
    await clock.advance(1);
    expect(signals[0]!.aborted).toBe(true);
    runner.stop();
  });

  it('a marked alloc hook is handed the never-aborted signal, an unmarked one its call\'s own', async () => {
    const seen: Record<string, AbortSignal> = {};
    const taker = (name: string): AllocRunnerHook => ({
      name,
      async prerun(_env, signal) {
        seen[name] = signal;
      },
    });
    const alloc: AllocSpec = { id: 'a1', job: 'j', group: 'g', type: 'batch', tasks: [{ name: 'web', driver: 'mock', config: { run_for: '1s' } }] };
    const clock = new SimulatedClock(0);
    const actor = createActor(providedAllocRunnerMachine, { clock, input: { alloc, hooks: { prerun: ['free', 'plain'] }, seed: 1 } });
    registerRunner(actor.system, {
      allocId: alloc.id,
      drivers: { mock: createMockDriver() },
      hooksFor: () => [],
      clock,
      allocDir: '/nonexistent/a1',
      taskDirOf: (t) => `/nonexistent/a1/${t.name}`,
      envFor: () => ({}),
      controllers: new Map(),
      allocHooks: [signalFree(taker('free')), taker('plain')],
    });
    actor.start();
    await clock.advance(1);
    expect(seen['free']).toBe(NEVER_ABORTED);
    expect(seen['plain']).toBeInstanceOf(AbortSignal);
    expect(seen['plain']).not.toBe(NEVER_ABORTED);
    actor.stop();
  });

  it('the built-in hooks that never read their signal are marked (alloc_dir, task_dir, validate, stats)', () => {
    for (const h of [allocDirHook('/nonexistent/a'), taskDirHook(), validateHook(['mock']), statsHook(new AllocStatsReporter())]) expect([h.name, isSignalFree(h)]).toEqual([h.name, true]);
    expect(isSignalFree({ name: 'user' })).toBe(false);
  });
});
