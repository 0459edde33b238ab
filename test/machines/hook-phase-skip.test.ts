// A hook phase with no hooks in the plan is gone around (machines/hook-phase.ts's `skipEmptyPhase`): the
// runners behave as they did when they entered it (same snapshots reported, same task events, same states)
// in fewer microsteps. "As they did" is the same machines with `phaseEmpty` never true.
import { createActor, fromPromise, type InspectionEvent } from 'xstate';
import { describe, expect, it } from 'vitest';
import { hookLoopGuards, type HookLoopContext } from '../../machines/hook-phase.ts';
import { allocRunnerMachine, type AllocRunnerInput } from '../../machines/alloc-runner.ts';
import type { AllocHookCallInput } from '../../machines/alloc-runner-types.ts';
import type { HookCallInput, HookCallOutput } from '../../machines/hook-calls.ts';
import { taskRunnerMachine, type DriverCallInput, type DriverShutdownInput } from '../../machines/task-runner.ts';
import type { AllocSpec, ExitResult, TaskSpec } from '../../machines/model.ts';
import { machineDefinitionOf } from '../../src/inspect/definition.ts';
import { transitionsOf } from '../../src/inspect/statechart.ts';
import type { StateNodeDef } from '../../src/inspect/protocol.ts';
import { SimulatedClock, settle } from '../../src/testing/simulated-clock.ts';

describe('phaseEmpty', () => {
  it.each([
    [{}, false],
    [{ prestart: [] }, false],
    [{ prestart: ['task_dir'] }, true],
    [{ poststart: ['stats'] }, false],
  ] as [HookLoopContext['hooks'], boolean][])('hooks %j: prestart has hooks = %s', (hooks, has) => {
    expect(hookLoopGuards.phaseEmpty({ context: { hooks, cursor: {} } }, { phase: 'prestart' })).toBe(!has);
  });
});

describe.each([
  ['task', taskRunnerMachine],
  ['alloc', allocRunnerMachine],
])('the %s runner goes around a phase as entering it would', (_name, machine) => {
  const def = machineDefinitionOf(machine);
  const nodes = new Map<string, StateNodeDef>();
  const walk = (s: StateNodeDef) => (nodes.set(s.id, s), s.states.forEach(walk));
  walk(def.root);
  const skips = transitionsOf(def).filter((t) => t.skipsPhase !== undefined);

  it.each(skips.map((t) => [`${t.source} ${t.event || 'always'} → ${t.skipsPhase}`, t] as const))('%s: lands where the phase ends, after its entry actions', (_t, t) => {
    const phase = nodes.get(t.skipsPhase!)!;
    expect(phase.hookPhase).toBeDefined();
    const done = phase.states.find((s) => s.key === 'next')!.transitions.find((u) => u.guard === `phaseComplete(${phase.hookPhase})`)!;
    expect(t.targets).toEqual(done.targets);
    // The transition it stands in for (the next one on its event) runs first, then what entering the phase runs.
    const own = nodes.get(t.source)!.transitions;
    const twin = own.slice(own.indexOf(t) + 1).find((u) => u.event === t.event && u.skipsPhase === undefined && u.callsHook === undefined)!;
    expect(t.actions).toEqual([...twin.actions, ...phase.entry.filter((a) => a !== 'resetCursor')]);
  });
});

const main: TaskSpec = { name: 'main', driver: 'stub', config: {} };
const side: TaskSpec = { name: 'side', driver: 'stub', config: {}, lifecycle: { hook: 'poststart', sidecar: true } };
const cleanup: TaskSpec = { name: 'cleanup', driver: 'stub', config: {}, lifecycle: { hook: 'poststop' } };
const alloc: AllocSpec = { id: 'a1', job: 'j', group: 'g', type: 'batch', tasks: [main, side, cleanup] };

/** The alloc with its task runners on stub actors; `guards` override the loop's (`phaseEmpty: () => false` enters every phase, the old way). */
type Exit = (task: string, r: ExitResult) => Promise<void>;

type Drive = (exit: Exit, send: (e: { type: 'KILL' }) => void, started: (task: string) => Promise<void>) => Promise<void>;

