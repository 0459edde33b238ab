import { describe, expect, it, vi } from 'vitest';
import { assign, createActor, createMachine, fromCallback, fromPromise, sendParent, setup, type AnyStateMachine } from 'xstate';
import { machineDefinitionOf } from '../../src/inspect/definition.ts';
import { createInspectionStream } from '../../src/inspect/inspection-stream.ts';
import { applyContextPatch, type ActorMessage, type InspectMessage, type StateNodeDef, type TransitionMessage } from '../../src/inspect/protocol.ts';
import { Model } from '../../visualizer/src/model.ts';
import { sanitize } from '../../src/inspect/sanitize.ts';
import { diffContext } from '../../src/inspect/context-diff.ts';
import { activeNodeIdsOf, transitionsOf } from '../../src/inspect/statechart.ts';
import { createStatelyFeed, type StatelyInspectionEvent } from '../../src/inspect/stately.ts';

// A tiny lifecycle with an invoked promise, an always transition, a targetless event and a parallel state.
const worker = setup({
  types: { context: {} as { ready: boolean; note: string } },
  actors: { work: fromPromise(async () => 42) },
  guards: { ready: ({ context }) => context.ready },
}).createMachine({
  id: 'worker',
  context: { ready: true, note: 'x' },
  initial: 'gate',
  states: {
    gate: { always: { guard: 'ready', target: 'working' } },
    working: { invoke: { id: 'job', src: 'work', onDone: 'running' } },
    running: {
      type: 'parallel',
      on: { STOP: '#worker.stopped', NOTE: { actions: assign({ note: 'noted' }) } },
      states: { a: { initial: 'on', states: { on: {} } }, b: { initial: 'on', states: { on: {} } } },
    },
    stopped: { type: 'final' },
  },
});

function collect() {
  const stream = createInspectionStream({ schedule: (fn) => queueMicrotask(fn) });
  const messages: InspectMessage[] = [];
  stream.subscribe((b) => messages.push(...b));
  return { stream, messages };
}

const flushMicrotasks = () => new Promise<void>((r) => setImmediate(r));

/** Starts `machine` on a stream that batches as the server's does (a burst of sends per batch) and waits for the first batch. */
async function runBatched(machine: AnyStateMachine) {
  const stream = createInspectionStream({ schedule: (fn) => void setImmediate(fn) });
  const messages: InspectMessage[] = [];
  stream.subscribe((b) => messages.push(...b));
  const actor = createActor(machine, { inspect: stream.inspect }).start();
  await flushMicrotasks();
  /** The page's model of what was sent, read back from JSON as the page gets it. */
  const pageModel = () => {
    const model = new Model(false);
    model.apply(JSON.parse(JSON.stringify(messages)) as InspectMessage[]);
    return model;
  };
  return { actor, messages, pageModel };
}

function allIds(n: StateNodeDef): string[] {
  return [n.id, ...n.states.flatMap(allIds)];
}

describe('machine definitions', () => {
  it('include always transitions, invokes, initial states and guards by name', () => {
    const def = machineDefinitionOf(worker);
    const gate = def.root.states.find((s) => s.key === 'gate')!;
    expect(gate.transitions).toEqual([{ event: '', source: 'worker.gate', targets: ['worker.working'], guard: 'ready', actions: [], reenter: false }]);
    expect(def.root.initial).toBe('worker.gate');
    expect(def.root.states.find((s) => s.key === 'working')!.invoke).toEqual(['job']);
    expect(def.root.states.find((s) => s.key === 'running')!.type).toBe('parallel');
    expect(JSON.parse(JSON.stringify(def))).toEqual(def);
  });
});

