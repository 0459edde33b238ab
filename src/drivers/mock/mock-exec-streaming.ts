/**
 * Nomad's mock ExecTaskStreaming: no process, the task's `exec_command` played on the clock (its stdout
 * string after run_for, then its exit code), or for the one command `showinput` the input it was given,
 * read to its end, echoed back. A task without `exec_command` refuses, in Nomad's words.
 */
import { PassThrough } from 'node:stream';
import { sleep, type Clock } from '../clock.ts';
import type { ExecSession } from '../controller.ts';
import type { MockTaskConfig } from './mock-config.ts';

/** Starts the mock's answer to `command`; throws when the task has no `exec_command`. */
export function mockExecSession(command: readonly string[], configured: MockTaskConfig['execCommand'], clock: Clock, signal: AbortSignal): ExecSession {
  if (!configured) throw new Error('no exec command is configured');
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const input = (): Promise<Buffer> =>
    new Promise((resolve) => {
      const chunks: Buffer[] = [];
      stdin.on('data', (d: Buffer) => chunks.push(d));
      stdin.once('end', () => resolve(Buffer.concat(chunks)));
    });
  const play = async (): Promise<number> => {
    if (command.length === 1 && command[0] === 'showinput') {
      stdout.write(`TTY: false\nStdin:\n${(await input()).toString()}\n`);
      return 0;
    }
    // The mock's command reads no input: what is sent is taken and dropped, as a pipe nobody reads would.
    stdin.resume();
    await sleep(clock, configured.runFor, signal);
    stdout.write(configured.stdoutString);
    return configured.exitCode;
  };
  const exited = play().finally(() => {
    stdout.end();
    stderr.end();
  });
  return { stdin, stdout, stderr, exited };
}