function run(input: AllocRunnerInput, guards: Record<string, () => boolean>, drive: Drive) {
  const exits = new Map<string, (r: ExitResult) => void>();
  const calls: string[] = [];
  const taskRunner = taskRunnerMachine.provide({
    guards,
    actors: {
      hook: fromPromise<HookCallOutput, HookCallInput>(async ({ input }) => {
        calls.push(`${input.phase}:${input.hook}`);
        return {};
      }),
      driverStart: fromPromise(async () => ({})),
      driverWait: fromPromise<ExitResult, DriverCallInput>(({ input }) => new Promise((resolve) => exits.set(input.task.name, resolve))),
      driverShutdown: fromPromise<void, DriverShutdownInput>(async ({ input }) => exits.get(input.task.name)?.({ exitCode: 130, signal: 2 })),
      driverTerminate: fromPromise<void, DriverCallInput>(async () => {}),
      driverSignal: fromPromise<void, DriverCallInput & { signal: string }>(async () => {}),
    },
  });
  const allocHook = fromPromise<void, AllocHookCallInput>(async ({ input }) => void calls.push(`${input.phase}:${input.hook}`));
  let microsteps = 0;
  const inspect = (e: InspectionEvent) => void (e.type === '@xstate.microstep' && microsteps++);
  const actor = createActor(allocRunnerMachine.provide({ guards, actors: { allocHook, taskRunner } }), { clock: new SimulatedClock(0), input, inspect });
  // What the runtime sees: each snapshot the alloc reports, and each task runner's state.
  const seen: unknown[] = [];
  actor.subscribe((s) => {
    const tasks = Object.fromEntries(Object.entries(s.children).map(([id, c]) => [id, (c?.getSnapshot() as { value?: unknown })?.value]));
    seen.push({ value: s.value, status: s.status, context: s.context, tasks });
  });
  actor.start();
  // A workload ends once it runs: the stub driver waits for it.
  const started = async (task: string) => {
    for (let i = 0; i < 50 && !exits.has(task); i++) await settle();
    expect(exits.has(task), `${task} started: ${JSON.stringify(seen.at(-1))}`).toBe(true);
  };
  const exit = async (task: string, r: ExitResult) => {
    await started(task);
    exits.get(task)!(r);
  };
  return (async () => {
    await drive(exit, (e) => actor.send(e), started);
    await settle();
    return { seen, calls, microsteps, final: actor.getSnapshot().value };
  })();
}

const finish: Drive = async (exit) => {
  await exit('main', { exitCode: 0, signal: 0 });
  await exit('cleanup', { exitCode: 0, signal: 0 });
};
const kill: Drive = async (exit, send, started) => {
  await started('main');
  await started('side');
  send({ type: 'KILL' });
  await exit('cleanup', { exitCode: 0, signal: 0 });
};

/** Runs `input` the old way (`oldWay`'s guards) and as the machines are: the same reports and hook calls, fewer microsteps. */
async function sameRunInFewerMicrosteps(input: AllocRunnerInput, oldWay: Record<string, () => boolean>, drive: Drive): Promise<string[]> {
  const before = await run(input, oldWay, drive);
  const now = await run(input, {}, drive);
  expect(before.final).toBe('terminal');
  expect(now.seen).toEqual(before.seen);
  expect(now.calls).toEqual(before.calls);
  expect(now.microsteps).toBeLessThan(before.microsteps);
  return now.calls;
}

describe('a lifecycle going around empty phases', () => {
  it.each([
    ['no hooks, run to completion', {}, {}, finish],
    ['no hooks, killed while running', {}, {}, kill],
    ['some phases with hooks, run to completion', { prerun: ['alloc_dir'] }, { main: { poststart: ['stats'], stop: ['logmon'] } }, finish],
    ['some phases with hooks, killed', { postrun: ['checks'] }, { side: { prestart: ['task_dir'], exited: ['logmon'] } }, kill],
  ] as [string, AllocRunnerInput['hooks'], AllocRunnerInput['taskHooks'], Drive][])('%s: reports what entering them reported, in fewer microsteps', async (_what, hooks, taskHooks, drive) => {
    await sameRunInFewerMicrosteps({ alloc, hooks, taskHooks }, { phaseEmpty: () => false }, drive);
  });
});

