/**
 * snapshot-upgrade.ts field by field: an old-shape (allocrun 0.1.0) persisted context keeps every value it
 * held, a missing one gets the value a new runner starts with, and anything that is not an old snapshot
 * (a current one, or not a snapshot at all) is handed back as it is. (Resuming a real old snapshot is
 * test/runtime/snapshot-upgrade.test.ts.)
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createAllocRunner, type PersistedAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { upgradeAllocContext, upgradeAllocSnapshot, upgradeTaskContext, upgradeTaskSnapshot } from '../../src/runtime/snapshot-upgrade.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

type Json = Record<string, unknown>;

const fixture = JSON.parse(readFileSync(new URL('./fixtures/snapshot-before-context-groups.json', import.meta.url), 'utf8')) as {
  spec: AllocSpec;
  persisted: PersistedAllocRunner;
};
const oldSnapshot = fixture.persisted.snapshot as { context: Json; children: Record<string, { snapshot: { context: Json } }> };

/** A snapshot as this runtime persists it: a running service alloc of two tasks. */
async function currentSnapshot(): Promise<Json> {
  const clock = new SimulatedClock(0);
  const runner = createAllocRunner(fixture.spec, { clock, builtinHooks: false, seed: 1 }).start();
  await clock.advance(2_000);
  const { snapshot } = runner.persist();
  runner.stop();
  return snapshot as Json;
}

describe('upgrading an old task-runner context', () => {
  it('moves every old field under its group, values unchanged', () => {
    const old = {
      task: { name: 'web' }, hookEnv: { A: '1' },
      allocId: 'a1', jobType: 'service', restartPolicy: { attempts: 2 }, maxKillTimeout: 5_000, parkWhenDead: true,
      tracker: { count: 2, windowStart: 10 }, seed: 7, decision: { kind: 'restart', delay: 15_000 },
      startAttempt: 3, handle: { pid: 42 }, stopReason: 'killed', restartRequest: { reason: 'r' }, startError: { message: 'e' }, lastExit: { exitCode: 1, signal: 0 },
      updateQueued: true, alloc: { id: 'a1' }, updating: true,
    };
    expect(upgradeTaskContext(old)).toStrictEqual({
      task: { name: 'web' }, hookEnv: { A: '1' },
      settings: { allocId: 'a1', jobType: 'service', restartPolicy: { attempts: 2 }, maxKillTimeout: 5_000, parkWhenDead: true },
      restarts: { tracker: { count: 2, windowStart: 10 }, seed: 7, decision: { kind: 'restart', delay: 15_000 } },
      run: { attempt: 3, handle: { pid: 42 }, stopReason: 'killed', restartRequest: { reason: 'r' }, startError: { message: 'e' }, lastExit: { exitCode: 1, signal: 0 } },
      updates: { queued: true, alloc: { id: 'a1' }, updating: true },
    });
  });

  it('gives a field the old context lacked no key at all, as its JSON would not have one, and starts run and updates at their defaults', () => {
    const upgraded = upgradeTaskContext({ allocId: 'a1', task: { name: 'web' } });
    // toStrictEqual: a key holding undefined is not the same as no key.
    expect(upgraded).toStrictEqual({ task: { name: 'web' }, settings: { allocId: 'a1' }, restarts: {}, run: { attempt: 0 }, updates: { queued: false } });
  });

  it('never rewrites a context that already has settings, nor one that is not a task context', () => {
    const current = { settings: { allocId: 'a1' }, allocId: 'stray', run: { attempt: 1 } };
    expect(upgradeTaskContext(current)).toBe(current);
    const other = { task: { name: 'web' }, seed: 3 };
    expect(upgradeTaskContext(other)).toBe(other);
  });
});

describe('upgrading an old alloc-runner context', () => {
  it('keeps every per-task flag and the coordinator gates it held', () => {
    const old = {
      alloc: { id: 'a1' }, taskStates: {}, clientStatus: 'running',
      taskHooks: { web: {} }, maxKillTimeout: 30_000, seed: 4,
      restartPending: { web: true }, taskRejections: { web: 2 }, runComplete: { init: true }, detached: { web: true },
      coordinator: 'wait_alloc', open: ['main'], gatesEnabled: true,
    };
    expect(upgradeAllocContext(old)).toStrictEqual({
      alloc: { id: 'a1' }, taskStates: {}, clientStatus: 'running',
      settings: { taskHooks: { web: {} }, maxKillTimeout: 30_000, seed: 4 },
      taskFlags: { restartPending: { web: true }, rejections: { web: 2 }, runComplete: { init: true }, detached: { web: true } },
      gates: { coordinator: 'wait_alloc', open: ['main'], enabled: true },
    });
  });

  it('starts the flags and gates it did not hold where a new runner starts them: empty, init, closed', () => {
    expect(upgradeAllocContext({ alloc: { id: 'a1' }, taskHooks: {}, gatesEnabled: false })).toStrictEqual({
      alloc: { id: 'a1' },
      settings: { taskHooks: {} },
      taskFlags: { restartPending: {}, rejections: {}, runComplete: {}, detached: {} },
      gates: { coordinator: 'init', open: [], enabled: false },
    });
  });

  it('never rewrites a context that already has settings, nor one that is not an alloc context', () => {
    const current = { settings: { seed: 1 }, taskHooks: { stray: {} } };
    expect(upgradeAllocContext(current)).toBe(current);
    const other = { alloc: { id: 'a1' }, seed: 1 };
    expect(upgradeAllocContext(other)).toBe(other);
  });
});

