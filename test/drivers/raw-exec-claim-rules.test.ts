/**
 * Finding the start an earlier agent made of an attempt (launch.ts `findEarlierSpawn`), rule by rule, from
 * the records it left: no intent, an unclaimed token (voided here, so a late supervisor runs nothing), a
 * voided one, a claimed one with or without the workload's pid or status, a supervisor that died between
 * its claim and the exec. Each step of the claim race is set up by writing the record a step leaves, and
 * the wait for a claimed supervisor is stepped on a simulated clock. Also: the command the supervisor
 * execs, and the output pipes of a supervisor that is gone.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findEarlierSpawn, openOutput, workloadCommand, type EarlierSpawnQuery } from '../../src/drivers/raw-exec/launch.ts';
import { readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import { attemptPrefix, ensurePrivateDir, outputFifos, writeIntent } from '../../src/drivers/raw-exec/supervisor.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { leftoversRemovedAfterEach } from './raw-exec-leftovers.ts';

/** A pid no process holds (above the kernel's limit of 2^22). */
const NO_PID = 2 ** 22 + 13;

const { dirs, children } = leftoversRemovedAfterEach();

/** A task dir whose attempt 2 was recorded with token `tok` (unless `intent` is false), and its prefix. */
function attempt(intent = true): { query: EarlierSpawnQuery; prefix: string; clock: SimulatedClock } {
  const taskDir = mkdtempSync(join(tmpdir(), 'allocrun-claim-'));
  dirs.push(taskDir);
  ensurePrivateDir(taskDir);
  if (intent) writeIntent(taskDir, 2, 'tok');
  const clock = new SimulatedClock();
  return { query: { task: 'web', taskDir, attempt: 2, clock, pollMs: 100, watchedPollMs: 5_000 }, prefix: attemptPrefix(taskDir, 2, 'tok'), clock };
}

const never = () => new AbortController().signal;

async function sleeper(script = 'exec sleep 600'): Promise<{ pid: number; startTime: number }> {
  const child = spawn('/bin/sh', ['-c', script], { detached: true, stdio: 'ignore' });
  children.push(child);
  await once(child, 'spawn');
  return { pid: child.pid!, startTime: readProcStat(child.pid!)!.startTime };
}

