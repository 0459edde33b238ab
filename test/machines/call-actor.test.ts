// The runners' call logic (machines/call-actor.ts): fromPromise's contract (done, error, stop before settle,
// restore re-runs active calls) with a signal made only when read and aborted with one shared reason, and an
// onStop undo that needs no signal.
import { afterEach, describe, expect, it } from 'vitest';
import { assign, createActor, setup, type AnyActorRef } from 'xstate';
import { CALL_STOPPED, fromCall, type CallArgs } from '../../machines/call-actor.ts';
import { sleepUntil } from '../../machines/clock.ts';

/** A call whose settling the test controls, recording what each run of its body was given. */
function controlledCall() {
  const runs: { args: CallArgs<{ n: number }>; resolve: (v: string) => void; reject: (e: unknown) => void }[] = [];
  const logic = fromCall<string, { n: number }>((args) => new Promise<string>((resolve, reject) => runs.push({ args, resolve, reject })));
  return { runs, logic };
}

/** A parent that invokes `call` in `calling` and records what came back; LEAVE stops the call. */
function parentOf(logic: ReturnType<typeof controlledCall>['logic']) {
  return setup({
    types: { context: {} as { output?: string; error?: unknown } },
    actors: { call: logic },
  }).createMachine({
    context: {},
    initial: 'calling',
    states: {
      calling: {
        invoke: {
          id: 'the-call',
          src: 'call',
          input: { n: 7 },
          onDone: { target: 'done', actions: assign({ output: ({ event }) => event.output }) },
          onError: { target: 'failed', actions: assign({ error: ({ event }) => event.error }) },
        },
        on: { LEAVE: 'left' },
      },
      done: {},
      failed: {},
      left: {},
    },
  });
}

const tick = () => new Promise<void>((r) => setImmediate(r));
const childOf = (actor: AnyActorRef): AnyActorRef | undefined => (actor.getSnapshot() as { children: Record<string, AnyActorRef> }).children['the-call'];