describe('the inspection stream', () => {
  it('leaves a transition\'s status out while the actor is active, and says it when the actor ends', async () => {
    const { actor, messages, pageModel } = await runBatched(worker);
    actor.send({ type: 'STOP' });
    await flushMicrotasks();
    const mine = messages.filter((m): m is TransitionMessage => m.kind === 'transition' && m.sessionId === actor.sessionId);
    expect(mine.slice(0, -1).length).toBeGreaterThan(0);
    for (const m of mine.slice(0, -1)) expect(m).not.toHaveProperty('status');
    expect(mine.at(-1)).toMatchObject({ status: 'done', value: 'stopped' });
    expect(pageModel().actors.get(actor.sessionId)).toMatchObject({ status: 'done', value: 'stopped' });
  });

  it('does no mapping inside the send path: subscribers hear about it after the flush', async () => {
    const { stream, messages } = collect();
    const actor = createActor(worker, { inspect: stream.inspect }).start();
    expect(messages).toEqual([]);
    await flushMicrotasks();
    expect(messages.length).toBeGreaterThan(0);
    actor.stop();
  });

  it("sends a machine's definition once, before its first actor", async () => {
    const { stream, messages } = collect();
    const a = createActor(worker, { inspect: stream.inspect }).start();
    const b = createActor(worker, { inspect: stream.inspect }).start();
    await flushMicrotasks();
    const defs = messages.filter((m) => m.kind === 'definition');
    expect(defs.map((d) => d.machineId)).toEqual(['worker']);
    const firstActor = messages.findIndex((m) => m.kind === 'actor');
    expect(messages.indexOf(defs[0]!)).toBeLessThan(firstActor);
    a.stop();
    b.stop();
  });

  it('sends state values whose active nodes the page can find, and the edges taken as transition indices', async () => {
    const { stream, messages } = collect();
    const actor = createActor(worker, { inspect: stream.inspect }).start();
    await flushMicrotasks();
    await flushMicrotasks();
    const def = machineDefinitionOf(worker);
    const ids = new Set(allIds(def.root));
    const root = actor.sessionId;
    const transitions = messages.filter((m): m is TransitionMessage => m.kind === 'transition' && m.sessionId === root);
    const last = transitions[transitions.length - 1]!;
    expect(last.value).toEqual({ running: { a: 'on', b: 'on' } });
    expect(last.activeNodeIds).toBeUndefined();
    expect(activeNodeIdsOf(def, last.value!).sort()).toEqual(['worker', 'worker.running', 'worker.running.a', 'worker.running.a.on', 'worker.running.b', 'worker.running.b.on']);
    for (const t of transitions) for (const id of activeNodeIdsOf(def, t.value!)) expect(ids.has(id)).toBe(true);
    const all = transitionsOf(def);
    const taken = transitions.flatMap((t) => t.edges ?? []).map((i) => all[i]);
    expect(taken).toContainEqual(expect.objectContaining({ source: 'worker.working', event: 'xstate.done.actor.job', targets: ['worker.running'] }));
    actor.stop();
  });

  it('gives each transition the edges taken before it, when a flush falls inside the next macrostep', () => {
    let stream: ReturnType<typeof createInspectionStream> | undefined;
    const stepper = setup({ actions: { flushNow: () => stream!.flush() } }).createMachine({
      id: 'stepper',
      initial: 'a',
      states: {
        a: { on: { NEXT: 'b' } },
        b: { on: { GO: 'c' } },
        c: { always: { target: 'd', actions: 'flushNow' } },
        d: {},
      },
    });
    // Flushed only when asked: the first macrostep's snapshot and the next one's first microstep share a batch.
    stream = createInspectionStream({ schedule: () => {} });
    const messages: InspectMessage[] = [];
    stream.subscribe((b) => messages.push(...b));
    const actor = createActor(stepper, { inspect: stream.inspect }).start();
    stream.flush();
    actor.send({ type: 'NEXT' });
    actor.send({ type: 'GO' });
    stream.flush();
    const all = transitionsOf(machineDefinitionOf(stepper));
    const edges = (event: string) =>
      messages.filter((m): m is TransitionMessage => m.kind === 'transition' && m.event === event).flatMap((t) => t.edges ?? []).map((i) => `${all[i]!.source}->${all[i]!.targets.join()}`);
    expect(edges('NEXT')).toEqual(['stepper.a->stepper.b']);
    expect(edges('GO')).toEqual(['stepper.b->stepper.c', 'stepper.c->stepper.d']);
    actor.stop();
  });

  it('registers invoked actors with their parent and src; their done event to the parent carries the result', async () => {
    const { stream, messages } = collect();
    const actor = createActor(worker, { inspect: stream.inspect }).start();
    await flushMicrotasks();
    await flushMicrotasks();
    const job = messages.find((m) => m.kind === 'actor' && m.id === 'job') as { sessionId: string };
    expect(job).toMatchObject({ kind: 'actor', parentSessionId: actor.sessionId, src: 'work' });
    // A child's root is its parent's: only the root says it.
    expect(job).not.toHaveProperty('rootSessionId');
    expect(messages.find((m) => m.kind === 'actor' && m.sessionId === actor.sessionId)).toMatchObject({ rootSessionId: actor.sessionId });
    const done = messages.find((m) => m.kind === 'event' && m.source === job.sessionId);
    expect(done).toMatchObject({ target: actor.sessionId, type: 'xstate.done.actor.job', payload: { output: 42 } });
    // The promise's own final transition would only repeat that.
    expect(messages.filter((m) => m.kind === 'transition' && m.sessionId === job.sessionId)).toEqual([]);
    expect(stream.snapshotForLateJoiner()).toContainEqual(expect.objectContaining({ kind: 'transition', sessionId: job.sessionId, status: 'done', output: 42 }));
    expect(stream.pathOf(job.sessionId)).toEqual([actor.id, 'job']);
    actor.stop();
  });

  it("sends no event message for a child's TASK_CHANGED to its parent (the child's transition says it), but one for a TASK_CHANGED sent from outside", async () => {
    const child = createMachine({ id: 'child', initial: 'a', states: { a: { on: { GO: { target: 'b', actions: sendParent({ type: 'TASK_CHANGED', task: 'web' }) } } }, b: {} } });
    const parent = setup({ actors: { child } }).createMachine({
      id: 'parent',
      context: { told: 0 },
      invoke: { id: 'web', src: 'child' },
      on: { TASK_CHANGED: { actions: assign({ told: ({ context }) => context.told + 1 }) } },
    });
    const { actor, messages } = await runBatched(parent);
    actor.getSnapshot().children.web!.send({ type: 'GO' });
    actor.send({ type: 'TASK_CHANGED', task: 'web' });
    await flushMicrotasks();
    expect(actor.getSnapshot().context.told).toBe(2);
    const told = messages.filter((m) => m.kind === 'event' && m.type === 'TASK_CHANGED');
    expect(told).toEqual([expect.not.objectContaining({ source: expect.anything() })]);
    // The parent's transition still names what moved it.
    expect(messages.filter((m) => m.kind === 'transition' && m.sessionId === actor.sessionId && (m as TransitionMessage).event === 'TASK_CHANGED').length).toBeGreaterThan(0);
    actor.stop();
  });

  it('sends a promise created and settled in one batch as one actor message that says how it settled', async () => {
    const { actor, messages, pageModel } = await runBatched(worker);
    const job = messages.find((m) => m.kind === 'actor' && m.id === 'job') as ActorMessage;
    expect(job.settled).toEqual({ at: expect.any(Number), status: 'done', output: 42 });
    expect(messages.filter((m) => m.kind === 'event' && m.source === job.sessionId)).toEqual([]);
    // The page replays it as the actor and its done event to the parent.
    const model = pageModel();
    expect(model.actors.get(job.sessionId)).toMatchObject({ status: 'done', output: 42 });
    expect(model.timeline).toContainEqual(expect.objectContaining({ kind: 'event', source: job.sessionId, target: actor.sessionId, type: 'xstate.done.actor.job', payload: { output: 42 } }));
    actor.stop();
  });

  it('says so in the same way when such a promise fails, and the page shows the failure', async () => {
    const failing = setup({ actors: { work: fromPromise(async () => Promise.reject(Object.assign(new Error('boom'), { code: 'E_BOOM' }))) } }).createMachine({
      id: 'failing', initial: 'working', states: { working: { invoke: { id: 'job', src: 'work', onError: 'failed' } }, failed: {} },
    });
    const { actor, messages, pageModel } = await runBatched(failing);
    const job = messages.find((m) => m.kind === 'actor' && m.id === 'job') as ActorMessage;
    const error = { name: 'Error', message: 'boom', code: 'E_BOOM' };
    expect(job.settled).toEqual({ at: expect.any(Number), status: 'error', error });
    const model = pageModel();
    expect(model.actors.get(job.sessionId)).toMatchObject({ status: 'error', error });
    expect(model.timeline.filter((e) => e.kind === 'state' && e.sessionId === job.sessionId)).toEqual([expect.objectContaining({ to: 'error' })]);
    expect(model.actors.get(actor.sessionId)?.value).toBe('failed');
    actor.stop();
  });

  it('announces an actor when it starts if it sends anything before it settles', async () => {
    const chatty = setup({
      actors: {
        pinger: fromCallback(({ sendBack }) => {
          sendBack({ type: 'PING' });
          throw new Error('gone');
        }),
      },
    }).createMachine({ id: 'chatty', initial: 'on', states: { on: { invoke: { id: 'pinger', src: 'pinger', onError: 'off' } }, off: {} } });
    const { actor, messages } = await runBatched(chatty);
    const born = messages.findIndex((m) => m.kind === 'actor' && m.id === 'pinger');
    const pinger = messages[born] as ActorMessage;
    const ping = messages.findIndex((m) => m.kind === 'event' && m.type === 'PING');
    expect(born).toBeGreaterThanOrEqual(0);
    expect(born).toBeLessThan(ping);
    expect(pinger.settled).toBeUndefined();
    expect(messages[ping]).toMatchObject({ source: pinger.sessionId, target: actor.sessionId });
    actor.stop();
  });

  it('sends the whole context first, then only what changed, and nothing for an event that changed nothing', async () => {
    const { stream, messages } = collect();
    const actor = createActor(worker, { inspect: stream.inspect }).start();
    await flushMicrotasks();
    await flushMicrotasks();
    const first = messages.filter((m): m is TransitionMessage => m.kind === 'transition' && m.sessionId === actor.sessionId);
    expect(first[0]!.context).toEqual({ ready: true, note: 'x' });
    messages.length = 0;
    actor.send({ type: 'UNKNOWN' });
    await flushMicrotasks();
    expect(messages.map((m) => m.kind)).toEqual(['event']);
    actor.send({ type: 'NOTE' });
    await flushMicrotasks();
    const mine = messages.filter((m): m is TransitionMessage => m.kind === 'transition' && m.sessionId === actor.sessionId);
    expect(mine).toHaveLength(1);
    // A targetless transition: the state value did not change, so it is not sent again.
    expect(mine[0]).not.toHaveProperty('value');
    expect(mine[0]).not.toHaveProperty('context');
    expect(mine[0]!.patch).toEqual([{ path: ['note'], value: 'noted' }]);
    actor.stop();
  });

  it('sends the state value whenever the states change, also back to earlier ones, and not for a step that stays or re-enters', async () => {
    // XState keeps a snapshot's active-node list while the states stay (the stream's shortcut) and makes a new
    // one when a step leaves the states and comes back to them (BLINK: on, blinking, on again in one
    // macrostep): the value must be compared then.
    const toggle = createMachine({
      id: 'toggle',
      context: { n: 0 },
      type: 'parallel',
      states: {
        light: {
          initial: 'off',
          states: {
            off: { on: { FLIP: 'on', AGAIN: { target: 'off', reenter: true } } },
            on: { on: { FLIP: 'off', AGAIN: { target: 'on', reenter: true }, BLINK: 'blinking' } },
            blinking: { always: 'on' },
          },
        },
        count: { on: { BUMP: { actions: assign({ n: ({ context }) => context.n + 1 }) } } },
      },
    });
    const { stream, messages } = collect();
    const actor = createActor(toggle, { inspect: stream.inspect }).start();
    await flushMicrotasks();
    const values: unknown[] = [];
    for (const type of ['FLIP', 'BUMP', 'AGAIN', 'FLIP', 'AGAIN', 'BUMP', 'FLIP', 'BLINK']) {
      messages.length = 0;
      actor.send({ type });
      await flushMicrotasks();
      const mine = messages.filter((m): m is TransitionMessage => m.kind === 'transition' && m.sessionId === actor.sessionId);
      values.push(mine.length === 0 ? 'no message' : (mine.at(-1)!.value ?? 'no value'));
    }
    const light = (l: string) => ({ light: l, count: {} });
    // A re-entry or a blink is a message (its edges), with no value: the states are the same.
    expect(values).toEqual([light('on'), 'no value', 'no value', light('off'), 'no value', 'no value', light('on'), 'no value']);
    actor.stop();
  });

  const counter = createMachine({
    id: 'counter',
    context: { n: 0 },
    initial: 'idle',
    states: { idle: { on: { GO: 'busy' } }, busy: { on: { BUMP: { actions: assign({ n: ({ context }) => context.n + 1 }) } } } },
  });

  it('keeps the picture current while nobody reads, without a flush, and says only what changed since it to the reader that comes', () => {
    let flush: (() => void) | undefined;
    const stream = createInspectionStream({ schedule: (fn) => void (flush = fn) });
    const actor = createActor(counter, { inspect: stream.inspect }).start();
    actor.send({ type: 'GO' });
    actor.send({ type: 'BUMP' });
    // Nobody read those: they are in the picture already, and nothing was queued or scheduled for them.
    expect(flush).toBeUndefined();
    const picture = stream.snapshotForLateJoiner();
    expect(picture.filter((m) => m.kind === 'transition' && m.sessionId === actor.sessionId)).toEqual([
      expect.objectContaining({ event: 'BUMP', value: 'busy', context: { n: 1 } }),
    ]);
    expect(picture.filter((m) => m.kind === 'event').map((m) => (m as { type: string }).type)).toEqual(['GO', 'BUMP']);
    // The reader that comes after the picture is told what changed since it: the context, not the state again.
    const messages: InspectMessage[] = [];
    stream.subscribe((b) => messages.push(...b));
    actor.send({ type: 'BUMP' });
    flush!();
    const mine = messages.filter((m): m is TransitionMessage => m.kind === 'transition' && m.sessionId === actor.sessionId);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.value).toBeUndefined();
    expect(mine[0]!.patch).toEqual([{ path: ['n'], value: 2 }]);
    actor.stop();
  });

  it('maps what the last reader left queued for the next reader: state and context from the first transition on', () => {
    let flush: (() => void) | undefined;
    const stream = createInspectionStream({ schedule: (fn) => void (flush = fn) });
    const leaving = stream.subscribe(() => {});
    const actor = createActor(counter, { inspect: stream.inspect }).start();
    actor.send({ type: 'GO' });
    leaving();
    // Queued after the reader left, behind what it left: it waits for the flush too, so the order holds.
    actor.send({ type: 'BUMP' });
    const messages: InspectMessage[] = [];
    stream.subscribe((b) => messages.push(...b));
    flush!();
    const mine = messages.filter((m): m is TransitionMessage => m.kind === 'transition' && m.sessionId === actor.sessionId);
    expect(mine.map((m) => m.value)).toEqual(['idle', 'busy', undefined]);
    expect(mine.at(-1)!.context).toEqual({ n: 1 });
    actor.stop();
  });

  it('keeps a failure of the picture while nobody reads out of the machines: it goes to onError', () => {
    const errors: unknown[] = [];
    const stream = createInspectionStream({ schedule: () => {}, now: () => { throw new Error('no clock'); }, onError: (err) => errors.push(err) });
    const actor = createActor(counter, { inspect: stream.inspect }).start();
    actor.send({ type: 'GO' });
    expect(actor.getSnapshot().value).toBe('busy');
    expect(errors.length).toBeGreaterThan(0);
    expect((errors[0] as Error).message).toBe('no clock');
    actor.stop();
  });

  it('builds the message of an event sent while nobody reads only when a late joiner asks, and only for the recent ones', () => {
    const stream = createInspectionStream({ schedule: () => {}, picture: { recentEvents: 2 } });
    const echo = createMachine({ id: 'echo', on: { SAY: {} } });
    const actor = createActor(echo, { inspect: stream.inspect }).start();
    let read = 0;
    // A payload field that counts its reads: mapping an event reads it.
    const say = (n: number) => Object.defineProperty({ type: 'SAY' }, 'n', { enumerable: true, get: () => (read++, n) }) as { type: 'SAY'; n: number };
    for (let n = 1; n <= 5; n++) actor.send(say(n));
    expect(read).toBe(0);
    const events = () => stream.snapshotForLateJoiner().filter((m) => m.kind === 'event');
    expect(events()).toEqual([
      { kind: 'event', at: expect.any(Number), target: actor.sessionId, type: 'SAY', payload: { n: 4 } },
      { kind: 'event', at: expect.any(Number), target: actor.sessionId, type: 'SAY', payload: { n: 5 } },
    ]);
    const once = read;
    expect(once).toBeGreaterThan(0);
    // Built once: the next late joiner gets the same messages without reading the events again.
    expect(events().map((m) => (m as { payload: unknown }).payload)).toEqual([{ n: 4 }, { n: 5 }]);
    expect(read).toBe(once);
    actor.stop();
  });

  it('gives a late joiner of an unread stream the done event of an invoked actor with its output, as a reader would have got it', async () => {
    const stream = createInspectionStream({ schedule: (fn) => queueMicrotask(fn) });
    const actor = createActor(worker, { inspect: stream.inspect }).start();
    await flushMicrotasks();
    await flushMicrotasks();
    const picture = stream.snapshotForLateJoiner();
    const job = picture.find((m) => m.kind === 'actor' && m.id === 'job') as { sessionId: string };
    expect(picture).toContainEqual({ kind: 'event', at: expect.any(Number), target: actor.sessionId, source: job.sessionId, type: 'xstate.done.actor.job', payload: { output: 42 } });
    actor.stop();
  });

  it('gives a late joiner definitions, actors and each actor’s latest state with its context', async () => {
    const { stream } = collect();
    const actor = createActor(worker, { inspect: stream.inspect }).start();
    await flushMicrotasks();
    await flushMicrotasks();
    actor.send({ type: 'STOP' });
    await flushMicrotasks();
    const picture = stream.snapshotForLateJoiner();
    expect(picture[0]).toMatchObject({ kind: 'definition', machineId: 'worker' });
    const latest = picture.filter((m): m is TransitionMessage => m.kind === 'transition' && m.sessionId === actor.sessionId);
    expect(latest).toHaveLength(1);
    expect(latest[0]).toMatchObject({ status: 'done', value: 'stopped', context: { ready: true, note: 'x' } });
    expect(latest[0]!.edges).toBeUndefined();
  });

  it('forgets the oldest finished actors beyond the limit', async () => {
    const stream = createInspectionStream({ schedule: (fn) => queueMicrotask(fn), picture: { maxFinishedActors: 2 } });
    const m = createMachine({ id: 'blip', initial: 'a', states: { a: { on: { GO: 'b' } }, b: { type: 'final' } } });
    const actors = [1, 2, 3].map(() => createActor(m, { inspect: stream.inspect }).start());
    for (const a of actors) a.send({ type: 'GO' });
    await flushMicrotasks();
    const known = stream.snapshotForLateJoiner().filter((x) => x.kind === 'actor').map((x) => (x as { sessionId: string }).sessionId);
    expect(known).toEqual(actors.slice(1).map((a) => a.sessionId));
  });
});