describe('an earlier start of the attempt is found from its records', () => {
  it('is none for a start with no attempt number', async () => {
    const { query } = attempt();
    await expect(findEarlierSpawn({ ...query, attempt: undefined }, never())).resolves.toBeUndefined();
  });

  it('is none when no intent was recorded for the attempt', async () => {
    const { query } = attempt(false);
    await expect(findEarlierSpawn(query, never())).resolves.toBeUndefined();
  });

  it('is none for an intent of another attempt', async () => {
    const { query } = attempt();
    await expect(findEarlierSpawn({ ...query, attempt: 3 }, never())).resolves.toBeUndefined();
  });

  it('an unclaimed token is voided here, so a supervisor that comes up late runs nothing', async () => {
    const { query, prefix } = attempt();
    await expect(findEarlierSpawn(query, never())).resolves.toBeUndefined();
    expect(readFileSync(`${prefix}.claim`, 'utf8')).toBe('void\n');
    // The supervisor's own claim (set -C) now fails: it exits 125 without running anything.
    const sup = spawnSync('/bin/sh', ['-c', 'set -C; { echo $$ > "$1.claim"; } 2>/dev/null || exit 125; exit 0', 'sh', prefix]);
    expect(sup.status).toBe(125);
  });

  it('a token already voided stays void and is none', async () => {
    const { query, prefix } = attempt();
    writeFileSync(`${prefix}.claim`, 'void\n');
    await expect(findEarlierSpawn(query, never())).resolves.toBeUndefined();
    expect(readFileSync(`${prefix}.claim`, 'utf8')).toBe('void\n');
  });

  it('a claimed token whose supervisor died before recording a pid is none: nothing ran, a fresh spawn is safe', async () => {
    const { query, prefix } = attempt();
    writeFileSync(`${prefix}.claim`, `${NO_PID}\n`);
    await expect(findEarlierSpawn(query, never())).resolves.toBeUndefined();
  });

  it('a claimed token with the workload\'s pid on file is adopted: its pid, group, start time and supervisor', async () => {
    const { query, prefix } = attempt();
    const workload = await sleeper();
    writeFileSync(`${prefix}.claim`, `${NO_PID}\n`);
    writeFileSync(`${prefix}.pid`, `${workload.pid}\n`);
    const w = (await findEarlierSpawn(query, never()))!;
    expect(w).toBeDefined();
    expect([w.pid, w.pgid, w.startTime]).toEqual([workload.pid, workload.pid, workload.startTime]);
    expect(w.supervisor).toEqual({ prefix, pid: NO_PID, startTime: undefined });
    expect(w.signalMain(0)).toBe(true);
  });

  it("a claim that has grown the workload's pid line is adopted, as a previous script's pid file was", async () => {
    const { query, prefix } = attempt();
    const workload = await sleeper();
    writeFileSync(`${prefix}.claim`, `${NO_PID}\npid ${workload.pid}\n`);
    const w = (await findEarlierSpawn(query, never()))!;
    expect([w.pid, w.pgid, w.startTime]).toEqual([workload.pid, workload.pid, workload.startTime]);
    expect(w.supervisor).toEqual({ prefix, pid: NO_PID, startTime: undefined });
  });

  it("a claim whose supervisor recorded only a status line (its subshell failed before the exec) is adopted as gone, its end that status", async () => {
    const { query, prefix } = attempt();
    writeFileSync(`${prefix}.claim`, `${NO_PID}\nstatus 126\n`);
    const w = (await findEarlierSpawn(query, never()))!;
    expect([w.pid, w.pgid, w.startTime]).toEqual([-1, undefined, -1]);
    await expect(w.waitExit()).resolves.toEqual({ exitCode: 126, signal: 0 });
  });

  it('a live supervisor is recorded with its start time', async () => {
    const { query, prefix } = attempt();
    const sup = await sleeper();
    writeFileSync(`${prefix}.claim`, `${sup.pid}\n`);
    writeFileSync(`${prefix}.status`, '0\n');
    const w = (await findEarlierSpawn(query, never()))!;
    expect(w.supervisor).toEqual({ prefix, pid: sup.pid, startTime: sup.startTime });
  });

  it('a workload that is not the supervisor\'s child while the supervisor lives is not taken for it', async () => {
    const { query, prefix } = attempt();
    const sup = await sleeper();
    const stranger = await sleeper();
    writeFileSync(`${prefix}.claim`, `${sup.pid}\n`);
    writeFileSync(`${prefix}.pid`, `${stranger.pid}\n`);
    const w = (await findEarlierSpawn(query, never()))!;
    expect(w.startTime).toBe(-1);
    // Not ours: never signalled.
    expect(w.signalAll(0)).toBe(false);
  });

  it('a workload that does not lead its own group is not taken for it', async () => {
    const { query, prefix } = attempt();
    const leader = await sleeper('sleep 600 & wait');
    let member: number | undefined;
    for (let i = 0; i < 1000 && member === undefined; i++) {
      const kids = readFileSync(`/proc/${leader.pid}/task/${leader.pid}/children`, 'utf8').trim();
      if (kids) member = Number(kids.split(' ')[0]);
      else await new Promise((r) => setTimeout(r, 5));
    }
    writeFileSync(`${prefix}.claim`, `${NO_PID}\n`);
    writeFileSync(`${prefix}.pid`, `${member}\n`);
    const w = (await findEarlierSpawn(query, never()))!;
    expect(w.pid).toBe(member);
    expect(w.startTime).toBe(-1);
  });

  it('a claimed token with only the status on file is adopted as a workload already gone, its end that status', async () => {
    const { query, prefix } = attempt();
    writeFileSync(`${prefix}.claim`, `${NO_PID}\n`);
    writeFileSync(`${prefix}.status`, '4\n');
    const w = (await findEarlierSpawn(query, never()))!;
    expect([w.pid, w.pgid, w.startTime]).toEqual([-1, undefined, -1]);
    await expect(w.waitExit()).resolves.toEqual({ exitCode: 4, signal: 0 });
  });

  it('a supervisor between its claim and its pid is waited for, step by step on the clock, then adopted', async () => {
    const { query, prefix, clock } = attempt();
    // An empty claim: the supervisor has opened it (O_EXCL) and not yet written its pid.
    writeFileSync(`${prefix}.claim`, '');
    let found: unknown = 'pending';
    void findEarlierSpawn(query, never()).then((w) => (found = w));
    await clock.advance(2);
    await clock.advance(2);
    expect(found).toBe('pending');
    const workload = await sleeper();
    writeFileSync(`${prefix}.pid`, `${workload.pid}\n`);
    await clock.advance(2);
    expect((found as { pid: number }).pid).toBe(workload.pid);
  });

  it('a live supervisor that dies before the pid is none', async () => {
    const { query, prefix, clock } = attempt();
    const sup = await sleeper();
    writeFileSync(`${prefix}.claim`, `${sup.pid}\n`);
    let found: unknown = 'pending';
    void findEarlierSpawn(query, never()).then((w) => (found = w));
    await clock.advance(2);
    expect(found).toBe('pending');
    process.kill(-sup.pid, 'SIGKILL');
    for (let i = 0; i < 1000 && readProcStat(sup.pid)?.state !== undefined && readProcStat(sup.pid)?.state !== 'Z'; i++) await new Promise((r) => setTimeout(r, 5));
    await clock.advance(2);
    expect(found).toBeUndefined();
  });

  it('a supervisor that dies just after recording the pid is adopted all the same', async () => {
    const { query, prefix } = attempt();
    // Dead supervisor, pid written: the read after the liveness check finds it.
    writeFileSync(`${prefix}.claim`, `${NO_PID}\n`);
    const workload = await sleeper();
    writeFileSync(`${prefix}.pid`, `${workload.pid}\n`);
    const w = (await findEarlierSpawn(query, never()))!;
    expect(w.pid).toBe(workload.pid);
  });

  it('the wait for a claimed supervisor ends with the abort', async () => {
    const { query, prefix, clock } = attempt();
    writeFileSync(`${prefix}.claim`, '');
    const ac = new AbortController();
    const finding = findEarlierSpawn(query, ac.signal);
    await clock.advance(2);
    ac.abort(new Error('stop'));
    await expect(finding).rejects.toThrow('stop');
    expect(clock.pendingTimers).toBe(0);
    const pre = new AbortController();
    pre.abort(new Error('already'));
    await expect(findEarlierSpawn(query, pre.signal)).rejects.toThrow('already');
  });
});

