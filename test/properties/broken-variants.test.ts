/**
 * The properties must be able to fail: each test here swaps one implementation of the real machines for a
 * deliberately wrong one (through `.provide()`, in a fresh module graph), runs the same property, and asserts
 * that fast-check finds a counterexample breaking the rule the bug breaks.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { assign } from 'xstate';

type TaskRunnerModule = typeof import('../../machines/task-runner.ts');
type AllocRunnerModule = typeof import('../../machines/alloc-runner.ts');

/** Runs the alloc property against the machines as patched, returning fast-check's verdict. */
async function checkWith(patch: { task?: (m: TaskRunnerModule) => Partial<TaskRunnerModule>; alloc?: (m: AllocRunnerModule) => Partial<AllocRunnerModule> }) {
  vi.resetModules();
  if (patch.task) {
    vi.doMock('../../machines/task-runner.ts', async (importOriginal) => {
      const real = await importOriginal<TaskRunnerModule>();
      return { ...real, ...patch.task!(real) };
    });
  }
  if (patch.alloc) {
    vi.doMock('../../machines/alloc-runner.ts', async (importOriginal) => {
      const real = await importOriginal<AllocRunnerModule>();
      return { ...real, ...patch.alloc!(real) };
    });
  }
  const { worldPlanArb, PROPERTY_SEED } = await import('./arbitraries.ts');
  const { runWorld, invariantBreaks } = await import('./run-world.ts');
  return fc.check(
    fc.asyncProperty(worldPlanArb, async (plan) => {
      const breaks = invariantBreaks(await runWorld(plan));
      if (breaks.length > 0) throw new Error(breaks.join('\n'));
    }),
    // The first counterexample is proof enough; shrinking it is shown by the real properties' failures.
    { numRuns: 400, seed: PROPERTY_SEED, endOnFailure: true },
  );
}

function messageOf(details: { errorInstance?: unknown }): string {
  return details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
}

afterEach(() => {
  vi.doUnmock('../../machines/task-runner.ts');
  vi.doUnmock('../../machines/alloc-runner.ts');
  vi.resetModules();
});

describe('the properties catch a deliberately broken machine', { timeout: 180_000 }, () => {
  it('a task runner that forgets Done prestart hooks is caught re-running one', async () => {
    const out = await checkWith({
      task: (m) => ({ taskRunnerMachine: m.taskRunnerMachine.provide({ guards: { hookAlreadyDone: () => false } }) }),
    });
    expect(out.failed).toBe(true);
    expect(messageOf(out)).toMatch(/prestart hook ran again .* after returning Done/);
  });

  it('a task runner that waits ten times its shutdown_delay is caught missing the kill deadline', async () => {
    const out = await checkWith({
      task: (m) => ({
        taskRunnerMachine: m.taskRunnerMachine.provide({
          actions: {
            waitShutdownDelay: assign(({ context }) => ({ deadline: (context.deadline ?? 0) + 1e9 })) as never,
          },
        }),
      }),
    });
    expect(out.failed).toBe(true);
    expect(messageOf(out)).toMatch(/past the kill deadline/);
  });

  it('an alloc runner that applies a stale update after a newer one is caught applying versions out of order', async () => {
    const out = await checkWith({
      alloc: (m) => ({
        allocRunnerMachine: m.allocRunnerMachine.provide({
          actions: {
            // The queue before the AllocModifyIndex fix: any update not older than the queued one goes in.
            queueUpdate: assign(({ event }) => (event.type === 'UPDATE' ? { queuedUpdate: event.alloc } : {})) as never,
          },
        }),
      }),
    });
    expect(out.failed).toBe(true);
    expect(messageOf(out)).toMatch(/update hooks saw alloc versions/);
  });
});