describe('fromCall', () => {
  it("sends the call's answer to the parent as the actor's output", async () => {
    const { runs, logic } = controlledCall();
    const parent = createActor(parentOf(logic)).start();
    expect(runs.map((r) => r.args.input)).toEqual([{ n: 7 }]);
    runs[0]!.resolve('answer');
    await tick();
    expect(parent.getSnapshot().value).toBe('done');
    expect(parent.getSnapshot().context.output).toBe('answer');
  });

  it("sends the call's rejection to the parent as the actor's error", async () => {
    const { runs, logic } = controlledCall();
    const parent = createActor(parentOf(logic)).start();
    const failure = new Error('hook failed');
    runs[0]!.reject(failure);
    await tick();
    expect(parent.getSnapshot().value).toBe('failed');
    expect(parent.getSnapshot().context.error).toBe(failure);
  });

  it('fails the actor when the body throws instead of returning a promise', () => {
    const logic = fromCall<string, { n: number }>(() => {
      throw new Error('not async');
    });
    const parent = createActor(parentOf(logic)).start();
    expect(parent.getSnapshot().value).toBe('failed');
    expect((parent.getSnapshot().context.error as Error).message).toBe('not async');
  });

  it('aborts the signal with the shared reason and sends nothing when stopped before the call settles', async () => {
    const { runs, logic } = controlledCall();
    const parent = createActor(parentOf(logic)).start();
    const signal = runs[0]!.args.signal;
    const child = childOf(parent)!;
    parent.send({ type: 'LEAVE' });
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(CALL_STOPPED);
    expect((signal.reason as Error).name).toBe('AbortError');
    // The late answer is ignored: the parent stays where it went, the child stays stopped.
    runs[0]!.resolve('too late');
    await tick();
    expect(parent.getSnapshot().value).toBe('left');
    expect(parent.getSnapshot().context.output).toBeUndefined();
    expect(child.getSnapshot().status).toBe('stopped');
  });

  it('ignores a rejection that comes after the stop', async () => {
    const { runs, logic } = controlledCall();
    const parent = createActor(parentOf(logic)).start();
    parent.send({ type: 'LEAVE' });
    runs[0]!.reject(new Error('aborted'));
    await tick();
    expect(parent.getSnapshot().value).toBe('left');
    expect(parent.getSnapshot().context.error).toBeUndefined();
  });

  it('hands an already aborted signal to a call that first reads it after the stop', () => {
    const { runs, logic } = controlledCall();
    const parent = createActor(parentOf(logic)).start();
    parent.send({ type: 'LEAVE' });
    expect(runs[0]!.args.signal.aborted).toBe(true);
    expect(runs[0]!.args.signal.reason).toBe(CALL_STOPPED);
  });

  it('does not abort the signal of a call that settled before its actor was stopped', async () => {
    const { runs, logic } = controlledCall();
    const parent = createActor(parentOf(logic)).start();
    const signal = runs[0]!.args.signal;
    runs[0]!.resolve('answer');
    await tick();
    expect(parent.getSnapshot().value).toBe('done');
    expect(signal.aborted).toBe(false);
  });

  describe('the signal is made only when the call reads it', () => {
    const Original = globalThis.AbortController;
    afterEach(() => {
      globalThis.AbortController = Original;
    });

    it('makes no AbortController for a call that never reads its signal, one for a call that does', async () => {
      let made = 0;
      globalThis.AbortController = class extends Original {
        constructor() {
          super();
          made++;
        }
      };
      const quiet = fromCall<string, { n: number }>(async ({ input }) => `n=${input.n}`);
      const a = createActor(parentOf(quiet)).start();
      await tick();
      expect(a.getSnapshot().context.output).toBe('n=7');
      expect(made).toBe(0);
      const reading = fromCall<string, { n: number }>(async ({ signal }) => String(signal.aborted));
      const b = createActor(parentOf(reading)).start();
      await tick();
      expect(b.getSnapshot().context.output).toBe('false');
      expect(made).toBe(1);
    });
  });

  describe('onStop: an undo for the stop, without a signal', () => {
    it('runs the cleanups of an active call at its stop, in order and once; for a call stopped already at once', () => {
      const { runs, logic } = controlledCall();
      const parent = createActor(parentOf(logic)).start();
      const ran: string[] = [];
      runs[0]!.args.onStop(() => ran.push('first'));
      runs[0]!.args.onStop(() => ran.push('second'));
      expect(ran).toEqual([]);
      parent.send({ type: 'LEAVE' });
      expect(ran).toEqual(['first', 'second']);
      runs[0]!.args.onStop(() => ran.push('late'));
      expect(ran).toEqual(['first', 'second', 'late']);
      runs[0]!.resolve('too late');
      expect(ran).toEqual(['first', 'second', 'late']);
    });

    it('does not run them for a call that settled before its actor was stopped', async () => {
      const { runs, logic } = controlledCall();
      const parent = createActor(parentOf(logic)).start();
      let ran = 0;
      runs[0]!.args.onStop(() => ran++);
      runs[0]!.resolve('answer');
      await tick();
      expect(parent.getSnapshot().value).toBe('done');
      expect(ran).toBe(0);
    });

    it('sleepUntil clears its timer at the stop with no AbortController made (a kill stops its kill timeout)', () => {
      const Original = globalThis.AbortController;
      let made = 0;
      globalThis.AbortController = class extends Original {
        constructor() {
          super();
          made++;
        }
      };
      try {
        const timers = new Set<unknown>();
        let next = 0;
        const clock = {
          now: () => 0,
          setTimeout: () => {
            const id = ++next;
            timers.add(id);
            return id;
          },
          clearTimeout: (id: unknown) => void timers.delete(id),
        };
        const machine = setup({ actors: { sleepUntil } }).createMachine({
          initial: 'sleeping',
          states: { sleeping: { invoke: { src: 'sleepUntil', input: { until: 60_000 } }, on: { LEAVE: 'left' } }, left: {} },
        });
        const actor = createActor(machine, { clock }).start();
        expect(timers.size).toBe(1);
        actor.send({ type: 'LEAVE' });
        expect(timers.size).toBe(0);
        expect(made).toBe(0);
      } finally {
        globalThis.AbortController = Original;
      }
    });
  });

  it('persists an active call as {status, output, error, input} and runs it again on restore', async () => {
    const { runs, logic } = controlledCall();
    const machine = parentOf(logic);
    const before = createActor(machine).start();
    const persisted = before.getPersistedSnapshot() as unknown as { children: Record<string, { snapshot: unknown }> };
    expect(persisted.children['the-call']!.snapshot).toEqual({ status: 'active', output: undefined, error: undefined, input: { n: 7 } });
    before.stop();
    const after = createActor(machine, { snapshot: persisted as never }).start();
    expect(runs.map((r) => r.args.input)).toEqual([{ n: 7 }, { n: 7 }]);
    // The first run's answer belongs to a stopped actor; the restored run's answer is the one heard.
    runs[0]!.resolve('from before');
    runs[1]!.resolve('from after');
    await tick();
    expect(after.getSnapshot().value).toBe('done');
    expect(after.getSnapshot().context.output).toBe('from after');
  });

  it('does not run a call again that had settled when the parent was saved', async () => {
    const { runs, logic } = controlledCall();
    const machine = parentOf(logic);
    const before = createActor(machine).start();
    runs[0]!.resolve('answer');
    await tick();
    const after = createActor(machine, { snapshot: before.getPersistedSnapshot() as never }).start();
    expect(after.getSnapshot().value).toBe('done');
    expect(runs).toHaveLength(1);
  });
});