describe('sanitizing', () => {
  it('drops live references: actor refs, errors, functions, cycles and undefined', () => {
    const actor = createActor(worker);
    const cyclic: Record<string, unknown> = { name: 'c' };
    cyclic.self = cyclic;
    const out = sanitize({ ref: actor, err: Object.assign(new Error('boom'), { code: 'E1' }), fn: () => 1, cyclic, gone: undefined, n: NaN, big: 10n });
    expect(out).toEqual({
      ref: { $actor: actor.sessionId, id: actor.id },
      err: { name: 'Error', message: 'boom', code: 'E1' },
      cyclic: { name: 'c', self: '[Circular]' },
      n: 'NaN',
      big: '10',
    });
  });

  it('returns plain data as it is and copies only the objects along a change', () => {
    const spec = { name: 'web', config: { run_for: '1s' } };
    const events = [{ type: 'Received' }];
    const context = { spec, events, fn: () => 1, n: 2 };
    const out = sanitize(context) as { spec: unknown; events: unknown; n: number };
    // The function had to go: the top object is a copy, but the parts without one are the very same objects.
    expect(out).not.toBe(context);
    expect(out).toEqual({ spec, events, n: 2 });
    expect(out.spec).toBe(spec);
    expect(out.events).toBe(events);
    expect(sanitize(spec)).toBe(spec);
  });

  it('cuts a shared part where it sits too deep, and only there', () => {
    const deep = { a: { b: { c: 1 } } };
    const out = sanitize({ x: deep, y: { z: deep } }, { depth: 3, items: 10, chars: 10 }) as { x: unknown; y: { z: unknown } };
    expect(out).toEqual({ x: { a: { b: '[…]' } }, y: { z: { a: '[…]' } } });
    expect(sanitize(deep, { depth: 5, items: 10, chars: 10 })).toBe(deep);
  });

  it('cuts long strings, and long arrays to their newest items', () => {
    const out = sanitize({ s: 'x'.repeat(50), a: [1, 2, 3, 4] }, { depth: 5, items: 2, chars: 10 }) as { s: string; a: unknown[] };
    expect(out.s).toBe(`${'x'.repeat(10)}…`);
    expect(out.a).toEqual(['[… 2 earlier]', 3, 4]);
  });
});

