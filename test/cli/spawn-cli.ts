/** Runs the real `allocrun` binary (node bin/allocrun.js) as a child process, for the CLI tests. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The package root, where `bin/allocrun.js` lives. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/allocrun.js', import.meta.url));

/** A fixture job file's path. */
export const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

/** How a run of the CLI ended. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A running CLI: its output so far, a way to wait for a line, and its end. */
export interface CliProcess {
  child: ChildProcess;
  stdout(): string;
  /** Resolves once stdout matches `pattern`; rejects when the process ends first. */
  waitFor(pattern: RegExp): Promise<void>;
  exited: Promise<CliResult>;
}

/**
 * Starts `allocrun ...args`; killed with SIGKILL after `timeoutMs` (50 s: a ceiling for a hung CLI on a loaded
 * 2-core machine, where a start alone can take 20 s) so a hung CLI fails the test, not the suite.
 * With `ownGroup` it leads a process group of its own, as a shell runs a job: a terminal's Ctrl-C reaches
 * every process of that group (`process.kill(-child.pid, 'SIGINT')`), not only the CLI.
 */
export function startCli(args: string[], opts: { timeoutMs?: number; env?: Record<string, string>; ownGroup?: boolean; input?: string } = {}): CliProcess {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1', ...opts.env },
    stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    detached: opts.ownGroup === true,
  });
  // Given input is the CLI's whole stdin: written, then closed.
  if (opts.input !== undefined) child.stdin!.end(opts.input);
  let out = '';
  let err = '';
  let closed: string | undefined;
  const waiters: { pattern: RegExp; resolve: () => void; reject: (e: Error) => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      if (w.pattern.test(out)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    check();
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 50_000);
  const exited = new Promise<CliResult>((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      closed = String(code ?? signal);
      for (const w of waiters.splice(0)) w.reject(new Error(`allocrun exited (${code ?? signal}) before printing ${w.pattern}:\n${out}\n${err}`));
      resolve({ code, signal, stdout: out, stderr: err });
    });
  });
  return {
    child,
    stdout: () => out,
    waitFor: (pattern) =>
      new Promise<void>((resolve, reject) => {
        if (pattern.test(out)) return resolve();
        if (closed !== undefined) return reject(new Error(`allocrun exited (${closed}) before printing ${pattern}:\n${out}\n${err}`));
        waiters.push({ pattern, resolve, reject });
      }),
    exited,
  };
}

/** Runs `allocrun ...args` to the end. */
export function runCli(args: string[], opts: { timeoutMs?: number; env?: Record<string, string>; input?: string } = {}): Promise<CliResult> {
  return startCli(args, opts).exited;
}
