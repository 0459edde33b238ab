// A task runner tells its alloc of news itself (`TASK_CHANGED`, machines/task-news.ts) instead of the alloc
// hearing every step of it relayed (`syncSnapshot`) and dropping those with no news. The alloc must be fed as it
// was: the same allocations run both ways report the same alloc snapshots (value, context with every task
// event, each runner's state), make the same hook calls, with fewer events. "The relay" is the same machines
// with each runner spawned with `syncSnapshot` and not telling, every relayed snapshot taken as news the way
// the alloc took it before.
import { createActor, createMachine, enqueueActions, fromPromise, raise, type AnyStateMachine, type InspectionEvent } from 'xstate';
import { describe, expect, it } from 'vitest';
import { allocRunnerMachine, type AllocRunnerInput } from '../../machines/alloc-runner.ts';
import { taskRunnerInputOf } from '../../machines/alloc-runner-setup.ts';
import type { AllocHookCallInput, AllocRunnerContext } from '../../machines/alloc-runner-types.ts';
import type { HookCallInput, HookCallOutput } from '../../machines/hook-calls.ts';
import { taskNewsOf } from '../../machines/task-news.ts';
import { taskRunnerMachine, type DriverCallInput, type DriverShutdownInput, type DriverStartOutput, type TaskRunnerContext } from '../../machines/task-runner.ts';
import type { AllocSpec, ExitResult, TaskSpec } from '../../machines/model.ts';
import { SimulatedClock, settle } from '../../src/testing/simulated-clock.ts';

type Way = 'relay' | 'news';

/** The task runner as it was: the same machine without the news-telling logic. */
const plainTaskRunner = createMachine(taskRunnerMachine.config, taskRunnerMachine.implementations) as unknown as typeof taskRunnerMachine;

/** The alloc as it was: its runners spawned relaying every snapshot, each relayed snapshot taken as the runner's news. */
const relayAlloc = createMachine(
  { ...allocRunnerMachine.config, on: { ...allocRunnerMachine.config.on, 'xstate.snapshot.*': { actions: 'relayed' } } } as typeof allocRunnerMachine.config,
  allocRunnerMachine.implementations,
).provide({
  actions: {
    spawnTasks: enqueueActions(({ enqueue, context }: { enqueue: { spawnChild: (src: string, o: object) => void }; context: AllocRunnerContext }) => {
      context.alloc.tasks.forEach((task, i) => enqueue.spawnChild('taskRunner', { id: task.name, syncSnapshot: true, input: taskRunnerInputOf(context, task, i) }));
    }) as never,
    relayed: raise(({ event }: { event: { type: string; snapshot: { context: TaskRunnerContext } } }) =>
      taskNewsOf(event.type.slice('xstate.snapshot.'.length), event.snapshot.context)) as never,
  },
}) as unknown as typeof allocRunnerMachine;

interface Script {
  /** Each task's workload exits, in order; a workload with none left runs until it is stopped (exit 130, signal 2). */
  exits?: Record<string, ExitResult[]>;
  /** Hooks that fail: `<phase>:<hook>`. */
  failing?: string[];
  /** Hooks that never answer before a restore (`<task> <phase>:<hook>`); after it they answer as the others. */
  hanging?: string[];
}

interface Harness {
  send(e: { type: string; [k: string]: unknown }): void;
  advance(ms: number): Promise<void>;
  persisted(): unknown;
}

type Drive = (h: Harness) => Promise<void>;

