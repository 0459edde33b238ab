/**
 * The spawner thread raw_exec starts its supervisors from: it spawns, passes the child's fd 3 report, the
 * go and the exit across the thread boundary, reports spawn failures the way spawn does, and a released
 * child does not keep the agent's process alive.
 */
import { execFile } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { isLive, readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import { spawnInWorker } from '../../src/drivers/raw-exec/spawner.ts';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');
const strays: number[] = [];
afterEach(() => {
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

const sh = (script: string) => spawnInWorker('/bin/sh', ['-c', script], { cwd: '/', env: {} });

describe('the raw_exec spawner thread', () => {
  it('passes the first line the child writes on fd 3, then its exit', async () => {
    const child = await sh('echo 1234 >&3; echo more >&3; exit 7');
    expect(await child.reported).toBe('1234');
    expect(await child.exited).toEqual({ code: 7, signal: null });
    expect(child.exit).toEqual({ code: 7, signal: null });
  });

  it('writes the go on the child\'s stdin and closes it', async () => {
    const child = await sh('read -r x; echo "$x" >&3; read -r y || exit 9');
    child.go('hello\n');
    expect(await child.reported).toBe('hello');
    expect(await child.exited).toEqual({ code: 9, signal: null });
  });

  it('reports no line when fd 3 closes without one, and a death by signal', async () => {
    const child = await sh('kill -TERM $$');
    expect(await child.reported).toBeUndefined();
    expect(await child.exited).toEqual({ code: null, signal: 'SIGTERM' });
  });

  it('runs the child in a session of its own', async () => {
    const child = await sh('read -r x');
    strays.push(child.pid);
    const stat = readProcStat(child.pid);
    expect(stat?.pgrp).toBe(child.pid);
    expect(stat?.ppid).toBe(process.pid);
    child.go('\n');
    await child.exited;
  });

  it('rejects as spawn fails: at once for invalid arguments, through the error event for a missing cwd', async () => {
    await expect(spawnInWorker('/bin/sh', ['-c', 'exit 0', 'a\0b'], { cwd: '/', env: {} })).rejects.toMatchObject({ sync: true });
    await expect(spawnInWorker('/bin/sh', ['-c', 'exit 0'], { cwd: '/no/such/dir', env: {} })).rejects.toMatchObject({ sync: false, code: 'ENOENT' });
  });

  it('does not keep the process alive once the child is released', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(here, 'fixtures', 'spawner-release.ts')], { cwd: repoRoot, timeout: 20_000 });
    const pid = Number(stdout.trim());
    strays.push(pid);
    expect(isLive(readProcStat(pid)), 'the released child outlives the process that spawned it').toBe(true);
  }, 30_000);
});
