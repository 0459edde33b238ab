/**
 * The spawner helper's bookkeeping (spawner.ts), rule by rule: each child's report, go and exit reach that
 * child's caller and no other; a failed spawn says how it failed; and a helper that dies (it never should)
 * fails the spawns in flight and reports its live children as lost, not hung, after which the next spawn
 * starts a new helper. The helper is killed here by its pid, once, on purpose.
 */
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { passedEnd } from '../../src/drivers/raw-exec/output-pipes.ts';
import { isLive, readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import { spawnerPid, spawnerReady, spawnViaHelper, SpawnerError } from '../../src/drivers/raw-exec/spawner.ts';
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

const sh = async (script: string) => {
  const child = await spawnViaHelper('/bin/sh', ['-c', script], { cwd: '/', env: {} });
  strays.push(child.pid);
  return child;
};

describe("the spawner keeps each child's messages apart", () => {
  it('gives each caller its own child\'s report, go and exit', async () => {
    const a = await sh('echo A >&3; read x; exit 3');
    const b = await sh('echo B >&3; read x; exit 4');
    expect(await Promise.all([a.reported, b.reported])).toEqual(['A', 'B']);
    expect([a.exit, b.exit]).toEqual([undefined, undefined]);
    b.go('go\n');
    expect(await b.exited).toEqual({ code: 4, signal: null });
    expect(b.exit).toEqual({ code: 4, signal: null });
    expect(a.exit).toBeUndefined();
    a.go('go\n');
    expect(await a.exited).toEqual({ code: 3, signal: null });
  });

  it('passes the first line only, without its newline', async () => {
    const c = await sh('printf "one\\ntwo\\n" >&3; exit 0');
    expect(await c.reported).toBe('one');
  });

  it('a line cut in two writes is passed whole', async () => {
    const c = await sh('printf "ab" >&3; sleep 0.05; printf "cd\\n" >&3; exit 0');
    expect(await c.reported).toBe('abcd');
  });

  it('a child that exits without a report reports none', async () => {
    const c = await sh('printf "no newline" >&3; exit 0');
    expect(await c.reported).toBeUndefined();
    await c.exited;
  });

  it("passes the child's fds named in passFds with its report, in order, none where there is no pipe", async () => {
    const script = 'exec 5<<E\nE\nexec 5<>/proc/self/fd/5; echo out >&5; echo up >&3; read -r go';
    const c = await spawnViaHelper('/bin/sh', ['-c', script], { cwd: '/', env: {}, passFds: [5, 6] });
    strays.push(c.pid);
    expect(await c.reported).toBe('up');
    expect([c.passed.length, c.passed[1]]).toEqual([2, undefined]);
    const out = passedEnd(c.passed[0]!).reader();
    const [chunk] = (await once(out, 'data')) as [Buffer];
    expect(chunk.toString()).toBe('out\n');
    out.destroy();
    c.go('\n');
    await c.exited;
  });

  it('passes no fds of a child spawned without passFds', async () => {
    const c = await sh('exec 5<<E\nE\nexec 5<>/proc/self/fd/5; echo up >&3; exit 0');
    expect(await c.reported).toBe('up');
    expect(c.passed).toEqual([]);
  });

  it('fails a spawn of a missing file through the error event, with its code', async () => {
    const err = await spawnViaHelper('/nonexistent/allocrun-bin', [], { cwd: '/', env: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpawnerError);
    expect([(err as SpawnerError).name, (err as SpawnerError).code, (err as SpawnerError).sync]).toEqual(['SpawnerError', 'ENOENT', false]);
  });

  it('fails a spawn with invalid arguments at once, saying so', async () => {
    const err = await spawnViaHelper('/bin/sh', ['-c', 'a\0b'], { cwd: '/', env: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpawnerError);
    expect((err as SpawnerError).sync).toBe(true);
  });

  it('a release twice is a release once', async () => {
    const c = await sh('exit 0');
    c.release();
    c.release();
    await c.exited;
  });
});

describe('a helper that dies', () => {
  it('reports its live children as lost and the next spawn starts a new helper', async () => {
    await spawnerReady();
    const first = spawnerPid()!;
    const child = await sh('echo up >&3; exec sleep 600');
    expect(await child.reported).toBe('up');
    process.kill(first, 'SIGKILL');
    expect(await child.exited).toEqual({
      code: null,
      signal: null,
      lost: 'the spawner process that held the supervisor exited, so its exit cannot be seen',
    });
    expect(child.exit).toEqual(await child.exited);
    // The child itself runs on: only its watcher is gone.
    expect(isLive(readProcStat(child.pid))).toBe(true);
    await until(() => spawnerPid() === undefined, 'the helper forgotten');
    const next = await sh('exit 5');
    expect(spawnerPid()).not.toBe(first);
    expect(await next.exited).toEqual({ code: 5, signal: null });
  });

  it('fails a spawn in flight: the helper stopped before it reads the request, then killed', async () => {
    await spawnerReady();
    const helper = spawnerPid()!;
    // Stopped, the helper cannot act on the request: the spawn is in flight when it dies, whatever the load.
    process.kill(helper, 'SIGSTOP');
    const inFlight = spawnViaHelper('/bin/sh', ['-c', 'exit 0'], { cwd: '/', env: {} });
    process.kill(helper, 'SIGKILL');
    const err = await inFlight.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpawnerError);
    expect([(err as SpawnerError).message, (err as SpawnerError).code, (err as SpawnerError).sync]).toEqual(['the spawner process exited', undefined, false]);
    expect(spawnerPid()).toBeUndefined();
  });

  it('is started again by spawnerReady, which resolves once it is up', async () => {
    await spawnerReady();
    const pid = spawnerPid()!;
    process.kill(pid, 'SIGKILL');
    await until(() => spawnerPid() !== pid, 'the helper forgotten');
    await spawnerReady();
    const again = spawnerPid()!;
    expect(again).not.toBe(pid);
    expect(isLive(readProcStat(again))).toBe(true);
  }, 30_000);
});
