/**
 * The input recorder on tiny machines: what it calls an input (a command from outside, a promise child's
 * result, a delayed event the clock fired), what it leaves out (events machines send each other), and the
 * machine clock pinned to each input's time while the machines process it.
 */
import { assign, createActor, fromPromise, sendTo, setup } from 'xstate';
import { describe, expect, it } from 'vitest';
import { createInputRecorder } from '../../src/inspect/input-recorder.ts';
import type { ReplayInputLine, ReplayLine, ReplayStepLine } from '../../src/inspect/replay-format.ts';
import { ReplayClock } from '../../src/runtime/replay-clock.ts';
import { SimulatedClock, settle } from '../../src/testing/simulated-clock.ts';

const child = setup({}).createMachine({ id: 'child', initial: 'idle', states: { idle: { on: { POKE: 'poked' } }, poked: {} } });

const parent = setup({
  actors: { work: fromPromise(async () => 42), child },
  actions: { pokeChild: sendTo('kid', { type: 'POKE' }) },
}).createMachine({
  id: 'parent',
  context: { result: 0, startedAt: 0 },
  invoke: { src: 'child', id: 'kid' },
  initial: 'idle',
  states: {
    idle: { on: { GO: 'working' } },
    working: {
      entry: assign({ startedAt: ({ system }) => (system as unknown as { _clock: { now(): number } })._clock.now() }),
      invoke: { src: 'work', id: 'job', onDone: { target: 'waiting', actions: [assign({ result: ({ event }) => event.output as number }), 'pokeChild'] } },
    },
    waiting: { after: { 500: 'done' } },
    done: { type: 'final' },
  },
});

describe('createInputRecorder', () => {
  it('records commands, results and timer firings as inputs, and steps, but not what machines send each other', async () => {
    const lines: ReplayLine[] = [];
    const recorder = createInputRecorder((l) => lines.push(l));
    const clock = new SimulatedClock(1_000);
    const actor = createActor(parent, { id: 'p', clock: recorder.machineClock(clock), inspect: recorder.inspect }).start();
    await clock.advance(10);
    actor.send({ type: 'GO' });
    await settle();
    await clock.advance(600);
    const inputs = lines.filter((l): l is ReplayInputLine => l.kind === 'replay-input');
    expect(inputs.map((l) => [l.input, l.to.join('/'), l.event.type])).toEqual([
      ['command', 'p', 'xstate.init'],
      ['command', 'p', 'GO'],
      ['result', 'p', 'xstate.done.actor.job'],
      ['timer', 'p', 'xstate.after.500.parent.waiting'],
    ]);
    expect(inputs[2]).toMatchObject({ from: ['p', 'job'], src: 'work', event: { output: 42 } });
    expect(inputs[3]).toMatchObject({ due: 1_510, at: 1_510 });
    // The child's POKE came from its parent: a step of the child, not an input; so is its stop when the parent is done.
    const steps = lines.filter((l): l is ReplayStepLine => l.kind === 'replay-step');
    expect(steps.filter((s) => s.to.join('/') === 'p/kid').map((s) => [s.event, s.value, s.status])).toEqual([
      ['xstate.init', 'idle', 'active'],
      ['POKE', 'poked', 'active'],
      ['xstate.stop', 'poked', 'stopped'],
    ]);
    expect(lines[0]).toMatchObject({ kind: 'replay-root', id: 'p', machine: 'parent', at: 1_000 });
    expect(actor.getSnapshot().status).toBe('done');
  });

  it('pins the machine clock to the input being processed', () => {
    const lines: ReplayLine[] = [];
    const recorder = createInputRecorder((l) => lines.push(l));
    let now = 5_000;
    // A clock that ticks on every reading, as a real one may within one input.
    const ticking = { now: () => now++, setTimeout: () => 0, clearTimeout: () => {} };
    const actor = createActor(parent, { id: 'p', clock: recorder.machineClock(ticking), inspect: recorder.inspect }).start();
    actor.send({ type: 'GO' });
    const go = lines.find((l): l is ReplayInputLine => l.kind === 'replay-input' && l.event.type === 'GO')!;
    expect(actor.getSnapshot().context.startedAt).toBe(go.at);
  });
});

describe('ReplayClock', () => {
  it('fires a timer only when told, the first one due then', () => {
    const clock = new ReplayClock();
    clock.current = 100;
    const fired: string[] = [];
    clock.setTimeout(() => fired.push('a'), 50);
    clock.setTimeout(() => fired.push('b'), 50);
    clock.setTimeout(() => fired.push('c'), 10);
    clock.current = 1_000;
    expect(fired).toEqual([]);
    expect(clock.fire(150)).toBe(true);
    expect(clock.fire(200)).toBe(false);
    expect(fired).toEqual(['a']);
    expect(clock.pendingDues().sort()).toEqual([110, 150]);
  });
});