describe('upgrading whole snapshots', () => {
  it('hands back anything that is not a snapshot with a context unchanged', () => {
    for (const v of [null, undefined, 'snapshot', 42, [], [{ context: {} }], { status: 'active' }, { status: 'active', context: null }, { context: [] }]) {
      expect(upgradeTaskSnapshot(v)).toBe(v);
      expect(upgradeAllocSnapshot(v)).toBe(v);
    }
  });

  it('hands back an alloc snapshot without a children map unchanged, old context or not', () => {
    const noChildren = { status: 'active', context: oldSnapshot.context };
    expect(upgradeAllocSnapshot(noChildren)).toBe(noChildren);
    const listChildren = { status: 'active', context: oldSnapshot.context, children: [] };
    expect(upgradeAllocSnapshot(listChildren)).toBe(listChildren);
  });

  it('passes a snapshot this runtime persisted through as the very same object, and each task runner snapshot too', async () => {
    const snap = await currentSnapshot();
    expect(upgradeAllocSnapshot(snap)).toBe(snap);
    const web = (snap.children as Record<string, { snapshot: unknown }>).web!.snapshot;
    expect(upgradeTaskSnapshot(web)).toBe(web);
  });

  it('upgrades an old alloc context even when its task runners are already current, leaving them as they are', async () => {
    const current = await currentSnapshot();
    const mixed = { ...current, context: oldSnapshot.context };
    const upgraded = upgradeAllocSnapshot(mixed) as { context: Json; children: Json };
    expect(upgraded).not.toBe(mixed);
    expect(upgraded.context).toStrictEqual(upgradeAllocContext(oldSnapshot.context));
    expect(upgraded.children).toStrictEqual(current.children);
    expect((upgraded.children.web as Json).snapshot).toBe((current.children as Record<string, Json>).web!.snapshot);
  });

  it('turns off the snapshot relay of task runners persisted relaying (they tell the alloc their news), and only theirs', () => {
    const current = oldSnapshot.children as unknown as Record<string, Json>;
    const relayed = Object.keys(current).filter((id) => current[id]!.syncSnapshot === true);
    expect(relayed.length).toBeGreaterThan(0);
    const upgraded = upgradeAllocSnapshot(oldSnapshot) as { children: Record<string, Json> };
    for (const [id, child] of Object.entries(upgraded.children)) {
      const isTask = fixture.spec.tasks.some((t) => t.name === id);
      expect(child.syncSnapshot, id).toBe(isTask ? false : current[id]!.syncSnapshot);
      expect(child.snapshot, id).toStrictEqual(isTask ? upgradeTaskSnapshot(current[id]!.snapshot) : current[id]!.snapshot);
    }
  });

  it('upgrades an old alloc context whose task runners are not in the snapshot (not spawned when it was taken)', () => {
    const snap = { status: 'active', value: 'prerun', context: oldSnapshot.context, children: {} };
    const upgraded = upgradeAllocSnapshot(snap) as { context: Json; children: Json };
    expect(upgraded.context).toStrictEqual(upgradeAllocContext(oldSnapshot.context));
    expect(upgraded.children).toStrictEqual({});
  });

  it('upgrades an old alloc context that names no alloc, touching no child', () => {
    const child = { snapshot: { context: { allocId: 'a1' } } };
    const snap = { context: { taskHooks: {}, seed: 2 }, children: { web: child } };
    const upgraded = upgradeAllocSnapshot(snap) as { context: Json; children: Json };
    expect(upgraded.context).toStrictEqual(upgradeAllocContext({ taskHooks: {}, seed: 2 }));
    expect(upgraded.children.web).toBe(child);
  });

  it('upgrades every old task runner of the fixture, each keeping its settings, restarts, run and updates', () => {
    const upgraded = upgradeAllocSnapshot(fixture.persisted.snapshot) as typeof oldSnapshot;
    for (const name of ['init', 'web']) {
      const before = oldSnapshot.children[name]!.snapshot.context;
      expect(upgraded.children[name]!.snapshot.context).toStrictEqual(upgradeTaskContext(before));
      expect(upgraded.children[name]!.snapshot.context.settings).toMatchObject({ allocId: 'old-shape', jobType: 'service', maxKillTimeout: 30_000, parkWhenDead: true });
    }
    expect(upgraded.children.init!.snapshot.context.restarts).toStrictEqual({ tracker: { count: 1, windowStart: 1700000000000 }, seed: 1, decision: oldSnapshot.children.init!.snapshot.context.decision });
    expect(upgraded.context.taskFlags).toStrictEqual({ restartPending: {}, rejections: { init: 0, web: 0 }, runComplete: { init: false, web: false }, detached: { init: false, web: false } });
  });
});
