/**
 * The spawner helper raw_exec starts its supervisors from: it spawns, passes the child's fd 3 report, the
 * go and the exit across the process boundary, reports spawn failures the way spawn does, a released
 * child does not keep the agent's process alive, and the helper does not outlive the agent.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { isLive, readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import { spawnerPid, spawnerReady, spawnViaHelper } from '../../src/drivers/raw-exec/spawner.ts';

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

/** Polls `ok` every 20 ms for up to 10 s. */
async function waitFor(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 20));
  expect(ok()).toBe(true);
}

const sh = (script: string) => spawnViaHelper('/bin/sh', ['-c', script], { cwd: '/', env: {} });

describe('the raw_exec spawner helper', () => {
  it('is up once spawnerReady resolves: a child of this process, not of its thread', async () => {
    await spawnerReady();
    const stat = readProcStat(spawnerPid()!);
    expect(isLive(stat)).toBe(true);
    expect(stat!.ppid).toBe(process.pid);
  });

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
    // The helper's child, not the agent's: the agent never forks its own heap for a supervisor.
    expect(stat?.ppid).toBe(spawnerPid());
    expect(stat?.ppid).not.toBe(process.pid);
    child.go('\n');
    await child.exited;
  });

  it('rejects as spawn fails: at once for invalid arguments, through the error event for a missing cwd', async () => {
    await expect(spawnViaHelper('/bin/sh', ['-c', 'exit 0', 'a\0b'], { cwd: '/', env: {} })).rejects.toMatchObject({ sync: true });
    await expect(spawnViaHelper('/bin/sh', ['-c', 'exit 0'], { cwd: '/no/such/dir', env: {} })).rejects.toMatchObject({ sync: false, code: 'ENOENT' });
  });

  it('does not keep the process alive once the child is released', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(here, 'fixtures', 'spawner-release.ts')], { cwd: repoRoot, timeout: 20_000 });
    const pid = Number(stdout.trim());
    strays.push(pid);
    expect(isLive(readProcStat(pid)), 'the released child outlives the process that spawned it').toBe(true);
  }, 30_000);

  it('exits when the agent dies, closing the go pipe of a child that waits for it; the child runs on', async () => {
    const statusFile = join(await mkdtemp(join(tmpdir(), 'spawner-dies-')), 'read-status');
    const agent = spawn(process.execPath, ['--import', 'tsx', join(here, 'fixtures', 'spawner-agent-dies.ts'), statusFile], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
    strays.push(agent.pid!);
    const [line] = (await once(agent.stdout!, 'data')) as [Buffer];
    const [helperPid, childPid] = line.toString().trim().split(' ').map(Number) as [number, number];
    strays.push(childPid, helperPid);
    expect(isLive(readProcStat(helperPid))).toBe(true);
    agent.kill('SIGKILL');
    await waitFor(() => !isLive(readProcStat(helperPid)));
    await waitFor(() => existsSync(statusFile) && readFileSync(statusFile, 'utf8').trim() !== '');
    expect(readFileSync(statusFile, 'utf8').trim(), 'the read of the go ends at EOF, not with a line').not.toBe('0');
    expect(isLive(readProcStat(childPid)), 'the child outlives the agent and its helper').toBe(true);
    await rm(dirname(statusFile), { recursive: true, force: true });
  }, 30_000);
});
