/** stats: streams a running task's resource usage to the alloc's stats reporter; stops when the task exits (Nomad's stats_hook). */
import type { Subscription } from 'rxjs';
import type { AllocStatsReporter } from '../runtime/alloc-stats.ts';
import type { TaskHook } from './types.ts';

/** Poststart subscribes to the driver's stats (if it has any); exited and stop unsubscribe. */
export function statsHook(reporter: AllocStatsReporter, intervalMs = 1_000): TaskHook {
  const subs = new Map<string, Subscription>();
  const close = async (req: { task: { name: string } }) => {
    subs.get(req.task.name)?.unsubscribe();
    subs.delete(req.task.name);
    reporter.clear(req.task.name);
  };
  return {
    name: 'stats',
    async poststart(req) {
      if (!req.stats) return;
      subs.get(req.task.name)?.unsubscribe();
      subs.set(
        req.task.name,
        req.stats(intervalMs).subscribe({ next: (u) => reporter.report(req.task.name, u), error: () => undefined }),
      );
    },
    exited: close,
    stop: close,
  };
}
