/**
 * The spawner helper keeps the agent's process alive only while a child of it needs watching (spawner.ts
 * `hold`): a spawn in flight and a child neither exited nor released hold it; an exit, a release (once) and
 * a failed spawn let go; a helper that dies takes every hold with it, and its successor starts from none.
 * What holds the process is read from Node's own list of the handles that keep its event loop alive
 * (`process._getActiveHandles()`): the helper's ChildProcess, and its IPC channel, are there only while held.
 * In process, so Stryker sees it (the fixtures of raw-exec-spawner.test.ts run in child processes).
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import { spawnerPid, spawnerReady, spawnViaHelper, warmSpawner } from '../../src/drivers/raw-exec/spawner.ts';
import { until } from './until.ts';

const strays: number[] = [];
afterEach(() => {
  for (const pid of strays.splice(0)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

const activeHandles = () => (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
/** The IPC channels holding this process: only the helper's is made here. */
const channels = () => activeHandles().filter((h) => (h as object | null)?.constructor?.name === 'Pipe').length;

/** Whether the helper keeps this process alive: its ChildProcess among the active handles, and one channel more. */
function helperHeld(): boolean {
  const pid = spawnerPid();
  return activeHandles().some((h) => (h as { pid?: number }).pid === pid && (h as object).constructor.name === 'ChildProcess');
}

const waiting = async () => {
  const child = await spawnViaHelper('/bin/sh', ['-c', 'read -r x'], { cwd: '/', env: {} });
  strays.push(child.pid);
  return child;
};

describe('the helper holds the agent only while a child needs watching', () => {
  it('idle, it holds nothing; a waiting child holds it (process and channel) until it exits', async () => {
    await spawnerReady();
    expect(helperHeld()).toBe(false);
    const idleChannels = channels();
    const child = await waiting();
    expect(helperHeld()).toBe(true);
    expect(channels()).toBe(idleChannels + 1);
    child.go('\n');
    await child.exited;
    expect(helperHeld()).toBe(false);
    expect(channels()).toBe(idleChannels);
  });

  it('two children hold it until both have let go, by release or by exit', async () => {
    await spawnerReady();
    const a = await waiting();
    const b = await waiting();
    a.release();
    expect(helperHeld()).toBe(true);
    b.go('\n');
    await b.exited;
    expect(helperHeld()).toBe(false);
    a.go('\n');
    await a.exited;
  });

  it('a release after the exit, or a second one, lets go of nothing more: the next child holds it again', async () => {
    await spawnerReady();
    const a = await waiting();
    a.go('\n');
    await a.exited;
    a.release();
    a.release();
    const b = await waiting();
    expect(helperHeld()).toBe(true);
    b.release();
    expect(helperHeld()).toBe(false);
    b.go('\n');
    await b.exited;
  });

  it('a child released and then exited lets go once: the next child holds it again', async () => {
    await spawnerReady();
    const a = await waiting();
    a.release();
    a.go('\n');
    await a.exited;
    const b = await waiting();
    expect(helperHeld()).toBe(true);
    b.go('\n');
    await b.exited;
    expect(helperHeld()).toBe(false);
  });

  it('a failed spawn lets go of its hold', async () => {
    await spawnerReady();
    await spawnViaHelper('/bin/sh', ['-c', 'exit 0'], { cwd: '/no/such/dir', env: {} }).catch(() => undefined);
    expect(helperHeld()).toBe(false);
    await spawnViaHelper('/bin/sh', ['-c', 'exit 0', 'a\0b'], { cwd: '/', env: {} }).catch(() => undefined);
    expect(helperHeld()).toBe(false);
  });

  it('the wait for the helper to come up holds it', async () => {
    await spawnerReady();
    const old = spawnerPid()!;
    process.kill(old, 'SIGKILL');
    await until(() => spawnerPid() !== old, 'the helper forgotten');
    const up = spawnerReady();
    expect(helperHeld()).toBe(true);
    await up;
    expect(helperHeld()).toBe(false);
  });
});

describe('the helper itself', () => {
  it('started ahead of the first spawn (warmSpawner), holds nothing', async () => {
    await spawnerReady();
    const old = spawnerPid()!;
    process.kill(old, 'SIGKILL');
    await until(() => spawnerPid() !== old, 'the helper forgotten');
    warmSpawner();
    expect(spawnerPid()).toBeDefined();
    expect(helperHeld()).toBe(false);
    await spawnerReady();
  });

  it("leads a session of its own, so a terminal's Ctrl-C to the agent's group does not reach it", async () => {
    // A helper of its own, started here, not one an earlier suite left running.
    await spawnerReady();
    const old = spawnerPid()!;
    process.kill(old, 'SIGKILL');
    await until(() => spawnerPid() !== old, 'the helper forgotten');
    await spawnerReady();
    const pid = spawnerPid()!;
    // Field 6 of /proc/<pid>/stat: the session id.
    const session = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[3]);
    expect([readProcStat(pid)!.pgrp, session]).toEqual([pid, pid]);
  });
});

describe("a helper that dies takes its holds with it; its successor's are its own", () => {
  it('a child that had not reported yet reports nothing and is lost; a go to it goes nowhere', async () => {
    await spawnerReady();
    const helper = spawnerPid()!;
    const child = await waiting();
    process.kill(helper, 'SIGKILL');
    expect(await child.reported).toBeUndefined();
    expect((await child.exited).lost).toBeDefined();
    await until(() => spawnerPid() === undefined, 'the helper forgotten');
    expect(() => child.go('\n')).not.toThrow();
  });

  it('a live child held by a helper that died holds nothing of the next helper', async () => {
    await spawnerReady();
    const first = spawnerPid()!;
    const orphan = await waiting();
    process.kill(first, 'SIGKILL');
    await orphan.exited;
    await until(() => spawnerPid() === undefined, 'the helper forgotten');
    const next = await waiting();
    expect(spawnerPid()).not.toBe(first);
    next.go('\n');
    await next.exited;
    expect(helperHeld()).toBe(false);
  });

  it('a lost child released afterwards takes no hold off the next helper', async () => {
    await spawnerReady();
    const first = spawnerPid()!;
    const orphan = await waiting();
    process.kill(first, 'SIGKILL');
    await orphan.exited;
    expect(() => orphan.release()).not.toThrow();
    const next = await waiting();
    expect(helperHeld()).toBe(true);
    next.go('\n');
    await next.exited;
    expect(helperHeld()).toBe(false);
  });

  it('a wait for a helper that dies before it is up resolves, and leaves the next helper its own count', async () => {
    await spawnerReady();
    const old = spawnerPid()!;
    process.kill(old, 'SIGKILL');
    await until(() => spawnerPid() !== old, 'the helper forgotten');
    const up = spawnerReady();
    process.kill(spawnerPid()!, 'SIGKILL');
    await up;
    await until(() => spawnerPid() === undefined, 'the dead helper forgotten');
    const child = await waiting();
    expect(helperHeld()).toBe(true);
    child.release();
    expect(helperHeld()).toBe(false);
    child.go('\n');
    await child.exited;
  });
});
