/** task_dir: builds the task's own directory before it starts (Nomad's task_dir_hook). Idempotent, so it re-runs on every start. */
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { TaskHook } from './types.ts';

/** `local/` for the task, `secrets/` readable only by it (0700), and `tmp/`. */
export function taskDirHook(): TaskHook {
  return {
    name: 'task_dir',
    async prestart(req, res) {
      await mkdir(join(req.taskDir, 'local'), { recursive: true });
      await mkdir(join(req.taskDir, 'tmp'), { recursive: true });
      const secrets = join(req.taskDir, 'secrets');
      await mkdir(secrets, { recursive: true, mode: 0o700 });
      await chmod(secrets, 0o700);
      res.env = { NOMAD_TASK_DIR: join(req.taskDir, 'local'), NOMAD_SECRETS_DIR: secrets };
    },
  };
}
