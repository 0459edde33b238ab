/**
 * task_dir: builds the task's own directory before it starts (Nomad's task_dir_hook). Like Nomad's, it records
 * `is_done` in its prestart state once the directory is built, so a restart or an agent restore skips the
 * build and only sets the env again (Nomad keeps the hook un-Done for that env).
 */
import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTree } from './dir-calls.ts';
import { signalFree } from './signal-free.ts';
import type { TaskHook } from './types.ts';

/** Nomad's TaskDirHookIsDoneDataKey state, as the hook stores it. */
export const TASK_DIR_BUILT = Object.freeze({ is_done: 'true' });

/** What task_dir makes in the task dir, in this order (secrets last: its mkdir's answer is read below). */
const TASK_DIRS = Object.freeze(['local', 'tmp', 'secrets']);
const SECRETS_MODE = Object.freeze({ secrets: 0o700 });

function built(previous: unknown): boolean {
  return typeof previous === 'object' && previous !== null && (previous as { is_done?: unknown }).is_done === 'true';
}

/** Whether the process's umask clears any of the owner's bits (then mkdir's 0700 is not 0700). */
function umaskTakesOwnerBits(): boolean {
  return (process.umask() & 0o700) !== 0;
}

/** `local/` for the task, `secrets/` readable only by it (0700), and `tmp/`. */
export function taskDirHook(): TaskHook {
  // Read once per hook (one per allocation), at its first build: reading the umask is two syscalls (Node sets
  // it to 0 and back, a moment in which another thread's new file would get no mask), and an allocation's
  // task dirs are built within moments of each other.
  let ownerBitsTaken: boolean | undefined;
  // Its calls are not cut short (signal-free.ts): a half-built task dir is built over by the next run.
  return signalFree<TaskHook>({
    name: 'task_dir',
    async prestart(req, res) {
      const local = join(req.taskDir, 'local');
      const secrets = join(req.taskDir, 'secrets');
      if (!built(req.previousState)) {
        // The task dir first, with the default mode (a recursive mkdir gives every dir it makes its mode, so
        // secrets' must not be the one to make it), then its three dirs at once. A recursive mkdir starts at
        // the leaf and walks up one pool job per missing dir: `local` first took three jobs in a row.
        const [, , made] = await makeTree(req.taskDir, TASK_DIRS, SECRETS_MODE);
        // A dir mkdir made has 0700 unless the umask takes owner bits; one that was there keeps its mode.
        if (made === undefined || (ownerBitsTaken ??= umaskTakesOwnerBits())) await chmod(secrets, 0o700);
      }
      res.state = TASK_DIR_BUILT;
      res.env = { NOMAD_TASK_DIR: local, NOMAD_SECRETS_DIR: secrets };
    },
  });
}
