/**
 * The floor of the shape P3's goals ask allocrun to keep (issue #31: "every hook an invoked service, commands
 * as events, task runners as child actors"): an XState-only allocation with exactly the actors and events per
 * lifecycle that allocrun's three-task P3 allocation has (bench/profile/p3-count.ts), and nothing else: no
 * task state, events, restart tracker, hook inputs, driver, files or persistence. Each call (a hook, the
 * driver's start and wait) is a `fromPromise` that settles at once.
 *
 * Per lifecycle, as counted on allocrun (without built-in hooks / with them):
 * - actors 10 / 23: the alloc, 3 task runners, per task `driver:start` and `driver:wait`; with hooks also per
 *   task `prestart:validate`, `prestart:task_dir`, `poststart:stats`, `exited:stats`, and the alloc's
 *   `prerun:alloc_dir`;
 * - events 38 / 80: each actor's `xstate.init`; per call its resolve and its done to the runner; 3 GATE and
 *   2 KILL from the alloc (the gates opening; the two parked dead tasks released); `TASK_CHANGED` to the alloc
 *   11 / 14 times (per task its setup, start and exit, with hooks also its poststart; the two parked tasks'
 *   completion).
 * What allocrun costs above this is its own work; what this costs above bare XState (bench/lib/bare-alloc.ts) is
 * the shape's.
 */
import { assign, createActor, fromPromise, sendParent, sendTo, setup, spawnChild } from 'xstate';

/** A call that settles at once (a hook, the driver's start). */
const call = fromPromise<void>(async () => undefined);
/** The driver's wait for a workload that runs 0 s: settles on a real timer, as the mock's and bare's do. */
const wait = fromPromise<void>(() => new Promise<void>((resolve) => setTimeout(resolve, 0)));

type Phase = 'prestart' | 'poststart' | 'exited';
/** Hook names per phase of each task: built-in hooks (validate and task_dir, stats, stats) or none. */
const TASK_HOOKS: Record<'hooks' | 'nohooks', Record<Phase, string[]>> = {
  hooks: { prestart: ['validate', 'task_dir'], poststart: ['stats'], exited: ['stats'] },
  nohooks: { prestart: [], poststart: [], exited: [] },
};

/** States calling `hooks` one after the other as `<phase>:<hook>` invokes, then going to `next`. */
type ChainState = { invoke: { id: string; src: 'call'; onDone: string; onError: string } } | { always: string };
function hookChain(phase: string, hooks: string[], next: string): { initial: string; states: Record<string, ChainState> } {
  const states: Record<string, ChainState> = {};
  hooks.forEach((hook, i) => {
    const then = i + 1 < hooks.length ? `h${i + 1}` : 'end';
    states[`h${i}`] = { invoke: { id: `${phase}:${hook}`, src: 'call', onDone: then, onError: then } };
  });
  states['end'] = { always: next };
  return { initial: hooks.length ? 'h0' : 'end', states };
}

type TaskEvent = { type: 'GATE' } | { type: 'KILL' };
type News = { type: 'TASK_CHANGED'; task: string; what: string };

const taskSetup = setup({
  types: { input: {} as { name: string; parks: boolean; hooks: Record<Phase, string[]> }, context: {} as { name: string; parks: boolean }, events: {} as TaskEvent },
  actors: { call, wait },
  actions: {
    tell: sendParent(({ context }, what: string): News => ({ type: 'TASK_CHANGED', task: context.name, what })),
  },
});

function taskMachine(hooks: Record<Phase, string[]>) {
  const tell = (what: string) => ({ type: 'tell' as const, params: what });
  const poststart = hookChain('poststart', hooks.poststart, '#task.running.done');
  return taskSetup.createMachine({
    id: 'task',
    context: ({ input }) => ({ name: input.name, parks: input.parks }),
    initial: 'gate',
    states: {
      gate: { on: { GATE: { target: 'prestart', actions: tell('setup') } } },
      prestart: hookChain('prestart', hooks.prestart, '#task.starting'),
      starting: {
        invoke: { id: 'driver:start', src: 'call', onDone: { target: 'running', actions: tell('started') }, onError: 'exited' },
      },
      running: {
        invoke: { id: 'driver:wait', src: 'wait', onDone: 'exited', onError: 'exited' },
        initial: poststart.initial,
        states: { ...poststart.states, done: { entry: hooks.poststart.length ? tell('poststart') : [] } },
      },
      exited: hookChain('exited', hooks.exited, '#task.terminal'),
      terminal: {
        entry: tell('exited'),
        always: { guard: ({ context }) => !context.parks, target: 'dead' },
        on: { KILL: { target: 'dead', actions: tell('complete') } },
      },
      dead: {},
    },
  });
}

interface AllocContext {
  tasks: Record<string, string>;
}

function allocMachine(variant: 'hooks' | 'nohooks') {
  const task = taskMachine(TASK_HOOKS[variant]);
  const taskInput = (name: string) => ({ name, parks: name !== 'cleanup', hooks: TASK_HOOKS[variant] });
  const exitedIs = (name: string) => ({ event }: { event: News }) => event.what === 'exited' && event.task === name;
  return setup({
    types: { context: {} as AllocContext, events: {} as News },
    actors: { call, task },
    actions: { mirror: assign({ tasks: ({ context, event }) => ({ ...context.tasks, [event.task]: event.what }) }) },
  }).createMachine({
    id: 'alloc',
    context: { tasks: {} },
    initial: 'prerun',
    states: {
      prerun: hookChain('prerun', variant === 'hooks' ? ['alloc_dir'] : [], '#alloc.running'),
      running: {
        entry: [
          spawnChild('task', { id: 'init', input: taskInput('init') }),
          spawnChild('task', { id: 'main', input: taskInput('main') }),
          spawnChild('task', { id: 'cleanup', input: taskInput('cleanup') }),
          sendTo('init', { type: 'GATE' }),
        ],
        on: {
          TASK_CHANGED: [
            { guard: exitedIs('init'), actions: ['mirror', sendTo('main', { type: 'GATE' })] },
            { guard: exitedIs('main'), actions: ['mirror', sendTo('cleanup', { type: 'GATE' })] },
            { guard: exitedIs('cleanup'), target: 'releasing', actions: 'mirror' },
            { actions: 'mirror' },
          ],
        },
      },
      releasing: {
        entry: [sendTo('init', { type: 'KILL' }), sendTo('main', { type: 'KILL' })],
        on: { TASK_CHANGED: { actions: 'mirror' } },
        always: { guard: ({ context }) => context.tasks['init'] === 'complete' && context.tasks['main'] === 'complete', target: 'dead' },
      },
      dead: { type: 'final' },
    },
  });
}

const machines = { hooks: allocMachine('hooks'), nohooks: allocMachine('nohooks') };

/** Starts one floor allocation; resolves when it is done. */
export function runShapeFloorAlloc(variant: 'hooks' | 'nohooks'): Promise<void> {
  const actor = createActor(machines[variant]);
  const done = new Promise<void>((resolve, reject) => actor.subscribe({ complete: () => resolve(), error: reject }));
  actor.start();
  return done;
}

/** The floor allocation's machine, for counting its actors and events. */
export function shapeFloorMachine(variant: 'hooks' | 'nohooks') {
  return machines[variant];
}
