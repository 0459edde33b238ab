/** validate: task spec problems fail the task with `Failed Validation` and are never restarted (Nomad's validate_hook). */
import { shownName, unsafeNameReason } from '../jobspec/names.ts';
import type { TaskHook } from './types.ts';
import { HookError } from './types.ts';
import { signalFree } from './signal-free.ts';

/** A prestart hook rejecting tasks the runner cannot run; `drivers` are the registered driver names. */
export function validateHook(drivers: string[]): TaskHook {
  // Synchronous checks: nothing to cut short (signal-free.ts).
  return signalFree<TaskHook>({
    name: 'validate',
    async prestart(req, res) {
      const t = req.task;
      const problems: string[] = [];
      // The job file loader and the API check names by the same rule (src/jobspec/names.ts), so a job they
      // accepted never fails here; this guards specs that reached the runner another way.
      const nameProblem = typeof t.name === 'string' ? unsafeNameReason(t.name, 'task') : 'must be a string';
      if (nameProblem) problems.push(`task name ${shownName(String(t.name))} ${nameProblem}`);
      if (!drivers.includes(t.driver)) problems.push(`driver ${JSON.stringify(t.driver)} is not available (known: ${[...drivers].sort().join(', ')})`);
      if (t.killTimeout !== undefined && !(t.killTimeout >= 0)) problems.push(`kill_timeout must not be negative`);
      if (t.shutdownDelay !== undefined && !(t.shutdownDelay >= 0)) problems.push(`shutdown_delay must not be negative`);
      if (t.config === null || typeof t.config !== 'object') problems.push(`config must be an object`);
      if (problems.length > 0) throw new HookError(`task ${shownName(String(t.name))}: ${problems.join('; ')}`, false, 'Failed Validation');
      res.done = true;
    },
  });
}
