/**
 * The launch's two refusals the first rule tables did not reach (launch.ts): a restoring agent waits at most
 * 5 s for a live supervisor of an earlier start that has claimed its token and not recorded the workload's
 * pid, then fails the start naming that supervisor (the wait's clock is stood in for by a spied `Date.now`, so
 * the deadline is passed in one step, not waited for); and a fresh start whose token another agent voided
 * first fails saying so (the supervisor exits CLAIM_LOST and runs nothing). Each spawn ends in milliseconds.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SpawnError } from '../../src/drivers/raw-exec/errors.ts';
import { findEarlierSpawn, spawnSupervised, type LaunchRequest } from '../../src/drivers/raw-exec/launch.ts';
import { lookupBin } from '../../src/drivers/raw-exec/process.ts';
import { attemptPrefix, ensurePrivateDir, privateDir, writeIntent } from '../../src/drivers/raw-exec/supervisor.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { leftoversRemovedAfterEach } from './raw-exec-leftovers.ts';

const TOOLS = '/usr/bin:/bin:/usr/sbin:/sbin';
const setsid = lookupBin('setsid', '/', TOOLS);
const mkfifo = lookupBin('mkfifo', '/', TOOLS);

const { dirs } = leftoversRemovedAfterEach();
afterEach(() => {
  vi.restoreAllMocks();
});

function taskDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'allocrun-launch-claim-'));
  dirs.push(d);
  return d;
}

describe('a restoring agent waits for a claimed supervisor for 5 s, no longer', () => {
  it('fails the start naming the supervisor that neither recorded the pid nor exited', async () => {
    const dir = taskDir();
    ensurePrivateDir(dir);
    writeIntent(dir, 2, 'tok');
    const prefix = attemptPrefix(dir, 2, 'tok');
    // This very process stands in for the live supervisor: it claimed the token and recorded no pid.
    writeFileSync(`${prefix}.claim`, `${process.pid}\n`);
    let now = 1_000_000;
    vi.spyOn(Date, 'now').mockImplementation(() => now);
    const clock = new SimulatedClock();
    let outcome: unknown = 'pending';
    void findEarlierSpawn({ task: 'web', taskDir: dir, attempt: 2, clock, pollMs: 100 }, new AbortController().signal).then(
      (w) => (outcome = w),
      (e: unknown) => (outcome = e),
    );
    now += 5_000; // exactly at the deadline: still waiting
    await clock.advance(2);
    expect(outcome).toBe('pending');
    now += 1;
    await clock.advance(2);
    expect(outcome).toBeInstanceOf(SpawnError);
    expect((outcome as Error).message).toBe(
      `task "web": the supervisor ${process.pid} of an earlier start (${prefix}) neither started the task nor exited`,
    );
    expect(clock.pendingTimers).toBe(0);
  });
});

describe.runIf(setsid && mkfifo)('a fresh start whose token another agent voided first', () => {
  it('runs nothing and fails saying another agent cancelled it', async () => {
    const dir = taskDir();
    const marker = join(dir, 'ran');
    const req: LaunchRequest = {
      task: 'web',
      bin: '/bin/sh',
      args: ['-c', `echo x > ${marker}`],
      cwd: dir,
      env: { PATH: TOOLS },
      taskDir: dir,
      attempt: 0,
      setsid: setsid!,
      mkfifo: mkfifo!,
      clock: new SimulatedClock(),
      pollMs: 100,
    };
    // One start to learn this agent's token base and counter: a token is the base and the counter in hex.
    const first = await spawnSupervised({ ...req, args: ['-c', 'exit 0'] }, () => undefined);
    await first.waitExit();
    first.release();
    const token = readFileSync(join(privateDir(dir), 'exec-0.intent'), 'utf8').trim();
    const base = token.slice(0, 12);
    const next = `${base}${(Number.parseInt(token.slice(12), 16) + 1).toString(16)}`;
    // The next start's token, voided before it is spawned (as a restoring agent voids an unclaimed one).
    mkdirSync(privateDir(dir), { recursive: true });
    writeFileSync(`${attemptPrefix(dir, 1, next)}.claim`, 'void\n');
    const err = await spawnSupervised({ ...req, attempt: 1 }, () => undefined).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpawnError);
    expect((err as Error).message).toBe('task "web": cannot start /bin/sh: another agent cancelled this start');
    expect(existsSync(marker)).toBe(false);
  });
});
