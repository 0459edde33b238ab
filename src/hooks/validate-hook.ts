/** validate: task spec problems fail the task with `Failed Validation` and are never restarted (Nomad's validate_hook). */
import type { TaskHook } from './types.ts';
import { HookError } from './types.ts';

const NAME_OK = /^[A-Za-z0-9_.-]+$/;

/** A prestart hook rejecting tasks the runner cannot run; `drivers` are the registered driver names. */
export function validateHook(drivers: string[]): TaskHook {
  return {
    name: 'validate',
    async prestart(req, res) {
      const t = req.task;
      const problems: string[] = [];
      if (!NAME_OK.test(t.name)) problems.push(`task name ${JSON.stringify(t.name)} may only use letters, digits, "_", "-" and "."`);
      if (!drivers.includes(t.driver)) problems.push(`driver ${JSON.stringify(t.driver)} is not available (known: ${[...drivers].sort().join(', ')})`);
      if (t.killTimeout !== undefined && !(t.killTimeout >= 0)) problems.push(`kill_timeout must not be negative`);
      if (t.shutdownDelay !== undefined && !(t.shutdownDelay >= 0)) problems.push(`shutdown_delay must not be negative`);
      if (t.config === null || typeof t.config !== 'object') problems.push(`config must be an object`);
      if (problems.length > 0) throw new HookError(`task ${JSON.stringify(t.name)}: ${problems.join('; ')}`, false, 'Failed Validation');
      res.done = true;
    },
  };
}
