/**
 * dispatch_payload: writes a dispatched job's payload to the task's `local/<file>` before the task starts
 * (Nomad's dispatch_hook). Built only for tasks with a `dispatch_payload` block, so no other task's hook plan
 * grows. Idempotent: writing the same bytes again is harmless, and it is Done once written, as Nomad's is.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { TaskHook } from './types.ts';

/** The hook for a task whose payload goes to `local/<file>`; `payload` is the job's, base64 (absent: none given). */
export function dispatchPayloadHook(file: string, payload: string | undefined): TaskHook {
  return {
    name: 'dispatch_payload',
    async prestart(req, res) {
      // Nomad: no payload (an optional one not given) writes no file.
      if (payload) {
        const to = join(req.taskDir, 'local', file);
        await mkdir(dirname(to), { recursive: true, mode: 0o777 });
        // Nomad writes it 0777, under the agent's umask.
        await writeFile(to, Buffer.from(payload, 'base64'), { mode: 0o777 });
      }
      res.done = true;
    },
  };
}