function runnersFor(way: Way, script: Script, calls: string[], restored: boolean) {
  const exits = new Map(Object.entries(script.exits ?? {}).map(([t, list]) => [t, [...list]]));
  const running = new Map<string, (r: ExitResult) => void>();
  const failing = new Set(script.failing ?? []);
  const hook = fromPromise<HookCallOutput, HookCallInput>(async ({ input }) => {
    const call = `${input.task.name} ${input.phase}:${input.hook}`;
    calls.push(call);
    if (!restored && script.hanging?.includes(call)) return new Promise<HookCallOutput>(() => {});
    if (failing.has(`${input.phase}:${input.hook}`)) throw new Error(`${input.hook} failed`);
    return { events: [{ type: 'Hook Ran', message: `${input.phase}:${input.hook}` }] };
  });
  const taskRunner = (way === 'news' ? taskRunnerMachine : plainTaskRunner).provide({
    actors: {
      hook,
      driverStart: fromPromise<DriverStartOutput, DriverCallInput>(async ({ input }) => ({ handle: { attempt: input.attempt ?? 0 } })),
      driverWait: fromPromise<ExitResult, DriverCallInput>(({ input }) => {
        const next = exits.get(input.task.name)?.shift();
        if (next) return Promise.resolve(next);
        return new Promise((resolve) => running.set(input.task.name, resolve));
      }),
      driverShutdown: fromPromise<void, DriverShutdownInput>(async ({ input }) => running.get(input.task.name)?.({ exitCode: 130, signal: 2 })),
      driverTerminate: fromPromise<void, DriverCallInput>(async () => {}),
      driverSignal: fromPromise<void, DriverCallInput & { signal: string }>(async () => {}),
      driverReap: fromPromise(async () => ({})),
    },
  });
  const allocHook = fromPromise<void, AllocHookCallInput>(async ({ input }) => {
    calls.push(`alloc ${input.phase}:${input.hook}`);
    if (failing.has(`${input.phase}:${input.hook}`)) throw new Error(`${input.hook} failed`);
  });
  return (way === 'news' ? allocRunnerMachine : relayAlloc).provide({ actors: { allocHook, taskRunner } }) as AnyStateMachine;
}

/** Runs `input` on one way, driven by `drive`; `restoreAt` (after that drive) persists, stops and restores it, then `after` drives on. */
async function run(way: Way, input: AllocRunnerInput, script: Script, drive: Drive, after?: Drive) {
  const clock = new SimulatedClock(0);
  const calls: string[] = [];
  let events = 0;
  // Each task runner's steps, as its own snapshots say (value and context): the runners take the same steps both ways.
  const taskSteps: Record<string, string[]> = {};
  const inspect = (e: InspectionEvent) => {
    if (e.type === '@xstate.event') events++;
    const id = (e.actorRef as { id?: string }).id ?? '';
    if (e.type !== '@xstate.snapshot' || !input.alloc.tasks.some((t) => t.name === id)) return;
    const { value, context, status } = e.snapshot as unknown as { value: unknown; context: unknown; status: string };
    const text = JSON.stringify({ value, context, status });
    const list = (taskSteps[id] ??= []);
    if (list.at(-1) !== text) list.push(text);
  };
  const seen: unknown[] = [];
  let lastSeen = '';
  // What the runtime takes is an alloc snapshot that changed: a step that changed nothing (the alloc hearing a
  // relayed snapshot with no news) is not one.
  const watch = (actor: ReturnType<typeof createActor<AnyStateMachine>>) =>
    actor.subscribe((s) => {
      const step = { value: s.value, status: s.status, context: s.context };
      const text = JSON.stringify(step);
      if (text !== lastSeen) seen.push(step);
      lastSeen = text;
    });
  let actor = createActor(runnersFor(way, script, calls, false), { clock, input, inspect });
  watch(actor);
  const harness = (): Harness => ({
    send: (e) => actor.send(e),
    advance: async (ms) => {
      await settle();
      await clock.advance(ms);
      await settle();
    },
    persisted: () => actor.getPersistedSnapshot(),
  });
  actor.start();
  await settle();
  await drive(harness());
  await settle();
  if (after) {
    const snapshot = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()));
    actor.stop();
    seen.push('restored');
    actor = createActor(runnersFor(way, script, calls, true), { clock, snapshot, inspect });
    watch(actor);
    actor.start();
    actor.send({ type: 'RESTORED' });
    await settle();
    await after(harness());
    await settle();
  }
  // The alloc's `taskStates.<task>` is its runner's `taskState` object itself (the inspector sends it once).
  const end = actor.getSnapshot();
  const linked = Object.fromEntries(
    input.alloc.tasks.map((t) => [t.name, (end.context as AllocRunnerContext).taskStates[t.name] === (end.children[t.name]?.getSnapshot() as { context?: TaskRunnerContext } | undefined)?.context?.taskState]),
  );
  return { seen, taskSteps, calls, events, linked, final: end.value as unknown };
}