// A phase's last hook ends the phase with its done (hook-phase.ts, `atLastHook`), not in a second microstep for
// `next`'s phaseComplete: the same runs as with `atLastHook` never true, the old way.
describe("a phase's last hook ending it at once", () => {
  it.each([
    ['hooks in every phase, run to completion', { prerun: ['alloc_dir'], postrun: ['checks'] }, { main: { prestart: ['validate', 'task_dir'], poststart: ['stats'], exited: ['stats'], stop: ['logmon'] }, cleanup: { prestart: ['task_dir'] } }, finish],
    ['hooks in every phase, killed', { prerun: ['alloc_dir'], preKill: ['checks'], postrun: ['checks'] }, { main: { prestart: ['task_dir'], poststart: ['stats'], preKilling: ['services'], exited: ['stats'], stop: ['logmon'] }, side: { prestart: ['task_dir'], exited: ['logmon'] } }, kill],
  ] as [string, AllocRunnerInput['hooks'], AllocRunnerInput['taskHooks'], Drive][])('%s: reports what going through `next` reported, in fewer microsteps', async (_what, hooks, taskHooks, drive) => {
    const calls = await sameRunInFewerMicrosteps({ alloc, hooks, taskHooks }, { atLastHook: () => false }, drive);
    expect(calls.length).toBeGreaterThanOrEqual(8);
  });
});

// A transition into a phase with hooks enters it at its first hook's call, and a hook's done calls the following
// hook, each in the microstep that takes it (hook-phase.ts, `hasHook`), not in a second one for `next`'s pick:
// the same runs as with `hasHook` never true, the old way. Two hooks in a phase, so a done calls the next one.
describe('a hook called at once', () => {
  it.each([
    ['two hooks in every phase, run to completion', { prerun: ['alloc_dir', 'network'], postrun: ['checks', 'services'] }, { main: { prestart: ['validate', 'task_dir'], poststart: ['stats', 'services'], exited: ['stats', 'logmon'], stop: ['logmon', 'dirs'] }, cleanup: { prestart: ['validate', 'task_dir'] } }, finish],
    ['two hooks in every phase, killed', { prerun: ['alloc_dir', 'network'], preKill: ['checks', 'services'], postrun: ['checks'] }, { main: { prestart: ['validate', 'task_dir'], poststart: ['stats'], preKilling: ['services', 'checks'], exited: ['stats', 'logmon'], stop: ['logmon'] }, side: { prestart: ['task_dir', 'artifacts'], exited: ['logmon'] } }, kill],
  ] as [string, AllocRunnerInput['hooks'], AllocRunnerInput['taskHooks'], Drive][])('%s: reports what going through `next` reported, in fewer microsteps', async (_what, hooks, taskHooks, drive) => {
    const calls = await sameRunInFewerMicrosteps({ alloc, hooks, taskHooks }, { hasHook: () => false }, drive);
    expect(calls.length).toBeGreaterThanOrEqual(14);
  });
});

// A decision that ends a task that leaves the park (killed, poststop) goes on to its stop hooks from `deciding`
// (task-runner.ts, `decidedLeavingPark`), not in a second microstep for `parked`'s `always`: the same runs as
// with `decidedLeavingPark` never true, the old way. With and without stop hooks (the phase gone around or entered).
describe('a task that leaves the park stopping at once', () => {
  it.each([
    ['no hooks, run to completion', {}, {}, finish],
    ['no hooks, killed', {}, {}, kill],
    ['stop hooks, run to completion', {}, { main: { stop: ['logmon', 'dirs'] }, cleanup: { stop: ['logmon'] } }, finish],
    ['stop hooks, killed', {}, { main: { stop: ['logmon'], exited: ['stats'] }, side: { stop: ['logmon'] }, cleanup: { stop: ['dirs'] } }, kill],
  ] as [string, AllocRunnerInput['hooks'], AllocRunnerInput['taskHooks'], Drive][])('%s: reports what waiting in the park reported, in fewer microsteps', async (_what, hooks, taskHooks, drive) => {
    await sameRunInFewerMicrosteps({ alloc, hooks, taskHooks }, { decidedLeavingPark: () => false }, drive);
  });
});
