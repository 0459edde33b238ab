/**
 * The XState floor for P1 and P2: a bare XState allocation that runs one real process, the least any
 * statechart runner does to start and kill one. A root machine invokes one task machine; the task invokes
 * a promise that spawns the process (in the caller's thread, no supervisor, nothing written), then one that
 * waits for its exit; KILL signals its process group from a third. No hooks, no state, no crash safety:
 * what allocrun's agent adds is the difference to this, and what this adds to a raw spawn is XState's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { assign, createActor, fromPromise, sendTo, setup, type AnyActorRef } from 'xstate';

const start = fromPromise<ChildProcess, { command: string; args: readonly string[] }>(
  ({ input }) =>
    new Promise((resolve, reject) => {
      const child = spawn(input.command, input.args, { detached: true, stdio: 'ignore' });
      child.once('spawn', () => resolve(child));
      child.once('error', reject);
    }),
);

const waitExit = fromPromise<void, { child: ChildProcess }>(({ input }) =>
  input.child.exitCode !== null || input.child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => input.child.once('exit', () => resolve())),
);

const signal = fromPromise<void, { child: ChildProcess; signal: NodeJS.Signals }>(async ({ input }) => {
  process.kill(-input.child.pid!, input.signal);
});

interface TaskInput {
  command: string;
  args: readonly string[];
  killSignal: NodeJS.Signals;
}

const bareProcessTask = setup({
  types: { input: {} as TaskInput, context: {} as TaskInput & { child?: ChildProcess }, events: {} as { type: 'KILL' } },
  actors: { start, waitExit, signal },
}).createMachine({
  id: 'task',
  context: ({ input }) => ({ ...input }),
  initial: 'starting',
  states: {
    starting: {
      invoke: {
        src: 'start',
        input: ({ context }) => ({ command: context.command, args: context.args }),
        onDone: { target: 'running', actions: assign({ child: ({ event }) => event.output }) },
        onError: 'dead',
      },
    },
    running: {
      invoke: { src: 'waitExit', input: ({ context }) => ({ child: context.child! }), onDone: 'dead', onError: 'dead' },
      initial: 'up',
      states: {
        up: { on: { KILL: 'killing' } },
        killing: {
          invoke: { src: 'signal', input: ({ context }) => ({ child: context.child!, signal: context.killSignal }), onError: {} },
        },
      },
    },
    dead: { type: 'final' },
  },
});

const bareProcessAlloc = setup({
  types: { input: {} as TaskInput, context: {} as TaskInput, events: {} as { type: 'KILL' } },
  actors: { task: bareProcessTask },
}).createMachine({
  id: 'alloc',
  context: ({ input }) => input,
  initial: 'running',
  states: {
    running: {
      invoke: { id: 'task', src: 'task', input: ({ context }) => context, onDone: 'dead', onError: 'dead' },
      on: { KILL: { actions: sendTo('task', { type: 'KILL' }) } },
    },
    dead: { type: 'final' },
  },
});

/** Starts one bare allocation of `command`; `running` resolves once its process runs, `done` once it is dead. */
export function startBareProcessAlloc(input: TaskInput) {
  const actor = createActor(bareProcessAlloc, { input });
  const done = new Promise<void>((resolve, reject) => actor.subscribe({ complete: () => resolve(), error: reject }));
  actor.start();
  const task = actor.getSnapshot().children['task'] as AnyActorRef;
  const running = new Promise<void>((resolve) => {
    const sub = task.subscribe((snap: { value: unknown; status: string }) => {
      if (snap.status !== 'active' || (typeof snap.value === 'object' && snap.value !== null && 'running' in snap.value)) {
        resolve();
        queueMicrotask(() => sub.unsubscribe());
      }
    });
  });
  /** The process's pid once it runs (for the bench's reaper). */
  const pid = () => (task.getSnapshot() as { context: { child?: ChildProcess } }).context.child?.pid;
  return { actor, running, done, pid };
}
