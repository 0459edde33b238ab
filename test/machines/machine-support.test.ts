/**
 * The small pieces the machines stand on: the actor system's clock (clock.ts), how an actor's error is read
 * into plain data (hook-calls.ts), the placeholder for an actor the runtime must provide (not-provided.ts),
 * and model.ts's rules for kill timeouts and server-terminal allocations.
 */
import { createActor, setup } from 'xstate';
import { describe, expect, it } from 'vitest';
import { clockNow, MAX_TIMER_MS, sleepUntil } from '../../machines/clock.ts';
import { childErrorOf, hookActorId } from '../../machines/hook-calls.ts';
import { notProvided } from '../../machines/not-provided.ts';
import { DEFAULT_KILL_TIMEOUT, DEFAULT_MAX_KILL_TIMEOUT, formatDuration, isServerTerminal, killTimeoutOf } from '../../machines/model.ts';
import { SimulatedClock, settle } from '../../src/testing/simulated-clock.ts';

describe('the system clock (machines never read the wall clock themselves)', () => {
  it('clockNow reads the clock the root actor was given', () => {
    const clock = new SimulatedClock(12_345);
    const actor = createActor(setup({}).createMachine({}), { clock });
    expect(clockNow(actor.system)).toBe(12_345);
  });

  it("clockNow falls back to the platform's time when the clock has no now() (XState's default clock)", () => {
    const actor = createActor(setup({}).createMachine({}));
    const before = Date.now();
    const now = clockNow(actor.system);
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });

  it('sleepUntil resolves at its absolute deadline on the clock, not before', async () => {
    const clock = new SimulatedClock(1_000);
    const machine = setup({ actors: { sleepUntil } }).createMachine({
      initial: 'sleeping',
      states: { sleeping: { invoke: { src: 'sleepUntil', input: { until: 1_500 }, onDone: 'awake' } }, awake: { type: 'final' } },
    });
    const actor = createActor(machine, { clock }).start();
    await clock.advance(499);
    expect(actor.getSnapshot().value).toBe('sleeping');
    await clock.advance(1);
    expect(actor.getSnapshot().value).toBe('awake');
  });

  it('sleepUntil waits out a deadline further away than a platform timer can (2^31-1 ms), in steps, not at once', async () => {
    const clock = new SimulatedClock(0);
    // A clock that refuses what Node would clamp: the test fails loudly instead of waking early.
    const setTimeout = clock.setTimeout.bind(clock);
    clock.setTimeout = ((fn: () => void, ms: number) => {
      if (ms > MAX_TIMER_MS) throw new Error(`a ${ms} ms timer would fire after 1 ms`);
      return setTimeout(fn, ms);
    }) as typeof clock.setTimeout;
    const until = 3 * MAX_TIMER_MS + 5;
    const machine = setup({ actors: { sleepUntil } }).createMachine({
      initial: 'sleeping',
      states: { sleeping: { invoke: { src: 'sleepUntil', input: { until }, onDone: 'awake' } }, awake: { type: 'final' } },
    });
    const actor = createActor(machine, { clock }).start();
    await clock.advance(MAX_TIMER_MS);
    await clock.advance(MAX_TIMER_MS);
    await clock.advance(MAX_TIMER_MS + 4);
    expect(actor.getSnapshot().value).toBe('sleeping');
    await clock.advance(1);
    expect(actor.getSnapshot().value).toBe('awake');
  });

  it('sleepUntil resolves at once for a deadline already past', async () => {
    const clock = new SimulatedClock(1_000);
    const machine = setup({ actors: { sleepUntil } }).createMachine({
      initial: 'sleeping',
      states: { sleeping: { invoke: { src: 'sleepUntil', input: { until: 10 }, onDone: 'awake' } }, awake: { type: 'final' } },
    });
    const actor = createActor(machine, { clock }).start();
    await clock.advance(0);
    expect(actor.getSnapshot().value).toBe('awake');
  });

  it('sleepUntil clears its timer when the sleeper is stopped', async () => {
    const clock = new SimulatedClock(0);
    const machine = setup({ actors: { sleepUntil } }).createMachine({
      initial: 'sleeping',
      states: { sleeping: { invoke: { src: 'sleepUntil', input: { until: 60_000 } }, on: { WAKE: 'awake' } }, awake: {} },
    });
    const actor = createActor(machine, { clock }).start();
    await settle();
    expect(clock.pendingTimers).toBe(1);
    actor.send({ type: 'WAKE' });
    await settle();
    expect(clock.pendingTimers).toBe(0);
  });
});

