/**
 * The order of a supervised start's steps, which crash recovery relies on (launch.ts `spawnSupervised`):
 * the private dir, then the attempt's intent, then the supervisor's spawn, each on file before the next
 * begins: an agent killed during a start must never leave a supervisor that no intent names (a restore would
 * then spawn the attempt twice). Should the steps move off the agent's thread (libuv's pool), each must still
 * be awaited before the next; this pins that.
 * The seam is the spawner helper itself: the start pauses at the spawn, and the test reads the disk there.
 * No process is started.
 */
import { lstatSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SpawnError } from '../../src/drivers/raw-exec/errors.ts';
import { spawnSupervised, type LaunchRequest } from '../../src/drivers/raw-exec/launch.ts';
import { privateDir, readIntent, writeIntent } from '../../src/drivers/raw-exec/supervisor.ts';
import { SpawnerError, spawnViaHelper } from '../../src/drivers/raw-exec/spawner.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

vi.mock('../../src/drivers/raw-exec/spawner.ts', async (original) => ({
  ...(await original<typeof import('../../src/drivers/raw-exec/spawner.ts')>()),
  spawnViaHelper: vi.fn(),
}));
const spawnMock = vi.mocked(spawnViaHelper);

const dirs: string[] = [];
afterEach(() => {
  spawnMock.mockReset();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function request(attempt: number | undefined): LaunchRequest {
  const taskDir = mkdtempSync(join(tmpdir(), 'allocrun-start-order-'));
  dirs.push(taskDir);
  return {
    task: 'web',
    bin: '/bin/true',
    args: [],
    cwd: taskDir,
    env: {},
    taskDir,
    attempt,
    setsid: '/usr/bin/setsid',
    mkfifo: '/usr/bin/mkfifo',
    clock: new SimulatedClock(),
    pollMs: 100,
  };
}

/** What the disk held when the spawn was asked for; the spawn then fails as a refused one would. */
interface AtSpawn {
  prefix: string;
  privateDirMode: number | undefined;
  intent: string | undefined;
}

/** Starts `req`, pausing at the spawn to read the disk; resolves with that reading and the start's error. */
async function pauseAtSpawn(req: LaunchRequest): Promise<{ at: AtSpawn; err: unknown }> {
  let release!: () => void;
  const atSpawn = new Promise<AtSpawn>((resolveAt) => {
    spawnMock.mockImplementation((_file, args) => {
      let mode: number | undefined;
      try {
        mode = lstatSync(privateDir(req.taskDir)).mode & 0o777;
      } catch {
        mode = undefined;
      }
      resolveAt({ prefix: args[3]!, privateDirMode: mode, intent: req.attempt === undefined ? undefined : readIntent(req.taskDir, req.attempt) });
      return new Promise((_resolve, reject) => (release = () => reject(new SpawnerError('refused by the test', undefined, true))));
    });
  });
  const started = spawnSupervised(req, () => undefined).catch((e: unknown) => e);
  const ended = started.then((e) => {
    throw new Error(`the start ended before its spawn: ${String(e)}`);
  });
  const at = await Promise.race([atSpawn, ended]);
  release();
  return { at, err: await started };
}

/** The token a spawn's file prefix (`…/private/exec-<attempt>-<token>`) names. */
const tokenOf = (req: LaunchRequest, prefix: string) => prefix.slice(join(privateDir(req.taskDir), `exec-${req.attempt}-`).length);

describe('a supervised start, paused at its spawn', () => {
  it("finds the private dir made (0700) and the attempt's intent naming the token it spawns with", async () => {
    const req = request(3);
    const { at, err } = await pauseAtSpawn(req);
    expect(at.privateDirMode).toBe(0o700);
    expect(at.prefix.startsWith(join(privateDir(req.taskDir), 'exec-3-'))).toBe(true);
    expect(at.intent).toMatch(/^[0-9a-f]{13,}$/);
    expect(at.intent).toBe(tokenOf(req, at.prefix));
    expect(err).toBeInstanceOf(SpawnError);
  });

  it("finds an attempt's earlier intent (a restore cancelled its token) already replaced by the new token", async () => {
    const req = request(5);
    mkdirSync(privateDir(req.taskDir), { mode: 0o700 });
    writeIntent(req.taskDir, 5, 'cancelled');
    const { at } = await pauseAtSpawn(req);
    expect(at.intent).not.toBe('cancelled');
    expect(at.intent).toBe(tokenOf(req, at.prefix));
  });

  it('finds the private dir made when the task dir was not there yet', async () => {
    const req = request(0);
    const nested = { ...req, taskDir: join(req.taskDir, 'alloc', 'web') };
    const { at } = await pauseAtSpawn(nested);
    expect(at.privateDirMode).toBe(0o700);
    expect(at.intent).toBe(tokenOf(nested, at.prefix));
  });
});

describe('a supervised start that cannot record its intent', () => {
  it('spawns nothing', async () => {
    const req = request(2);
    // A directory where the intent goes: neither the in-place create nor the rename over it can succeed.
    mkdirSync(join(privateDir(req.taskDir), 'exec-2.intent'), { recursive: true, mode: 0o700 });
    const err = await spawnSupervised(req, () => undefined).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(spawnMock).not.toHaveBeenCalled();
  });
});
