/**
 * A task runner's step that is no news to its alloc still reaches the alloc's observers (machines/task-news.ts,
 * `heard`), as every step did when each was relayed: here on a parent of one child whose logic tells news, so
 * each row drives exactly one child step. The observers are called as XState calls them: one without `next` is
 * skipped, one that throws has its error reported on a timer (XState's reportUnhandledError) and the others still
 * hear, and a parent that is no longer active (it finished in the step that sent its child the event) is heard
 * from its own step only, as a finished parent took no relayed snapshot. And at its start a child tells its parent
 * the TaskState its first step made of the one it was given, as the relay of its first snapshot did.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { assign, createActor, createMachine, sendTo, setup, spawnChild, type AnyActorRef, type Observer, type SnapshotFrom } from 'xstate';
import { tellingParentOfNews, type TaskNews } from '../../machines/task-news.ts';
import type { TaskState } from '../../machines/model.ts';
import { newTaskState } from '../../machines/task-events.ts';

const given = newTaskState(0);

/** A child with the news fields of a task runner: QUIET is a step that changes none of them. */
const child = tellingParentOfNews(
  createMachine({
    types: {} as { context: { taskState: TaskState; rejections: unknown[]; runComplete: boolean; steps: number } },
    context: { taskState: given, rejections: [], runComplete: false, steps: 0 },
    on: { QUIET: { actions: assign({ steps: ({ context }) => context.steps + 1 }) } },
  }),
);

/** POKE: the parent steps and sends its child QUIET; FINISH: the parent ends in the step that sends it QUIET. */
const parent = createMachine({
  entry: spawnChild(child, { id: 't' }),
  initial: 'on',
  states: {
    on: {
      on: {
        POKE: { actions: sendTo('t', { type: 'QUIET' }) },
        FINISH: { target: 'over', actions: sendTo('t', { type: 'QUIET' }) },
      },
    },
    over: { type: 'final' },
  },
});
type ParentSnapshot = SnapshotFrom<typeof parent>;

/** The timers set while `act` runs, held (not run): what an observer's error was reported with. */
function reportsDuring(act: () => void): (() => void)[] {
  const held: (() => void)[] = [];
  const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void) => {
    held.push(fn);
    return 0 as unknown as ReturnType<typeof setTimeout>;
  }) as typeof setTimeout);
  try {
    act();
  } finally {
    spy.mockRestore();
  }
  return held;
}

const actors: AnyActorRef[] = [];
afterEach(() => {
  for (const a of actors.splice(0)) a.stop();
});

function started(...observers: Partial<Observer<ParentSnapshot>>[]) {
  const actor = createActor(parent);
  actors.push(actor);
  for (const o of observers) actor.subscribe(o as Observer<ParentSnapshot>);
  actor.start();
  const task = actor.getSnapshot().children.t as AnyActorRef;
  return { actor, quietStep: () => task.send({ type: 'QUIET' }) };
}

describe("a task step with no news reaches the alloc's observers as XState reaches them", () => {
  it("calls each observer's next with the parent's snapshot, once per child step", () => {
    const heard: ParentSnapshot[] = [];
    const { actor, quietStep } = started({ next: (s) => heard.push(s) });
    heard.length = 0;
    const reports = reportsDuring(quietStep);
    expect(heard).toEqual([actor.getSnapshot()]);
    expect(reports).toEqual([]);
  });

  it('skips an observer without next (one subscribed for complete or error only), reporting nothing', () => {
    const complete = vi.fn();
    const { quietStep } = started({ complete });
    const reports = reportsDuring(quietStep);
    expect(reports).toEqual([]);
    expect(complete).not.toHaveBeenCalled();
  });

  it("reports an observer's error on a timer, thrown as it was, and the observers after it still hear", () => {
    const broken = new Error('observer broke');
    let armed = false;
    const after: ParentSnapshot[] = [];
    const { quietStep } = started(
      {
        next: () => {
          if (armed) throw broken;
        },
      },
      { next: (s) => after.push(s) },
    );
    after.length = 0;
    armed = true;
    const reports = reportsDuring(quietStep);
    expect(after).toHaveLength(1);
    expect(reports).toHaveLength(1);
    expect(reports[0]!).toThrow(broken);
  });

  it('leaves a parent that finished in the step that sent the child its event to its own step: its observers hear its end once', () => {
    const heard: string[] = [];
    const complete = vi.fn();
    const { actor } = started({ next: (s) => heard.push(s.status), complete });
    heard.length = 0;
    const reports = reportsDuring(() => actor.send({ type: 'FINISH' }));
    expect(heard).toEqual(['done']);
    expect(complete).toHaveBeenCalledTimes(1);
    expect(reports).toEqual([]);
  });
});

/** A child given a TaskState whose first step appends an event to it when `changes` (a runner's first step that is news). */
const startingChild = tellingParentOfNews(
  createMachine({
    types: {} as { context: { taskState: TaskState; rejections: unknown[]; runComplete: boolean; changes: boolean }; input: { taskState: TaskState; changes: boolean } },
    context: ({ input }) => ({ taskState: input.taskState, rejections: [], runComplete: false, changes: input.changes }),
    entry: assign(({ context }) =>
      context.changes ? { taskState: { ...context.taskState, events: [...context.taskState.events, { type: 'Received', time: 0 }] } as TaskState } : {},
    ),
  }),
);

/** A parent that spawns one such child with `given` and keeps what it is told. */
const tellingParent = (changes: boolean) =>
  setup({
    types: {} as { context: { told: TaskNews[] }; events: TaskNews },
    actors: { startingChild },
  }).createMachine({
    context: { told: [] },
    entry: spawnChild('startingChild', { id: 't', input: { taskState: given, changes } }),
    on: { TASK_CHANGED: { actions: assign({ told: ({ context, event }) => [...context.told, event] }) } },
  });

describe('a fresh child tells its parent at its start only what its first step changed of what it was given', () => {
  it.each([
    ['its first step changed the TaskState it was given: told once, the changed object', true, 1],
    ['its first step left it as given: told nothing (the parent holds it already)', false, 0],
  ] as const)('%s', (_what, changes, told) => {
    const actor = createActor(tellingParent(changes));
    actors.push(actor);
    actor.start();
    const childState = ((actor.getSnapshot().children as Record<string, AnyActorRef>).t!.getSnapshot() as { context: { taskState: TaskState } }).context.taskState;
    expect(actor.getSnapshot().context.told).toHaveLength(told);
    for (const news of actor.getSnapshot().context.told) expect(news.taskState).toBe(childState);
    expect(childState === given).toBe(!changes);
  });
});