const t = (name: string, extra: Partial<TaskSpec> = {}): TaskSpec => ({ name, driver: 'stub', config: {}, ...extra });
const init = t('init', { lifecycle: { hook: 'prestart' } });
const main = t('main');
const side = t('side', { lifecycle: { hook: 'poststart', sidecar: true } });
const cleanup = t('cleanup', { lifecycle: { hook: 'poststop' } });
const batch = (tasks: TaskSpec[], extra: Partial<AllocSpec> = {}): AllocSpec => ({ id: 'a1', job: 'j', group: 'g', type: 'batch', tasks, ...extra });
const ok: ExitResult = { exitCode: 0, signal: 0 };
const failed: ExitResult = { exitCode: 1, signal: 0 };
const hooks = { prerun: ['alloc_dir'], postrun: ['checks'], shutdown: ['alloc_dir'] };
const taskHooks = (names: string[]) =>
  Object.fromEntries(names.map((n) => [n, { prestart: ['task_dir'], poststart: ['stats'], exited: ['stats'], stop: ['logmon'], shutdown: ['logmon'], preKilling: ['consul'] }]));

const idle: Drive = async (h) => h.advance(1_000);
const kill: Drive = async (h) => {
  await h.advance(1_000);
  h.send({ type: 'KILL' });
  await h.advance(1_000);
};

const cases: [string, AllocRunnerInput, Script, Drive, Drive?][] = [
  ['three tasks run to completion, no hooks', { alloc: batch([init, main, cleanup]) }, { exits: { init: [ok], main: [ok], cleanup: [ok] } }, idle],
  ['three tasks run to completion, every phase hooked', { alloc: batch([init, main, cleanup]), hooks, taskHooks: taskHooks(['init', 'main', 'cleanup']) }, { exits: { init: [ok], main: [ok], cleanup: [ok] } }, idle],
  ['a sidecar and a main killed while running', { alloc: batch([main, side, cleanup]), hooks, taskHooks: taskHooks(['main', 'side']) }, { exits: { cleanup: [ok] } }, kill],
  [
    'a main task failing, restarted once, then failing the alloc (its sidecar killed)',
    { alloc: batch([main, side], { restart: { attempts: 1, interval: 60_000, delay: 1_000, mode: 'fail' } }) },
    { exits: { main: [failed, failed] } },
    async (h) => {
      for (let i = 0; i < 4; i++) await h.advance(1_000);
    },
  ],
  [
    'restarts asked of running and dead tasks, one refused',
    { alloc: batch([init, main, side], { type: 'service' }) },
    { exits: { init: [ok] } },
    async (h) => {
      await h.advance(1_000);
      h.send({ type: 'RESTART', task: 'main' });
      await h.advance(1_000);
      h.send({ type: 'RESTART', task: 'init' });
      h.send({ type: 'SIGNAL', task: 'init', signal: 'SIGHUP' });
      await h.advance(1_000);
      h.send({ type: 'RESTART', all: true });
      await h.advance(1_000);
      h.send({ type: 'KILL' });
      await h.advance(1_000);
    },
  ],
  ['a prerun hook failing', { alloc: batch([main, cleanup]), hooks }, { exits: { cleanup: [ok] }, failing: ['prerun:alloc_dir'] }, idle],
  [
    'detached (SHUTDOWN) while running, with shutdown hooks',
    { alloc: batch([main, side], { type: 'service' }), hooks, taskHooks: taskHooks(['main', 'side']) },
    {},
    async (h) => {
      await h.advance(1_000);
      h.send({ type: 'SHUTDOWN' });
      await h.advance(1_000);
    },
  ],
  [
    'restored while running, then killed',
    { alloc: batch([main, side, cleanup]), hooks, taskHooks: taskHooks(['main', 'side']) },
    { exits: { cleanup: [ok] } },
    idle,
    kill,
  ],
  [
    'restored mid-phase (a prestart hook not answered before the restore), then run to completion',
    { alloc: batch([init, main]), taskHooks: taskHooks(['init', 'main']) },
    { exits: { init: [ok], main: [ok] }, hanging: ['init prestart:task_dir'] },
    idle,
    idle,
  ],
];

