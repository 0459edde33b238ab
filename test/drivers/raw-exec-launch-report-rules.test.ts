/**
 * How a fresh start learns its workload's pid (launch.ts `workloadPid`): the line the supervisor reports on
 * fd 3, when it is a pid; only without one (fd 3 closed, or something else on it) the pid file it wrote
 * before the exec. And the supervisor is recognisable in `ps` by its name. The file and the report are
 * made to disagree here on purpose, so the table shows which one is read.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnSupervised, workloadPid } from '../../src/drivers/raw-exec/launch.ts';
import { lookupBin } from '../../src/drivers/raw-exec/process.ts';
import { attemptPrefix, ensurePrivateDir } from '../../src/drivers/raw-exec/supervisor.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { leftoversRemovedAfterEach } from './raw-exec-leftovers.ts';

const TOOLS = '/usr/bin:/bin:/usr/sbin:/sbin';
const setsid = lookupBin('setsid', '/', TOOLS);
const mkfifo = lookupBin('mkfifo', '/', TOOLS);
const { dirs } = leftoversRemovedAfterEach();

function prefixWithPidFile(pid: string | undefined): string {
  const dir = mkdtempSync(join(tmpdir(), 'allocrun-report-'));
  dirs.push(dir);
  ensurePrivateDir(dir);
  const prefix = attemptPrefix(dir, 0, 'tok');
  if (pid !== undefined) writeFileSync(`${prefix}.pid`, `${pid}\n`);
  return prefix;
}

describe('the workload pid is the one reported on fd 3, else the one on file', () => {
  it.each([
    ['4242', '777', 4242],
    [undefined, '777', 777],
    [undefined, undefined, undefined],
    ['x4242', '777', 777],
    ['4242x', '777', 777],
    ['', '777', 777],
    ['4242', undefined, 4242],
  ])('a report of %j with %j on file gives %j', async (line, onFile, pid) => {
    await expect(workloadPid({ reported: Promise.resolve(line) }, prefixWithPidFile(onFile))).resolves.toBe(pid);
  });
});

describe.runIf(setsid && mkfifo)('a supervisor', () => {
  it('is named allocrun-supervisor in ps', async () => {
    const taskDir = mkdtempSync(join(tmpdir(), 'allocrun-report-'));
    dirs.push(taskDir);
    const w = await spawnSupervised(
      { task: 'web', bin: '/bin/sh', args: ['-c', 'exec sleep 600'], cwd: taskDir, env: { PATH: TOOLS }, taskDir, attempt: 0, setsid: setsid!, mkfifo: mkfifo!, clock: new SimulatedClock(), pollMs: 100 },
      () => undefined,
    );
    try {
      const argv = readFileSync(`/proc/${w.supervisor!.pid}/cmdline`, 'utf8').split('\0');
      expect(argv[3]).toBe('allocrun-supervisor');
    } finally {
      w.signalAll(9);
      await w.waitExit();
      w.release();
    }
  });
});
