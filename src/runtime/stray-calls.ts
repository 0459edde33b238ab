/**
 * Hook calls that outlive their actor. A signal-free hook (src/hooks/signal-free.ts: the directory hooks) is
 * handed a signal that never aborts, so when a kill stops its call part-way the runner moves on while the
 * hook's file calls are still landing: a task dir half made while the allocation ends and its dir is removed.
 * Nomad's task runner never finishes while one of its hooks is at work (its Run returns after the hook does),
 * so the runner's `done` and its destroy hooks wait for these calls; they are file calls that end on their
 * own. A hook that reads its signal is aborted instead, and nothing waits for it (it may never settle).
 */
import type { CallArgs } from '../../machines/call-actor.ts';
import type { RunnerBindings } from './runner-registry.ts';

/** Keeps `work` among the runner's strays if its call is stopped before it settles. */
export function outlivingStop(r: RunnerBindings, call: Pick<CallArgs<unknown>, 'onStop'>, work: Promise<unknown>): void {
  call.onStop(() => {
    const strays = (r.strays ??= new Set());
    strays.add(work);
    const drop = () => void strays.delete(work);
    work.then(drop, drop);
  });
}

/** Settles once no stray call of the runner is left at work; undefined when there is none (no wait at all). */
export function straysSettled(r: RunnerBindings): Promise<void> | undefined {
  const strays = r.strays;
  if (!strays?.size) return undefined;
  return (async () => {
    // A stray that settles may not be the last: look again until none is left.
    while (strays.size > 0) await Promise.allSettled([...strays]);
  })();
}