describe("@statelyai/inspect's format", () => {
  it("converts actor, event and snapshot events with the package's own converter, as plain JSON", async () => {
    const converted: StatelyInspectionEvent[] = [];
    const feed = await createStatelyFeed((ev) => converted.push(ev));
    const actor = createActor(worker, { inspect: feed }).start();
    actor.stop();
    // Their inspector converts later (on a timer outside a browser): wait until the three kinds arrived.
    const types = () => [...new Set(converted.map((c) => c.type))].sort();
    await vi.waitFor(() => expect(types()).toEqual(['@xstate.actor', '@xstate.event', '@xstate.snapshot']));
    const reg = converted.find((c) => c.type === '@xstate.actor' && c.sessionId === actor.sessionId) as Extract<StatelyInspectionEvent, { type: '@xstate.actor' }>;
    expect(JSON.parse(reg.definition!)).toMatchObject({ id: 'worker', initial: 'gate' });
    // An actor without an id is named after its machine, as their converter does.
    expect(reg).toMatchObject({ name: 'worker', _version: '0.7.2' });
    // Everything is plain JSON: it goes over a socket as is.
    expect(JSON.parse(JSON.stringify(converted))).toEqual(converted);
  });
});

describe('context patches', () => {
  const limits = { depth: 12, items: 500, chars: 4_000 };

  it('turn the last context into the next one, appending to lists that only grew', () => {
    const events = [{ type: 'Received' }];
    const shared = { name: 'web', config: { run_for: '1s' } };
    const a = { taskStates: { web: { state: 'pending', events } }, spec: shared, gone: 1 };
    const b = { taskStates: { web: { state: 'running', events: [...events, { type: 'Started' }] } }, spec: shared };
    const patch = diffContext(a, b, limits);
    expect(patch).toEqual([
      { path: ['gone'], remove: true },
      { path: ['taskStates', 'web', 'state'], value: 'running' },
      { path: ['taskStates', 'web', 'events'], append: [{ type: 'Started' }] },
    ]);
    const before = sanitize(a);
    expect(applyContextPatch(before, patch)).toEqual(sanitize(b));
    // Applying copies along the path: the old picture is left as it was (time travel keeps it).
    expect(before).toEqual(sanitize(a));
  });

  it('send an object wider than the item limit whole, cut as the sanitizer cuts it', () => {
    const narrow = { depth: 12, items: 3, chars: 100 };
    const a = { m: { a: 1, b: 2, c: 3 }, keep: 1 };
    const b = { m: { a: 1, b: 2, c: 3, d: 4 }, keep: 1 };
    const patch = diffContext(a, b, narrow);
    expect(patch).toEqual([{ path: ['m'], value: sanitize(b.m, { ...narrow, depth: 11 }) }]);
    expect(applyContextPatch(sanitize(a, narrow), patch)).toEqual(sanitize(b, narrow));
    // Within the limit, only the changed field.
    expect(diffContext(a, { m: { a: 1, b: 5, c: 3 }, keep: 1 }, narrow)).toEqual([{ path: ['m', 'b'], value: 5 }]);
  });

  it('remove a field that is gone, left undefined or made a function, first and in the old key order', () => {
    const a = { x: 1, cleared: 'yes', nested: { keep: 1, fn: 2, gone: 3 }, tail: 'z' };
    const b = { x: 2, cleared: undefined, nested: { keep: 1, fn: () => 0 }, tail: 'z', added: true };
    const patch = diffContext(a, b, limits);
    expect(patch).toEqual([
      { path: ['cleared'], remove: true },
      { path: ['x'], value: 2 },
      { path: ['nested', 'fn'], remove: true },
      { path: ['nested', 'gone'], remove: true },
      { path: ['added'], value: true },
    ]);
    expect(applyContextPatch(sanitize(a), patch)).toEqual(sanitize(b));
    // An object that grew past the item limit is still sent whole, and nothing of its walk is left behind.
    const narrow = { depth: 12, items: 2, chars: 100 };
    expect(diffContext({ m: { a: 1, b: 2 } }, { m: { a: 5, b: 2, c: 3 } }, narrow)).toEqual([{ path: ['m'], value: sanitize({ a: 5, b: 2, c: 3 }, { ...narrow, depth: 11 }) }]);
  });

  it('append to a list past the item limit with the cut, so the page keeps the newest items', () => {
    const narrow = { depth: 12, items: 3, chars: 100 };
    const ev = (n: number) => ({ type: `e${n}` });
    let events = [ev(0), ev(1)];
    let page = sanitize({ events }, narrow);
    // Growing one event at a time past the limit, then several at once: each patch carries only the new ones.
    for (const grow of [1, 1, 1, 5, 1]) {
      const next = [...events, ...Array.from({ length: grow }, (_, i) => ev(events.length + i))];
      const patch = diffContext({ events }, { events: next }, narrow);
      expect(patch).toHaveLength(1);
      expect(patch[0]!.append!.length).toBe(Math.min(grow, narrow.items));
      page = applyContextPatch(page, patch)!;
      expect(page).toEqual(sanitize({ events: next }, narrow));
      events = next;
    }
    expect(page).toEqual({ events: ['[… 8 earlier]', ev(8), ev(9), ev(10)] });
  });

  it('send a long list whole when one of the items the page keeps changed', () => {
    const narrow = { depth: 12, items: 3, chars: 100 };
    const a = [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }];
    const b = [a[0], a[1], { n: 30 }, a[3], { n: 5 }];
    const patch = diffContext({ l: a }, { l: b }, narrow);
    expect(patch).toEqual([{ path: ['l'], value: ['[… 2 earlier]', { n: 30 }, { n: 4 }, { n: 5 }] }]);
    // An item already cut from both may change: the page never had it.
    const c = [{ n: 0 }, ...a.slice(1), { n: 5 }];
    expect(diffContext({ l: a }, { l: c }, narrow)).toEqual([{ path: ['l'], append: [{ n: 5 }], cut: { keep: 3, earlier: 2 } }]);
  });

  it('copy an object the page already holds in another actor\'s context, reading it there when applied', () => {
    const state = { state: 'running', events: [{ type: 'Started' }] };
    const a = { taskState: { state: 'pending', events: [] }, other: { n: 1 } };
    const b = { taskState: state, other: { n: 2 } };
    const patch = diffContext(a, b, limits, (path, value) => (path.join('.') === 'taskState' && value === state ? { actor: 'x:0', path: ['taskStates', 'web'] } : undefined));
    expect(patch).toEqual([
      { path: ['taskState'], copy: { actor: 'x:0', path: ['taskStates', 'web'] } },
      { path: ['other', 'n'], value: 2 },
    ]);
    const held = new Map([['x:0', { taskStates: { web: sanitize(state) } }]]);
    expect(applyContextPatch(sanitize(a), patch, (sid) => held.get(sid))).toEqual(sanitize(b));
    // A reader that does not know the actor (or cannot look one up) gets null there, not a stale value.
    expect(applyContextPatch(sanitize(a), patch)).toEqual({ taskState: null, other: { n: 2 } });
  });

  it('send nothing when the context is the same object', () => {
    const a = { x: [1] };
    expect(diffContext(a, a, limits)).toEqual([]);
  });
});
