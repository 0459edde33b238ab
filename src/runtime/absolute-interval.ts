/**
 * Runs a task at start + k·interval on a clock (the agent's, so a simulated one drives it): an absolute schedule,
 * so a slow run does not push the later ones back, and a run never starts while the last one is under way (a
 * tick that falls inside it is skipped). Not an XState `after`: nothing here is persisted.
 */
import type { Clock } from '../drivers/clock.ts';

/** A started schedule; `stop()` disarms it and waits for a run under way. */
export interface AbsoluteInterval {
  stop(): Promise<void>;
}

/** Starts running `task` every `intervalMs` on `clock`, the first run one interval from now. */
export function everyInterval(clock: Clock, intervalMs: number, task: () => Promise<unknown>): AbsoluteInterval {
  const interval = Math.max(1, intervalMs);
  const epoch = clock.now();
  let ticks = 0;
  let timer: unknown;
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  const arm = () => {
    const now = clock.now();
    ticks = Math.max(ticks + 1, Math.floor((now - epoch) / interval) + 1);
    timer = clock.setTimeout(() => {
      timer = undefined;
      if (stopped) return;
      running = task().catch(() => undefined).finally(() => stopped || arm());
    }, epoch + ticks * interval - now);
    // A platform timer must not keep a process alive that has nothing else to do (an embedding app's, a test's).
    (timer as { unref?: () => void } | undefined)?.unref?.();
  };
  arm();
  return {
    async stop() {
      stopped = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
      await running;
    },
  };
}
