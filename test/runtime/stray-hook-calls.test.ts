/**
 * A hook call that ignores its signal (signal-free.ts: the built-in directory hooks) goes on after a kill stops
 * its actor: the task runner has moved on, but the hook's file calls are still landing. Nomad's task runner
 * never finishes while one of its hooks is still at work (its Run returns after the hook does), so the
 * allocation's `done`, and its destroy hooks (alloc_dir's removal of the tree the stray call is building), wait
 * for such calls to settle. A hook that reads its signal is aborted instead, and nothing waits for it.
 */
import { describe, expect, it } from 'vitest';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { createTaskRunner } from '../../src/runtime/create-task-runner.ts';
import { signalFree } from '../../src/hooks/signal-free.ts';
import type { AllocRunnerHook, TaskHook } from '../../src/hooks/types.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';

const spec = (id: string): AllocSpec => ({
  id, job: 'j', group: 'g', type: 'service',
  tasks: [{ name: 'web', driver: 'mock', config: { run_for: '1h' } }],
});

/** A prestart hook that stays at work until `release` is called; `marked`: signal-free. */
function heldPrestart(marked: boolean) {
  let release!: () => void;
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  const held = new Promise<void>((r) => (release = r));
  const hook: TaskHook = {
    name: 'held',
    async prestart() {
      started();
      await held;
    },
  };
  return { hook: marked ? signalFree(hook) : hook, running, release: () => release() };
}

/** Whether `p` has settled after the pending callbacks and a few turns of the loop. */
async function settledSoon(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void p.then(() => (settled = true), () => (settled = true));
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return settled;
}

describe('hook calls that outlive their actor', () => {
  it("a killed allocation's done waits for a signal-free hook call still at work, and resolves once it settles", async () => {
    const held = heldPrestart(true);
    const runner = createAllocRunner(spec('stray-done'), { builtinHooks: false, taskHooks: [held.hook] }).start();
    await held.running;
    runner.send({ type: 'KILL' });
    expect(await settledSoon(runner.done)).toBe(false);
    // The task runner itself has moved on: the task is dead, only the hook's work is left.
    expect(runner.getState().taskStates['web']?.state).toBe('dead');
    held.release();
    const final = await runner.done;
    expect(final.clientStatus).toBe('complete');
    runner.stop();
  });

  it("a hook that reads its signal is aborted by the kill, and done does not wait for it", async () => {
    const held = heldPrestart(false);
    const runner = createAllocRunner(spec('stray-plain'), { builtinHooks: false, taskHooks: [held.hook] }).start();
    await held.running;
    runner.send({ type: 'KILL' });
    expect(await settledSoon(runner.done)).toBe(true);
    held.release();
    runner.stop();
  });

  it('destroy hooks run only after the stray calls of the tasks have settled', async () => {
    const held = heldPrestart(true);
    const order: string[] = [];
    const recorder: AllocRunnerHook = {
      name: 'recorder',
      async destroy() {
        order.push('destroy');
      },
    };
    const runner = createAllocRunner(spec('stray-destroy'), { builtinHooks: false, taskHooks: [held.hook], allocHooks: [recorder] }).start();
    await held.running;
    runner.send({ type: 'DESTROY' });
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(order).toEqual([]);
    order.push('hook settled');
    held.release();
    await runner.done;
    for (let i = 0; i < 5 && order.length < 2; i++) await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['hook settled', 'destroy']);
    runner.stop();
  });
});

describe('a standalone task runner', () => {
  it("is done only once a signal-free hook call its kill cut short has settled", async () => {
    const held = heldPrestart(true);
    const runner = createTaskRunner({ name: 'web', driver: 'mock', config: { run_for: '1h' } }, { hooks: [held.hook], allocDir: '/nonexistent/stray' }).start();
    await held.running;
    runner.send({ type: 'KILL' });
    expect(await settledSoon(runner.done)).toBe(false);
    held.release();
    expect((await runner.done).state).toBe('dead');
    runner.stop();
  });
});