describe('a task runner telling its alloc of news feeds the alloc as the relayed snapshots did', () => {
  it.each(cases)('%s: the same alloc snapshots and hook calls, fewer events', async (_what, input, script, drive, after) => {
    const relay = await run('relay', input, script, drive, after);
    const news = await run('news', input, script, drive, after);
    expect(news.seen).toEqual(relay.seen);
    expect(news.taskSteps).toEqual(relay.taskSteps);
    expect(news.calls).toEqual(relay.calls);
    expect(news.final).toEqual(relay.final);
    expect(news.linked).toEqual(relay.linked);
    expect(news.events).toBeLessThan(relay.events);
  });
});

describe('where the relay and the news differ', () => {
  it('keeps the event the alloc put in a finished task’s state when that runner later takes a step with no news (the relay dropped it)', async () => {
    // main finishes (its stop hooks run once nothing else but the poststop task lives), cleanup keeps running.
    const alloc = batch([main, cleanup], { modifyIndex: 1 });
    const unhealthy = { type: 'Alloc Unhealthy', time: 0, message: 'Task not running for min_healthy_time' };
    const drive: Drive = async (h) => {
      await h.advance(1_000);
      h.send({ type: 'DEPLOYMENT_HEALTH', status: { healthy: false, timestamp: 0 }, taskEvents: { main: unhealthy } });
      await h.advance(0);
      // The finished main runner stores the update: a step that changes nothing the alloc mirrors.
      h.send({ type: 'UPDATE', alloc: { ...alloc, modifyIndex: 2 } });
      await h.advance(1_000);
    };
    const mainEvents = async (way: Way) => {
      const { seen } = await run(way, { alloc }, { exits: { main: [ok] } }, drive);
      const last = seen.at(-1) as { context: AllocRunnerContext };
      expect(last.context.alloc.modifyIndex).toBe(2);
      expect(last.context.taskFlags.runComplete.main).toBe(true);
      return last.context.taskStates.main!.events.map((e) => e.type);
    };
    expect(await mainEvents('relay')).not.toContain('Alloc Unhealthy');
    expect(await mainEvents('news')).toContain('Alloc Unhealthy');
  });
});

describe('what the alloc spawns each task runner with (taskRunnerInputOf)', () => {
  it("gives the i-th task its spec, the alloc's settings, the seed plus i, a closed gate, and the TaskState the alloc holds for it", () => {
    const input: AllocRunnerInput = { alloc: batch([init, main], { restart: { attempts: 2, interval: 60_000, delay: 1_000, mode: 'delay' } }), taskHooks: taskHooks(['main']), maxKillTimeout: 5_000, seed: 7 };
    const context = createActor(allocRunnerMachine, { input }).getSnapshot().context;
    const inputs = input.alloc.tasks.map((task, i) => taskRunnerInputOf(context, task, i));
    expect(inputs).toEqual([
      { allocId: 'a1', task: init, jobType: 'batch', groupRestart: input.alloc.restart, gateOpen: false, hooks: undefined, maxKillTimeout: 5_000, seed: 7, parkWhenDead: true, taskState: context.taskStates.init },
      { allocId: 'a1', task: main, jobType: 'batch', groupRestart: input.alloc.restart, gateOpen: false, hooks: input.taskHooks!.main, maxKillTimeout: 5_000, seed: 8, parkWhenDead: true, taskState: context.taskStates.main },
    ]);
    // The very objects: the runner's TaskState and the alloc's mirror start as one.
    expect(inputs[1]!.taskState).toBe(context.taskStates.main);
  });
});
