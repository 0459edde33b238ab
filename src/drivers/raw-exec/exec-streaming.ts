/**
 * raw_exec's ExecTaskStreaming without a tty (`alloc exec`): the command runs as exec-in-task.ts runs one (the
 * task's directory, environment and user, a process group of its own) but with its stdin, stdout and stderr
 * open to the caller for as long as it runs, and no timeout: the session ends when the command does, or when
 * the caller aborts (which kills the whole group).
 */
import { spawn } from 'node:child_process';
import type { ExecSession } from '../controller.ts';
import type { ExecInTask } from './exec-in-task.ts';
import { lookupBin, toSignalNumber } from './process.ts';

/** What a streaming exec needs: exec-in-task's request without the timeout. */
export type ExecStreamingInTask = Omit<ExecInTask, 'timeoutMs'>;

/** Starts the command; throws when it names no executable. `exited` rejects when it could not be spawned. */
export function execStreamingInTask(req: ExecStreamingInTask): ExecSession {
  req.signal.throwIfAborted();
  const bin = lookupBin(req.command, req.taskDir, [req.env['PATH'], process.env['PATH']].filter(Boolean).join(':'));
  if (!bin) throw new Error(`exec ${JSON.stringify(req.command)} in task ${JSON.stringify(req.task)}: no executable file found (looked in ${req.taskDir}/local, ${req.taskDir} and PATH)`);
  const child = spawn(bin, [...req.args], {
    cwd: req.taskDir,
    env: { ...req.env },
    argv0: req.command,
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
    ...(req.user ? { uid: req.user.uid, gid: req.user.gid } : {}),
  });
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