describe("reading an actor's error into plain data", () => {
  it('keeps the message, and recoverable and eventType when they have the right types', () => {
    const error = Object.assign(new Error('vault unreachable'), { recoverable: true, eventType: 'Failed Validation' });
    expect(childErrorOf({ type: 'xstate.error.actor.x', error })).toEqual({ message: 'vault unreachable', recoverable: true, eventType: 'Failed Validation' });
  });

  it('leaves out recoverable and eventType of the wrong type', () => {
    const error = { message: 'boom', recoverable: 'yes', eventType: 3 };
    expect(childErrorOf({ error })).toEqual({ message: 'boom', recoverable: undefined, eventType: undefined });
  });

  it('prints an error object without a string message', () => {
    expect(childErrorOf({ error: { code: 1 } }).message).toBe('[object Object]');
  });

  it('prints an error that is not an object', () => {
    expect(childErrorOf({ error: 'plain string' })).toEqual({ message: 'plain string' });
    expect(childErrorOf({ error: null })).toEqual({ message: 'null' });
    expect(childErrorOf({})).toEqual({ message: 'undefined' });
  });

  it("names a hook's child actor `<phase>:<hook>`", () => {
    expect(hookActorId('prestart', 'task_dir')).toBe('prestart:task_dir');
  });
});

describe('an actor the runtime did not provide', () => {
  it('fails, naming the machine, the actor and how to provide it', async () => {
    const missing = notProvided<void, void>('someMachine', 'driverStart', 'createSomething()');
    const actor = createActor(missing);
    const failed = new Promise<unknown>((resolve) => actor.subscribe({ error: resolve }));
    actor.start();
    expect(((await failed) as Error).message).toBe(
      'someMachine: the driverStart actor is not provided; use createSomething() or .provide({ actors: { driverStart } })',
    );
  });

});

describe("Nomad's kill timeout and server-terminal rules", () => {
  it("a task's kill_timeout, Nomad's 5s when unset", () => {
    expect(DEFAULT_KILL_TIMEOUT).toBe(5_000);
    expect(killTimeoutOf({})).toBe(5_000);
    expect(killTimeoutOf({ killTimeout: 12_000 })).toBe(12_000);
    expect(killTimeoutOf({ killTimeout: 0 })).toBe(0);
  });

  it("is capped by the client's max_kill_timeout (30s unless given)", () => {
    expect(DEFAULT_MAX_KILL_TIMEOUT).toBe(30_000);
    expect(killTimeoutOf({ killTimeout: 60_000 })).toBe(30_000);
    expect(killTimeoutOf({ killTimeout: 60_000 }, 45_000)).toBe(45_000);
    expect(killTimeoutOf({ killTimeout: 20_000 }, 10_000)).toBe(10_000);
    expect(killTimeoutOf({}, 1_000)).toBe(1_000);
  });

  it('ServerTerminalStatus: an allocation the server wants stopped or evicted, and no other', () => {
    expect(isServerTerminal({ desiredStatus: 'stop' })).toBe(true);
    expect(isServerTerminal({ desiredStatus: 'evict' })).toBe(true);
    expect(isServerTerminal({ desiredStatus: 'run' })).toBe(false);
    expect(isServerTerminal({})).toBe(false);
  });

  it('formats a duration that is not finite as JavaScript prints it', () => {
    expect(formatDuration(Infinity)).toBe('Infinity');
    expect(formatDuration(NaN)).toBe('NaN');
  });
});
