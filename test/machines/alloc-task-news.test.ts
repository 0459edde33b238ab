/**
 * The alloc mirrors what its task runners report (TaskState, rejections, run complete) and runs Nomad's
 * reducer on it. Every task-runner step reaches the alloc as `xstate.snapshot.<task>`, but most (a hook's
 * cursor, a driver call starting) change none of that: the alloc takes those without a step of its own,
 * and takes every one that does carry news.
 */
import { describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import type { AllocSpec, TaskSpec } from '../../src/jobspec/types.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { recordingTaskHook, type HookCall } from '../../src/testing/hook-recorder.ts';

const task = (name: string, extra: Partial<TaskSpec> = {}): TaskSpec => ({ name, driver: 'mock', config: { run_for: '1s' }, ...extra });

interface Relay {
  task: string;
  /** Whether the task's mirrored fields changed since its previous relay. */
  news: boolean;
  /** Whether the alloc's context after it is a new object. */
  allocChanged: boolean;
}

/** Runs `spec` to its end and lists every task snapshot the alloc received, with what it did about it. */
async function relaysOf(spec: AllocSpec): Promise<Relay[]> {
  const clock = new SimulatedClock(0);
  const relays: Relay[] = [];
  const last = new Map<string, { taskState: unknown; rejections: number; runComplete: boolean }>();
  let allocContext: unknown;
  const inspect = (e: InspectionEvent) => {
    if (e.type !== '@xstate.snapshot' || (e.actorRef as { id?: string }).id !== spec.id) return;
    const context = (e.snapshot as unknown as { context: unknown }).context;
    const ev = e.event as { type: string; snapshot?: { context: { taskState: unknown; rejections: unknown[]; runComplete: boolean } } };
    if (ev.type.startsWith('xstate.snapshot.') && ev.snapshot) {
      const name = ev.type.slice('xstate.snapshot.'.length);
      const tc = ev.snapshot.context;
      const now = { taskState: tc.taskState, rejections: tc.rejections.length, runComplete: tc.runComplete };
      // Before its first relay the alloc holds what it gave the runner: its TaskState, no rejection, not complete.
      const given = { taskState: (allocContext as { taskStates: Record<string, unknown> }).taskStates[name], rejections: 0, runComplete: false };
      const before = last.get(name) ?? given;
      const news = before.taskState !== now.taskState || before.rejections !== now.rejections || before.runComplete !== now.runComplete;
      last.set(name, now);
      relays.push({ task: name, news, allocChanged: context !== allocContext });
    }
    allocContext = context;
  };
  const log: HookCall[] = [];
  const runner = createAllocRunner(spec, {
    clock,
    builtinHooks: false,
    inspect,
    taskHooks: (t) => [recordingTaskHook(`hook:${t.name}`, log)],
  }).start();
  for (let i = 0; i < 10 && runner.getState().clientStatus !== 'complete'; i++) await clock.advance(1_000);
  expect((await runner.done).clientStatus).toBe('complete');
  return relays;
}

describe('alloc runner: what it takes from its task runners', () => {
  const spec: AllocSpec = {
    id: 'a1', job: 'j', group: 'g', type: 'batch',
    tasks: [task('init', { lifecycle: { hook: 'prestart' } }), task('main'), task('cleanup', { lifecycle: { hook: 'poststop' } })],
  };

  it("leaves its context as it was for a task step that changes nothing it mirrors (a hook's or driver call's step)", async () => {
    const quiet = (await relaysOf(spec)).filter((r) => !r.news);
    expect(quiet.length).toBeGreaterThan(5);
    expect(quiet.filter((r) => r.allocChanged)).toEqual([]);
  });

  it("mirrors every task step that changes the task's state, rejections or completion", async () => {
    const news = (await relaysOf(spec)).filter((r) => r.news);
    expect(new Set(news.map((r) => r.task))).toEqual(new Set(['init', 'main', 'cleanup']));
    expect(news.filter((r) => !r.allocChanged)).toEqual([]);
  });
});
