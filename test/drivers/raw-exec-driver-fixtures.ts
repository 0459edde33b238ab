/**
 * What the raw_exec driver's rule suites share (raw-exec-driver-*-rules.test.ts): a task, a context on a
 * simulated clock in a temp alloc dir, a live process to recover (a `sh` of the test's, in a group of its
 * own), and a stepper that runs the clock until a stop resolves. Every dir and process is removed after each
 * test (raw-exec-leftovers.ts).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Controller, DriverContext } from '../../src/drivers/controller.ts';
import { readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import type { TaskSpec } from '../../src/jobspec/types.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { afterEach } from 'vitest';
import { leftoversRemovedAfterEach } from './raw-exec-leftovers.ts';

/** A pid no process has (above the kernel's pid_max limit of 2^22). */
export const NO_PID = 2 ** 22 + 17;
export const never = (): AbortSignal => new AbortController().signal;

export function driverFixtures() {
  const { dirs, children } = leftoversRemovedAfterEach();
  /** Processes a task left outside its group (a daemon of its own session), killed by pid after each test. */
  const strays: number[] = [];
  /** Controllers whose tasks are killed after each test, whatever the test left them doing. */
  const controllers: Controller[] = [];
  afterEach(async () => {
    for (const c of controllers.splice(0)) await c.terminate(never()).catch(() => undefined);
    for (const pid of strays.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });

  const task = (config: unknown = { command: 'sleep', args: ['60'] }, extra: Partial<TaskSpec> = {}): TaskSpec =>
    ({ name: 'web', driver: 'raw_exec', config, ...extra }) as unknown as TaskSpec;

  /** A temp dir removed after the test. */
  function tempDir(prefix = 'allocrun-driver-rules-'): string {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  }

  function context(extra: Partial<DriverContext> = {}): DriverContext & { clock: SimulatedClock } {
    const allocDir = tempDir();
    return { allocId: 'a1', env: { PATH: '/usr/bin:/bin' }, taskDir: join(allocDir, 'web'), allocDir, clock: new SimulatedClock(), ...extra } as DriverContext & {
      clock: SimulatedClock;
    };
  }

  /** A live process leading its own group, with its /proc start time; `comm` waits until it has exec'd that. */
  async function sleeper(script = 'exec sleep 600', comm?: string): Promise<{ pid: number; startTime: number }> {
    const child = spawn('/bin/sh', ['-c', script], { detached: true, stdio: 'ignore' });
    children.push(child);
    await once(child, 'spawn');
    for (let i = 0; comm !== undefined && i < 2_000 && readProcStat(child.pid!)?.comm !== comm; i++) await new Promise((r) => setTimeout(r, 5));
    return { pid: child.pid!, startTime: readProcStat(child.pid!)!.startTime };
  }

    /** `c`, killed after the test. */
  function tracked<C extends Controller>(c: C): C {
    controllers.push(c);
    return c;
  }

  return { dirs, children, strays, task, tempDir, context, sleeper, tracked };
}

/**
 * Steps the clock 100 ms every 5 ms of real time until `p` settles (a process dies in real time, its end is
 * seen at a poll), or the clock reaches `untilMs`; says whether `p` settled.
 */
export async function stepUntilSettled(clock: SimulatedClock, p: Promise<unknown>, untilMs = 200_000): Promise<boolean> {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  while (!done && clock.now() < untilMs) {
    await new Promise((r) => setTimeout(r, 5));
    await clock.advance(100);
  }
  await new Promise((r) => setImmediate(r));
  return done;
}

/** Whether `pid` is a process that has not exited (a zombie has). */
export const isAlive = (pid: number): boolean => {
  const stat = readProcStat(pid);
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
};

/** Waits (in real time, bounded) until `ready()` holds; throws naming `what` if it never does. */
export async function until(ready: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > end) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

let loads = 0;

/**
 * A new instance of the module at `path` (relative to this file), loaded now with the agent's PATH set to
 * `agentPath` (unset when undefined), then put back: what the module settles at load (a search path) or
 * once per process (a tool's lookup) runs again, under the test. The modules it imports are the ones
 * already loaded.
 */
export async function loadedAfresh<M>(path: string, agentPath: string | undefined): Promise<M> {
  const saved = process.env.PATH;
  if (agentPath === undefined) delete process.env.PATH;
  else process.env.PATH = agentPath;
  try {
    return (await import(/* @vite-ignore */ `${path}?load=${++loads}`)) as M;
  } finally {
    process.env.PATH = saved;
  }
}

/**
 * Plants executables named `tools` in `local/` of this process's working directory, where a lookup made
 * relative to it (rather than to `/`) would find them first; `local/` is removed after the test. Says false,
 * planting nothing, when that dir already exists: it is not the test's to touch.
 */
export function plantedInWorkingDir(tools: string[], dirs: string[]): boolean {
  const local = join(process.cwd(), 'local');
  if (existsSync(local)) return false;
  mkdirSync(local);
  dirs.push(local);
  for (const tool of tools) {
    writeFileSync(join(local, tool), '#!/bin/sh\nexit 1\n');
    chmodSync(join(local, tool), 0o755);
  }
  return true;
}
