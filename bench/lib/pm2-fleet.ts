/**
 * pm2 beside allocrun for P1/P2: a pm2 daemon of our own (PM2_HOME in a fresh temp dir, never the user's),
 * starting and stopping the same commands. The daemon and every process it started are tracked by pid and
 * `pm2 kill`ed at the end. When pm2 cannot be loaded or its daemon will not start, the caller gets the
 * reason to print instead of figures.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trackPid } from './pids.ts';

type Cb<T> = (err: Error | null, value: T) => void;
interface Pm2Api {
  connect(cb: Cb<unknown>): void;
  start(opts: Record<string, unknown>, cb: Cb<{ pid?: number; process?: { pid?: number } }[]>): void;
  delete(name: string, cb: Cb<unknown>): void;
  list(cb: Cb<{ pid?: number; name?: string }[]>): void;
  killDaemon(cb: Cb<unknown>): void;
  disconnect(): void;
}

const call = <T>(fn: (cb: Cb<T>) => void): Promise<T> =>
  new Promise((resolve, reject) => fn((err, v) => (err ? reject(err) : resolve(v))));

/** A pm2 daemon under a private PM2_HOME. */
export interface Pm2Fleet {
  /** Starts `n` copies of `command args` (fork mode, no autorestart); resolves once pm2 reports each online. */
  start(n: number, command: string, args: string[]): Promise<void>;
  /** Tracks the processes started (after a timed start: a list from the daemon and a /proc read each). */
  track(): Promise<void>;
  /** Stops and deletes them all; resolves when pm2 reports them gone. */
  stopAll(): Promise<void>;
  /** Kills the daemon (`pm2 kill`) and removes its PM2_HOME. */
  close(): Promise<void>;
}

/** Starts a private pm2 daemon, or returns why it cannot. */
export async function openPm2(): Promise<Pm2Fleet | { skipped: string }> {
  const home = mkdtempSync(join(tmpdir(), 'allocrun-pm2-'));
  const previousHome = process.env.PM2_HOME;
  // pm2 reads PM2_HOME when it is first loaded, and hands it to the daemon it spawns.
  process.env.PM2_HOME = home;
  const require = createRequire(import.meta.url);
  let pm2: Pm2Api;
  let pm2Bin: string;
  try {
    pm2 = require('pm2') as Pm2Api;
    pm2Bin = join(require.resolve('pm2/package.json'), '..', 'bin', 'pm2');
  } catch (err) {
    restoreHome(previousHome);
    rmSync(home, { recursive: true, force: true });
    return { skipped: `pm2 is not installed (${(err as Error).message.split('\n')[0]})` };
  }
  const killDaemon = () => {
    // `pm2 kill` for this PM2_HOME only; then make sure of the daemon by its pid.
    spawnSync(process.execPath, [pm2Bin, 'kill'], { env: { ...process.env, PM2_HOME: home }, stdio: 'ignore', timeout: 20_000 });
  };
  try {
    await call((cb) => pm2.connect(cb));
    trackPid(Number(readFileSync(join(home, 'pm2.pid'), 'utf8')));
  } catch (err) {
    killDaemon();
    restoreHome(previousHome);
    rmSync(home, { recursive: true, force: true });
    return { skipped: `pm2's daemon did not start (${(err as Error).message})` };
  }
  let started = 0;
  return {
    async start(n, command, args) {
      await Promise.all(
        Array.from({ length: n }, () =>
          call<{ pid?: number; process?: { pid?: number } }[]>((cb) =>
            pm2.start({ name: `bench-${started++}`, script: command, args, interpreter: 'none', exec_mode: 'fork', autorestart: false }, cb),
          ),
        ),
      );
    },
    async track() {
      for (const p of await call<{ pid?: number }[]>((cb) => pm2.list(cb))) if (p.pid) trackPid(p.pid);
    },
    async stopAll() {
      await call((cb) => pm2.delete('all', cb));
    },
    async close() {
      try {
        await Promise.race([call((cb) => pm2.killDaemon(cb)), new Promise((r) => setTimeout(r, 10_000))]);
      } catch {
        // Fall through to the CLI kill below.
      }
      pm2.disconnect();
      killDaemon();
      restoreHome(previousHome);
      rmSync(home, { recursive: true, force: true });
    },
  };
}

function restoreHome(previous: string | undefined): void {
  if (previous === undefined) delete process.env.PM2_HOME;
  else process.env.PM2_HOME = previous;
}
