/**
 * Process-level helpers for raw_exec: finding the binary the way Nomad's executor does, and signalling a
 * process or its whole group without throwing when it is already gone.
 */
import { accessSync, constants as fsConstants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { signalNumber } from '../signals.ts';
import { InvalidSignalError } from './errors.ts';

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves `command` like Nomad's `lookupBin`: an absolute path as is; otherwise `<taskDir>/local/<cmd>`,
 * then `<taskDir>/<cmd>`, then (for a bare name) each directory of `path`. Undefined when nothing matches.
 */
export function lookupBin(command: string, taskDir: string, path: string | undefined): string | undefined {
  if (isAbsolute(command)) return isExecutableFile(command) ? command : undefined;
  for (const candidate of [join(taskDir, 'local', command), join(taskDir, command)]) {
    if (isExecutableFile(candidate)) return candidate;
  }
  if (command.includes('/')) return undefined;
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = resolve(taskDir, dir, command);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/** The signal number for a name, or InvalidSignalError. */
export function toSignalNumber(name: string): number {
  try {
    return signalNumber(name);
  } catch {
    throw new InvalidSignalError(name);
  }
}

/** Sends `signo` to one pid; false when no such process (ESRCH), other errors are thrown. */
export function signalPid(pid: number, signo: number): boolean {
  try {
    process.kill(pid, signo);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}

/** Sends `signo` to every process of group `pgid`; false when the group is empty. */
export function signalGroup(pgid: number, signo: number): boolean {
  // A pgid of 0 or 1 would signal our own group or every process: never let a bad handle do that.
  if (!(pgid > 1)) throw new RangeError(`refusing to signal process group ${pgid}`);
  return signalPid(-pgid, signo);
}
