/**
 * The alloc hook actor (alloc-bindings.ts): an alloc hook the plan names must be registered, and a runner
 * registered without an alloc env gives its hooks an empty one. The alloc-runner machine with bindings
 * registered by hand, as createAllocRunner registers them, on the mock driver and a simulated clock.
 */
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { providedAllocRunnerMachine } from '../../src/runtime/alloc-bindings.ts';
import { registerRunner, type RunnerBindings } from '../../src/runtime/runner-registry.ts';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import type { AllocHookPlan } from '../../machines/alloc-runner.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { recordingAllocHook, type HookCall } from '../../src/testing/hook-recorder.ts';

const alloc: AllocSpec = { id: 'a1', job: 'j', group: 'g', type: 'batch', tasks: [{ name: 'web', driver: 'mock', config: { run_for: '1s' } }] };

function startAlloc(hooks: AllocHookPlan, bindings: Partial<RunnerBindings>) {
  const clock = new SimulatedClock(0);
  const actor = createActor(providedAllocRunnerMachine, { clock, input: { alloc, hooks, seed: 1 } });
  registerRunner(actor.system, {
    allocId: alloc.id,
    drivers: { mock: createMockDriver() },
    hooksFor: () => [],
    clock,
    allocDir: '/allocs/a1',
    taskDirOf: (t) => `/allocs/a1/${t.name}`,
    envFor: () => ({}),
    controllers: new Map(),
    ...bindings,
  });
  return { clock, actor: actor.start() };
}

describe('alloc hook calls', () => {
  it("an alloc hook the plan names but the runner has not registered fails prerun, naming the hook, and the alloc's tasks never start", async () => {
    const log: HookCall[] = [];
    const { clock, actor } = startAlloc({ prerun: ['ghost'] }, { allocHooks: [recordingAllocHook('present', log, {}, ['prerun'])] });
    await clock.advance(1);
    const ctx = actor.getSnapshot().context;
    expect(ctx.hookErrors).toEqual([{ phase: 'prerun', hook: 'ghost', message: 'alloc hook "ghost" is not registered' }]);
    expect(ctx.taskStates.web!.events.map((e) => e.type)).not.toContain('Started');
    expect(log).toEqual([]);
    actor.stop();
  });

  it('a runner registered without alloc hooks answers an alloc hook call with the same error', async () => {
    const { clock, actor } = startAlloc({ prerun: ['ghost'] }, {});
    await clock.advance(1);
    expect(actor.getSnapshot().context.hookErrors).toEqual([{ phase: 'prerun', hook: 'ghost', message: 'alloc hook "ghost" is not registered' }]);
    actor.stop();
  });

  it('a runner registered without an alloc env gives its prerun hooks an empty one', async () => {
    const log: HookCall[] = [];
    const { clock, actor } = startAlloc({ prerun: ['watcher'] }, { allocHooks: [recordingAllocHook('watcher', log, {}, ['prerun'])] });
    await clock.advance(1);
    expect(log.map((c) => [c.method, c.req])).toEqual([['prerun', {}]]);
    expect(actor.getSnapshot().context.hookErrors).toEqual([]);
    expect(actor.getSnapshot().context.taskStates.web!.events.map((e) => e.type)).toContain('Started');
    actor.stop();
  });

  it('builds the alloc env for prerun only when a hook reads it, and it reads as the plain read-only record', async () => {
    let built = 0;
    const allocEnv = () => {
      built++;
      return Object.freeze({ NOMAD_ALLOC_ID: 'a1', NOMAD_JOB_NAME: 'j' });
    };
    const seen: unknown[] = [];
    const quiet = { name: 'quiet', prerun: async () => undefined };
    const reader = {
      name: 'reader',
      prerun: async (env: Readonly<Record<string, string>>) => {
        const writable = env as Record<string, string>;
        seen.push(built, { ...env }, Object.keys(env), 'NOMAD_JOB_NAME' in env, 'OTHER' in env, env.NOMAD_ALLOC_ID, JSON.stringify(env), Reflect.set(writable, 'X', 'y'), Reflect.deleteProperty(writable, 'NOMAD_JOB_NAME'), built);
      },
    };
    const first = startAlloc({ prerun: ['quiet'] }, { allocHooks: [quiet], allocEnv });
    await first.clock.advance(1);
    expect(built).toBe(0);
    first.actor.stop();
    const second = startAlloc({ prerun: ['reader'] }, { allocHooks: [reader], allocEnv });
    await second.clock.advance(1);
    expect(seen).toEqual([0, { NOMAD_ALLOC_ID: 'a1', NOMAD_JOB_NAME: 'j' }, ['NOMAD_ALLOC_ID', 'NOMAD_JOB_NAME'], true, false, 'a1', '{"NOMAD_ALLOC_ID":"a1","NOMAD_JOB_NAME":"j"}', false, false, 1]);
    second.actor.stop();
  });
});
