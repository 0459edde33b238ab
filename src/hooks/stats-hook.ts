/**
 * stats: hands a running task's resource usage stream to the alloc's stats sink, and takes it back when
 * the task exits or the agent shuts down (Nomad's stats_hook: Poststart, Exited, Shutdown). The sink, not
 * the hook, decides when the stream is open. No stop hook: exited has always run by then, and each hook
 * phase a hook implements costs every task a hook call.
 */
import { signalFree } from './signal-free.ts';
import type { StatsSink, TaskHook } from './types.ts';

/**
 * Poststart gives the driver's stats (if it has any) to `sink`, sampled every `intervalMs` unless the sink asks
 * for another interval; exited and shutdown take them back.
 */
export function statsHook(sink: StatsSink, intervalMs = 1_000): TaskHook {
  const untrack = async (req: { task: { name: string } }) => sink.untrack(req.task.name);
  // Each call hands over or takes back at once: nothing to cut short (signal-free.ts).
  return signalFree<TaskHook>({
    name: 'stats',
    async poststart(req) {
      const stats = req.stats;
      if (!stats) return;
      sink.track(req.task.name, (ms = intervalMs) => stats(ms));
    },
    exited: untrack,
    shutdown: untrack,
  });
}
