import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createAllocRunner, type PersistedAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { upgradeAllocValue, upgradeTaskContext } from '../../src/runtime/snapshot-upgrade.ts';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.ts';
import type { AllocSpec, AllocState } from '../../src/jobspec/types.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

/** The resumed allocation ended complete, its task started once (never again by the resume) and killed. */
function expectKilledAfterOneStart(final: AllocState): void {
  expect(final.clientStatus).toBe('complete');
  const types = final.taskStates.web!.events.map((e) => e.type);
  expect(types.filter((t) => t === 'Started')).toHaveLength(1);
  expect(types.slice(-2)).toEqual(['Terminated', 'Killed']);
}

/** Written by allocrun 0.1.0 (flat task context): a service alloc whose prestart task ran and whose `web` task runs. */
const fixture = JSON.parse(readFileSync(new URL('./fixtures/snapshot-before-context-groups.json', import.meta.url), 'utf8')) as {
  spec: AllocSpec;
  now: number;
  persisted: PersistedAllocRunner;
};

describe('snapshots written before the runner contexts were grouped', () => {
  it('an upgraded agent resumes the running task from its old snapshot: reattached, not started again, and it can be killed', async () => {
    const clock = new SimulatedClock(fixture.now);
    const mock = createMockDriver();
    const runner = createAllocRunner(fixture.spec, { clock, builtinHooks: false, drivers: { mock }, snapshot: fixture.persisted }).start();
    await clock.advance(1);
    expect(runner.actor.getSnapshot().status).toBe('active');
    expect(runner.getState().taskStates.web!.state).toBe('running');
    // Persisted with `running`'s three regions idle at its top: resumed in running.steady.
    expect(runner.actor.getSnapshot().value).toEqual({ running: 'steady' });
    expect(mock.controllers).toHaveLength(1);
    const web = runner.actor.getSnapshot().children.web!.getSnapshot() as { context: { settings: { allocId: string }; run: { attempt: number } } };
    expect(web.context.settings.allocId).toBe('old-shape');
    expect(web.context.run.attempt).toBe(1);
    const alloc = runner.actor.getSnapshot().context;
    expect(alloc.gates).toEqual({ coordinator: 'wait_alloc', open: ['preSide', 'main', 'postSide'], enabled: true });
    expect(alloc.taskFlags.runComplete).toEqual({ init: false, web: false });
    expect(alloc.settings.seed).toBe(1);

    runner.send({ type: 'KILL' });
    await clock.advance(60_000);
    const final = await runner.done;
    expectKilledAfterOneStart(final);
  });

  it('moves every old key under its group and leaves a current context alone', () => {
    const old = { allocId: 'a', jobType: 'batch', restartPolicy: {}, maxKillTimeout: 5, parkWhenDead: true, tracker: { count: 0 }, seed: 3,
      startAttempt: 2, handle: { pid: 1 }, lastExit: { exitCode: 1, signal: 0 }, updateQueued: true, task: { name: 't' }, cursor: {} };
    const upgraded = upgradeTaskContext(old);
    expect(upgraded).toEqual({
      task: { name: 't' }, cursor: {},
      settings: { allocId: 'a', jobType: 'batch', restartPolicy: {}, maxKillTimeout: 5, parkWhenDead: true },
      restarts: { tracker: { count: 0 }, seed: 3 },
      run: { attempt: 2, handle: { pid: 1 }, lastExit: { exitCode: 1, signal: 0 } },
      updates: { queued: true },
    });
    expect(upgradeTaskContext(upgraded)).toBe(upgraded);
  });
});

/** Written by the machines whose `running` was parallel (before running.steady / running.busy): a kill waiting out its group shutdown_delay. */
const killing = JSON.parse(readFileSync(new URL('./fixtures/snapshot-before-running-steady.json', import.meta.url), 'utf8')) as {
  spec: AllocSpec;
  now: number;
  persisted: PersistedAllocRunner;
};

describe('snapshots written while the alloc\'s running was parallel', () => {
  it('resumes a kill that was waiting out its shutdown_delay where it was, under running.busy, and finishes it', async () => {
    expect((killing.persisted.snapshot as { value: unknown }).value).toEqual({ running: { restarts: 'idle', kill: 'waitingShutdownDelay', updates: 'idle' } });
    const clock = new SimulatedClock(killing.now);
    const mock = createMockDriver();
    const runner = createAllocRunner(killing.spec, { clock, builtinHooks: false, drivers: { mock }, snapshot: killing.persisted }).start();
    await clock.advance(1);
    expect(runner.actor.getSnapshot().value).toEqual({ running: { busy: { restarts: 'idle', kill: 'waitingShutdownDelay', updates: 'idle' } } });
    // The delay (5 s from the kill, 1 s before the save) is not over: the task still runs, unsignalled.
    await clock.advance(2_000);
    expect(runner.getState().taskStates.web!.state).toBe('running');
    expect(runner.getState().taskStates.web!.events.map((e) => e.type)).not.toContain('Killing');
    await clock.advance(60_000);
    const final = await runner.done;
    expectKilledAfterOneStart(final);
  });

  it('maps the old value: three idle regions are running.steady, any other is the same regions under running.busy', () => {
    expect(upgradeAllocValue({ running: { restarts: 'idle', kill: 'idle', updates: 'idle' } })).toEqual({ running: 'steady' });
    const preKill = { running: { restarts: 'idle', kill: { preKill: 'calling' }, updates: 'idle' } };
    expect(upgradeAllocValue(preKill)).toEqual({ running: { busy: preKill.running } });
    const updating = { running: { restarts: 'preTaskRestart', kill: 'idle', updates: { updating: 'tasks' } } };
    expect(upgradeAllocValue(updating)).toEqual({ running: { busy: updating.running } });
    // Current values, other states and the task runner's `running` are not the old shape.
    for (const v of [{ running: 'steady' }, { running: { busy: preKill.running } }, 'terminal', { prerun: 'calling' }, { running: { active: { poststart: 'done', updates: 'idle' } } }, { running: { kill: 'idle' } }, undefined]) {
      expect(upgradeAllocValue(v)).toBe(v);
    }
  });
});
