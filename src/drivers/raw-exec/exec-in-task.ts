/**
 * raw_exec's ExecTask: a command run beside the task, as Nomad's executor runs one (a template's
 * `change_script`): in the task's directory, with the task's environment, as the task's user, bounded by a
 * timeout. It leads a process group of its own, so a timeout or an abort ends everything it started.
 */
import { spawn } from 'node:child_process';
import type { ExecResult } from '../controller.ts';
import { lookupBin, toSignalNumber } from './process.ts';
import type { TaskUser } from './task-user.ts';

/** What the command keeps of its output: enough for an event or a check's output, bounded. */
const MAX_OUTPUT = 64 * 1024;

export interface ExecInTask {
  task: string;
  command: string;
  args: readonly string[];
  /** The task's directory: the working directory, and where a relative command is looked for first. */
  taskDir: string;
  env: Readonly<Record<string, string>>;
  user?: TaskUser;
  timeoutMs: number;
  signal: AbortSignal;
}

/** Runs the command to its end: its output and exit status (128 + n for a signal n); rejects when it cannot run or times out. */
export function execInTask(req: ExecInTask): Promise<ExecResult> {
  req.signal.throwIfAborted();
  const bin = lookupBin(req.command, req.taskDir, [req.env['PATH'], process.env['PATH']].filter(Boolean).join(':'));
  if (!bin) return Promise.reject(new Error(`exec ${JSON.stringify(req.command)} in task ${JSON.stringify(req.task)}: no executable file found (looked in ${req.taskDir}/local, ${req.taskDir} and PATH)`));
  return new Promise((resolve, reject) => {
    const child = spawn(bin, [...req.args], {
      cwd: req.taskDir,
      env: { ...req.env },
      argv0: req.command,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(req.user ? { uid: req.user.uid, gid: req.user.gid } : {}),
    });
    let output = '';
    const keep = (d: Buffer) => {
      if (output.length < MAX_OUTPUT) output += d.toString('utf8').slice(0, MAX_OUTPUT - output.length);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    let failure: Error | undefined;
    const killGroup = (why: Error) => {
      failure ??= why;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => killGroup(new Error(`exec ${JSON.stringify(req.command)} in task ${JSON.stringify(req.task)} timed out after ${req.timeoutMs} ms`)), req.timeoutMs);
    const onAbort = () => killGroup(req.signal.reason instanceof Error ? req.signal.reason : new Error('exec aborted'));
    req.signal.addEventListener('abort', onAbort, { once: true });
    const done = () => {
      clearTimeout(timer);
      req.signal.removeEventListener('abort', onAbort);
    };
    child.once('error', (err) => {
      done();
      reject(new Error(`exec ${JSON.stringify(req.command)} in task ${JSON.stringify(req.task)}: ${err.message}`));
    });
    child.once('close', (code, sig) => {
      done();
      if (failure) return reject(failure);
      resolve({ output, exitCode: code ?? 128 + (sig ? toSignalNumber(sig) : 0) });
    });
  });
}
