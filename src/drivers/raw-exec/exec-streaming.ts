/**
 * raw_exec's ExecTaskStreaming without a tty (`alloc exec`): the command runs as exec-in-task.ts runs one (the
 * task's directory, environment and user, a process group of its own) but with its stdin, stdout and stderr
 * open to the caller for as long as it runs, and no timeout: the session ends when the command does, or when
 * the caller aborts (which kills the whole group).
 */
import type { ExecSession } from '../controller.ts';
import { spawnInTask, type ExecInTask } from './exec-in-task.ts';
import { toSignalNumber } from './process.ts';

/** What a streaming exec needs: exec-in-task's request without the timeout. */
export type ExecStreamingInTask = Omit<ExecInTask, 'timeoutMs'>;

/** Starts the command; throws when it names no executable. `exited` rejects when it could not be spawned. */
export function execStreamingInTask(req: ExecStreamingInTask): ExecSession {
  req.signal.throwIfAborted();
  const child = spawnInTask(req, 'pipe');
  const killGroup = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  req.signal.addEventListener('abort', killGroup, { once: true });
  // A command that exits without reading its input: writes after that must not crash the agent.
  child.stdin!.on('error', () => {});
  const exited = new Promise<number>((resolve, reject) => {
    child.once('error', (err) => {
      req.signal.removeEventListener('abort', killGroup);
      reject(new Error(`exec ${JSON.stringify(req.command)} in task ${JSON.stringify(req.task)}: ${err.message}`));
    });
    child.once('close', (code, sig) => {
      req.signal.removeEventListener('abort', killGroup);
      resolve(code ?? 128 + (sig ? toSignalNumber(sig) : 0));
    });
  });
  return { stdin: child.stdin!, stdout: child.stdout!, stderr: child.stderr!, exited };
}