describe('the supervisor execs the command itself, or setpriv switching to the task user', () => {
  it('runs the command with its arguments as they are', () => {
    expect(workloadCommand('/bin/echo', ['a b', '$HOME'], undefined)).toEqual(['/bin/echo', 'a b', '$HOME']);
  });

  it('switches real and effective ids and the groups, then execs the command', () => {
    expect(workloadCommand('./run', ['x'], { uid: 65534, gid: 65533, setpriv: '/usr/bin/setpriv' })).toEqual([
      '/usr/bin/setpriv',
      '--reuid=65534',
      '--regid=65533',
      '--init-groups',
      '--',
      './run',
      'x',
    ]);
  });
});

describe('the output pipes of a supervisor', () => {
  it('are none when it is gone and left no FIFOs', async () => {
    const { prefix } = attempt();
    expect(await openOutput({ prefix, pid: NO_PID, startTime: undefined })).toBeUndefined();
  });

  it('are none when only one FIFO is there', async () => {
    const { prefix } = attempt();
    if (spawnSync('mkfifo', [outputFifos(prefix).stdout]).status !== 0) return;
    expect(await openOutput({ prefix, pid: NO_PID, startTime: undefined })).toBeUndefined();
  });

  it('are none when the FIFOs are plain files', async () => {
    const { prefix } = attempt();
    writeFileSync(outputFifos(prefix).stdout, '');
    writeFileSync(outputFifos(prefix).stderr, '');
    expect(await openOutput({ prefix, pid: NO_PID, startTime: undefined })).toBeUndefined();
  });

  it('are its FIFOs when it is gone and left them', async () => {
    const { prefix } = attempt();
    const fifos = outputFifos(prefix);
    if (spawnSync('mkfifo', [fifos.stdout, fifos.stderr]).status !== 0) return;
    const out = (await openOutput({ prefix, pid: NO_PID, startTime: undefined }))!;
    // What flows through them is the supervisor suites' (raw-exec-supervisor.test.ts): here, that both open.
    expect(out).toBeDefined();
    expect([out.stdout.readable, out.stderr.readable]).toEqual([true, true]);
    out.stdout.destroy();
    out.stderr.destroy();
    await Promise.all([once(out.stdout, 'close'), once(out.stderr, 'close')]);
  });
});
