/**
 * The yardstick for P3 and P4: a bare XState allocation of the same shape as the benchmarked one (a root
 * machine invoking three child machines in turn, prestart → main → poststop, each invoking a promise that
 * settles after its run time), with no hooks, drivers, events or persistence. What allocrun adds on top
 * is the difference between the two, measured in the same run.
 */
import { createActor, fromPromise, sendTo, setup } from 'xstate';

/** Waits `runFor` ms on a real timer, or until the task is killed (the invoke's abort signal). */
const work = fromPromise<void, { runFor: number }>(
  ({ input, signal }) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, input.runFor);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      }, { once: true });
    }),
);

const bareTask = setup({
  types: { input: {} as { runFor: number }, context: {} as { runFor: number }, events: {} as { type: 'KILL' } },
  actors: { work },
}).createMachine({
  id: 'task',
  context: ({ input }) => ({ runFor: input.runFor }),
  initial: 'running',
  states: {
    running: {
      invoke: { src: 'work', input: ({ context }) => ({ runFor: context.runFor }), onDone: 'dead', onError: 'dead' },
      on: { KILL: 'dead' },
    },
    dead: { type: 'final' },
  },
});

/** Run times of the three tasks in ms. */
export interface BareAllocInput {
  prestart: number;
  main: number;
  poststop: number;
}

/** The bare allocation machine: prestart, then main (KILL ends it), then poststop, then done. */
export const bareAllocMachine = setup({
  types: { input: {} as BareAllocInput, context: {} as BareAllocInput, events: {} as { type: 'KILL' } },
  actors: { task: bareTask },
}).createMachine({
  id: 'alloc',
  context: ({ input }) => input,
  initial: 'prestart',
  states: {
    prestart: {
      invoke: { id: 'prestart', src: 'task', input: ({ context }) => ({ runFor: context.prestart }), onDone: 'main', onError: 'main' },
    },
    main: {
      invoke: { id: 'main', src: 'task', input: ({ context }) => ({ runFor: context.main }), onDone: 'poststop', onError: 'poststop' },
      on: { KILL: { actions: sendTo('main', { type: 'KILL' }) } },
    },
    poststop: {
      invoke: { id: 'poststop', src: 'task', input: ({ context }) => ({ runFor: context.poststop }), onDone: 'dead', onError: 'dead' },
    },
    dead: { type: 'final' },
  },
});

/** Starts one bare allocation; `done` resolves when its poststop task has run. */
export function startBareAlloc(input: BareAllocInput) {
  const actor = createActor(bareAllocMachine, { input });
  const done = new Promise<void>((resolve, reject) => {
    actor.subscribe({ complete: () => resolve(), error: reject });
  });
  actor.start();
  return { actor, done, main: () => actor.getSnapshot().value === 'main' };
}
