/**
 * A supervised start released (launch.ts `spawnSupervised`, the workload's `release`): the agent no longer
 * waits on it, so the spawner helper stops holding the agent's process alive while the workload runs on.
 * What holds the process is read from Node's list of the handles that keep its event loop alive.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnSupervised } from '../../src/drivers/raw-exec/launch.ts';
import { isLive, readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import { lookupBin } from '../../src/drivers/raw-exec/process.ts';
import { spawnerPid } from '../../src/drivers/raw-exec/spawner.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { leftoversRemovedAfterEach } from './raw-exec-leftovers.ts';

const TOOLS = '/usr/bin:/bin:/usr/sbin:/sbin';
const setsid = lookupBin('setsid', '/', TOOLS);
const mkfifo = lookupBin('mkfifo', '/', TOOLS);
const { dirs } = leftoversRemovedAfterEach();

const helperHeld = () =>
  (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles().some(
    (h) => (h as { pid?: number }).pid === spawnerPid() && (h as object).constructor.name === 'ChildProcess',
  );

describe.runIf(setsid && mkfifo)('a supervised start released', () => {
  it('no longer holds the agent, and the workload runs on', async () => {
    const taskDir = mkdtempSync(join(tmpdir(), 'allocrun-launch-release-'));
    dirs.push(taskDir);
    const w = await spawnSupervised(
      { task: 'web', bin: '/bin/sh', args: ['-c', 'exec sleep 600'], cwd: taskDir, env: { PATH: TOOLS }, taskDir, attempt: 0, setsid: setsid!, mkfifo: mkfifo!, clock: new SimulatedClock(), pollMs: 100 },
      () => undefined,
    );
    try {
      expect(helperHeld()).toBe(true);
      w.release();
      expect(helperHeld()).toBe(false);
      expect(isLive(readProcStat(w.pid))).toBe(true);
    } finally {
      w.signalAll(9);
      await w.waitExit();
    }
  });
});
