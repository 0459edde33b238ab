/**
 * Time inside machines comes from the actor system's clock (the `clock` option of `createActor`), so a
 * `SimulatedClock` drives every timestamp and delay in tests. Machines never read the wall clock directly.
 */
import { fromPromise, type ActorSystem } from 'xstate';

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
export const sleepUntil = fromPromise<void, { until: number }>(({ input, system, signal }) => {
  const clock = clockOf(system);
  const wait = Math.max(0, input.until - clockNow(system));
  return new Promise<void>((resolve) => {
    const id = clock.setTimeout(resolve, wait);
    signal.addEventListener('abort', () => clock.clearTimeout(id), { once: true });
  });
});
