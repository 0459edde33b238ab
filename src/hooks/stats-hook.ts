/**
 * stats: hands a running task's resource usage stream to the alloc's stats sink, and takes it back when
 * the task exits (Nomad's stats_hook). The sink, not the hook, decides when the stream is open.
 */
import type { StatsSink, TaskHook } from './types.ts';

/** Poststart gives the driver's stats (if it has any) to `sink`, sampled every `intervalMs`; exited and stop take them back. */
export function statsHook(sink: StatsSink, intervalMs = 1_000): TaskHook {
  const untrack = async (req: { task: { name: string } }) => sink.untrack(req.task.name);
  return {
    name: 'stats',
    async poststart(req) {
      const stats = req.stats;
      if (!stats) return;
      sink.track(req.task.name, () => stats(intervalMs));
    },
    exited: untrack,
    stop: untrack,
  };
}
