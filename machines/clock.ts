/**
 * Time inside machines comes from the actor system's clock (the `clock` option of `createActor`), so a
 * `SimulatedClock` drives every timestamp and delay in tests. Machines never read the wall clock directly.
 */
import type { ActorSystem } from 'xstate';
import { fromCall } from './call-actor.ts';

type AnyActorSystem = ActorSystem<any>;

interface ClockLike {
  now?: () => number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
}

function clockOf(system: AnyActorSystem): ClockLike {
  // `_clock` is how XState v5 exposes the clock passed to the root actor; it is the same object.
  return (system as unknown as { _clock: ClockLike })._clock;
}

/**
 * The current time on the system clock. XState's default clock has no `now()`, so the runtime always
 * passes one (RealClock or SimulatedClock); without it, times fall back to the platform's wall time.
 */
export function clockNow(system: AnyActorSystem): number {
  const clock = clockOf(system);
  return clock.now ? clock.now() : new Date().getTime();
}

/**
 * Resolves at an absolute deadline on the system clock. Delays that must survive a restore are modelled
 * with this instead of `after`, because XState does not persist pending `after` timers.
 */
export const sleepUntil = fromCall<void, { until: number }>((call) => {
  const { input, system } = call;
  const clock = clockOf(system);
  return new Promise<void>((resolve) => {
    let id: unknown;
    // A timer of more than 2^31-1 ms fires at once (Node clamps it to 1 ms): a long kill timeout or restart
    // delay would end immediately. So it waits in steps no longer than that, looking at the clock each time.
    const arm = () => {
      id = clock.setTimeout(() => (input.until - clockNow(system) > 0 ? arm() : resolve()), Math.min(MAX_TIMER_MS, Math.max(0, input.until - clockNow(system))));
    };
    arm();
    // A stop clears the timer: through onStop, not the signal, so no AbortSignal, listener and abort event
    // per timer (every kill stops its kill timeout's).
    call.onStop(() => clock.clearTimeout(id));
  });
});

/** The longest delay a platform timer takes as it is (a signed 32-bit count of milliseconds). */
export const MAX_TIMER_MS = 2 ** 31 - 1;
