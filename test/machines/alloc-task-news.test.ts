/**
 * The alloc mirrors what its task runners report (TaskState, rejections, run complete) and runs Nomad's
 * reducer on it. Each task runner tells the alloc itself (`TASK_CHANGED`, machines/task-news.ts), once after
 * each of its steps that changes any of that, with the runner's own TaskState object; most steps (a hook's
 * cursor, a driver call starting) change none of it and tell nothing. The alloc takes every one it is told.
 */
import { describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import type { AllocSpec, TaskSpec } from '../../src/jobspec/types.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { recordingTaskHook, type HookCall } from '../../src/testing/hook-recorder.ts';

const task = (name: string, extra: Partial<TaskSpec> = {}): TaskSpec => ({ name, driver: 'mock', config: { run_for: '1s' }, ...extra });

type Mirrored = { taskState: unknown; rejections: unknown[]; runComplete: boolean };

interface Step {
  task: string;
  /** Whether the step changed the task's mirrored fields. */
  news: boolean;
  /** The TASK_CHANGED events the runner sent the alloc in this step. */
  told: { taskState: unknown; rejections: number; runComplete: boolean }[];
  /** The runner's TaskState after the step. */
  taskState: unknown;
}

/** Runs `spec` to its end and lists every task-runner step, what it told the alloc, and what the alloc did when told. */
async function stepsOf(spec: AllocSpec): Promise<{ steps: Step[]; allocTook: boolean[] }> {
  const clock = new SimulatedClock(0);
  const tasks = new Set(spec.tasks.map((t) => t.name));
  const steps: Step[] = [];
  const allocTook: boolean[] = [];
  const last = new Map<string, Mirrored>();
  const pending = new Map<string, Step['told']>();
  let allocContext: unknown;
  const inspect = (e: InspectionEvent) => {
    const id = (e.actorRef as { id?: string }).id ?? '';
    if (e.type === '@xstate.event' && e.event.type === 'TASK_CHANGED') {
      const source = (e.sourceRef as { id?: string } | undefined)?.id ?? '';
      const { taskState, rejections, runComplete } = e.event as unknown as Step['told'][number];
      pending.set(source, [...(pending.get(source) ?? []), { taskState, rejections, runComplete }]);
    }
    if (e.type !== '@xstate.snapshot') return;
    const context = (e.snapshot as unknown as { context: unknown }).context;
    if (id === spec.id) {
      if (e.event.type === 'TASK_CHANGED') allocTook.push(context !== allocContext);
      allocContext = context;
    } else if (tasks.has(id) && (e.snapshot as { status?: string }).status === 'active') {
      const tc = context as Mirrored;
      const before = last.get(id);
      last.set(id, tc);
      // A runner's first snapshot holds what the alloc gave it: that is not a step of its own.
      if (!before) return;
      const news = before.taskState !== tc.taskState || before.rejections.length !== tc.rejections.length || before.runComplete !== tc.runComplete;
      steps.push({ task: id, news, told: pending.get(id) ?? [], taskState: tc.taskState });
      pending.delete(id);
    }
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
  return { steps, allocTook };
}

describe('alloc runner: what it takes from its task runners', () => {
  const spec: AllocSpec = {
    id: 'a1', job: 'j', group: 'g', type: 'batch',
    tasks: [task('init', { lifecycle: { hook: 'prestart' } }), task('main'), task('cleanup', { lifecycle: { hook: 'poststop' } })],
  };

  it("tells the alloc nothing after a task step that changes nothing it mirrors (a hook's or driver call's step)", async () => {
    const { steps } = await stepsOf(spec);
    const quiet = steps.filter((r) => !r.news);
    expect(quiet.length).toBeGreaterThan(5);
    expect(quiet.filter((r) => r.told.length > 0)).toEqual([]);
  });

  it("tells the alloc once, with its own TaskState object, after every step that changes the task's state, rejections or completion", async () => {
    const { steps, allocTook } = await stepsOf(spec);
    const news = steps.filter((r) => r.news);
    expect(new Set(news.map((r) => r.task))).toEqual(new Set(['init', 'main', 'cleanup']));
    for (const step of news) {
      expect(step.told).toHaveLength(1);
      expect(step.told[0]!.taskState).toBe(step.taskState);
    }
    // The alloc takes each: its context is a new object after every one.
    expect(allocTook).toHaveLength(news.length);
    expect(allocTook.filter((took) => !took)).toEqual([]);
  });
});
