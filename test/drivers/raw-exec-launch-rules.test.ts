/**
 * A supervised start's failures (launch.ts `spawnSupervised`), each by its message: a spawn refused at once
 * (invalid arguments), a supervisor that cannot start (its working directory gone), one that exits before
 * the workload starts; and what a start leaves on file (the intent, the attempt's files, older attempts
 * pruned). Each supervisor here runs for milliseconds.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SpawnError } from '../../src/drivers/raw-exec/errors.ts';
import { notStartedBecause, spawnSupervised, type LaunchRequest } from '../../src/drivers/raw-exec/launch.ts';
import { lookupBin } from '../../src/drivers/raw-exec/process.ts';
import { privateDir } from '../../src/drivers/raw-exec/supervisor.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { until } from './until.ts';

const TOOLS = '/usr/bin:/bin:/usr/sbin:/sbin';
const setsid = lookupBin('setsid', '/', TOOLS);
const mkfifo = lookupBin('mkfifo', '/', TOOLS);

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function request(extra: Partial<LaunchRequest> = {}): LaunchRequest {
  const taskDir = mkdtempSync(join(tmpdir(), 'allocrun-launch-'));
  dirs.push(taskDir);
  return {
    task: 'web',
    bin: '/bin/sh',
    args: ['-c', 'exit 3'],
    cwd: taskDir,
    env: { PATH: TOOLS },
    taskDir,
    attempt: 0,
    setsid: setsid!,
    mkfifo: mkfifo!,
    clock: new SimulatedClock(),
    pollMs: 100,
    ...extra,
  };
}

async function failure(req: LaunchRequest): Promise<SpawnError> {
  const err = await spawnSupervised(req, () => undefined).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(SpawnError);
  return err as SpawnError;
}

describe.runIf(setsid && mkfifo)('a supervised start', () => {
  it('refused at once for invalid arguments names the command', async () => {
    const err = await failure(request({ bin: '/bin/echo', args: ['a\0b'] }));
    expect(err.message).toMatch(/^task "web": cannot spawn \/bin\/echo: /);
  });

  it('whose supervisor cannot start says so, naming /bin/sh', async () => {
    const req = request();
    const err = await failure({ ...req, cwd: join(req.taskDir, 'gone') });
    expect(err.message).toMatch(/^task "web": cannot start the raw_exec supervisor \(\/bin\/sh\): /);
  });

  it.each([
    [125, 'another agent cancelled this start'],
    [124, 'cannot create its output pipes in /p/exec-0-t'],
    [126, 'the supervisor exited with status 126 before starting it'],
    [null, 'the supervisor exited with status null before starting it'],
  ])('whose supervisor exits with %j before the workload starts says why: %s', (code, why) => {
    expect(notStartedBecause(code, '/p/exec-0-t')).toBe(why);
  });

  it('whose setsid has gone since the driver found it starts, and the task exits 127 with the reason on its stderr', async () => {
    let err = '';
    const w = await spawnSupervised(request({ setsid: '/nonexistent/setsid' }), (out) => out.stderr.on('data', (d: Buffer) => (err += d.toString())));
    expect(await w.waitExit()).toEqual({ exitCode: 127, signal: 0 });
    await until(() => err.includes('/nonexistent/setsid'), 'the reason on stderr');
    w.release();
  });

  it('records its token as the attempt\'s intent, and its files under that token', async () => {
    const req = request({ attempt: 4 });
    const w = await spawnSupervised(req, () => undefined);
    expect(await w.waitExit()).toEqual({ exitCode: 3, signal: 0 });
    const token = readFileSync(join(privateDir(req.taskDir), 'exec-4.intent'), 'utf8').trim();
    expect(token).toMatch(/^[0-9a-f]{13,}$/);
    expect(w.supervisor!.prefix).toBe(join(privateDir(req.taskDir), `exec-4-${token}`));
    expect(readFileSync(`${w.supervisor!.prefix}.claim`, 'utf8')).toBe(`${w.supervisor!.pid}\npid ${w.pid}\nstatus 3\n`);
    w.release();
  });

  it('leaves two files per start and exit: the intent and the claim, which holds the pid and the status', async () => {
    const req = request({ attempt: 0 });
    const w = await spawnSupervised(req, () => undefined);
    await w.waitExit();
    const token = readFileSync(join(privateDir(req.taskDir), 'exec-0.intent'), 'utf8').trim();
    // And the output FIFOs, under a shell whose here-documents are not pipes (SUPERVISOR_SCRIPT).
    const files = readdirSync(privateDir(req.taskDir)).filter((f) => !/\.(out|err)$/.test(f));
    expect(files.sort()).toEqual([`exec-0-${token}.claim`, 'exec-0.intent']);
    w.release();
  });

  it('gives every start a token of its own', async () => {
    const req = request({ args: ['-c', 'exit 0'] });
    const a = await spawnSupervised(req, () => undefined);
    const b = await spawnSupervised(req, () => undefined);
    expect(a.supervisor!.prefix).not.toBe(b.supervisor!.prefix);
    await Promise.all([a.waitExit(), b.waitExit()]);
    a.release();
    b.release();
  });

  it('without an attempt records no intent and prunes nothing', async () => {
    const req = request({ attempt: undefined, args: ['-c', 'exit 0'] });
    mkdirSync(privateDir(req.taskDir), { recursive: true });
    writeFileSync(join(privateDir(req.taskDir), 'exec-0-old.status'), '0\n');
    const w = await spawnSupervised(req, () => undefined);
    await w.waitExit();
    expect(w.supervisor!.prefix).toMatch(/\/exec-x-[0-9a-f]+$/);
    expect(readdirSync(privateDir(req.taskDir)).filter((n) => n.endsWith('.intent'))).toEqual([]);
    expect(existsSync(join(privateDir(req.taskDir), 'exec-0-old.status'))).toBe(true);
    w.release();
  });

  it('prunes the files of attempts more than 8 behind it', async () => {
    const req = request({ attempt: 10, args: ['-c', 'exit 0'] });
    mkdirSync(privateDir(req.taskDir), { recursive: true });
    for (const n of ['exec-1-a.status', 'exec-2-b.status']) writeFileSync(join(privateDir(req.taskDir), n), '0\n');
    const w = await spawnSupervised(req, () => undefined);
    await w.waitExit();
    expect(existsSync(join(privateDir(req.taskDir), 'exec-1-a.status'))).toBe(false);
    expect(existsSync(join(privateDir(req.taskDir), 'exec-2-b.status'))).toBe(true);
    w.release();
  });

  it.each([
    [{ PATH: TOOLS, X: 'y', PWD: '/given' }, [`PATH=${TOOLS}`, 'PWD=/given', 'X=y']],
    [{ PATH: TOOLS, X: 'y' }, [`PATH=${TOOLS}`, 'X=y']],
  ])('hands the output pipes over before the workload runs, which sees exactly its env %j', async (env, lines) => {
    const env_ = lookupBin('env', '/', TOOLS)!;
    const req = request({ bin: env_, args: [], env });
    let text = '';
    let handed = false;
    const w = await spawnSupervised(req, (out) => {
      handed = true;
      out.stdout.on('data', (d: Buffer) => (text += d.toString()));
    });
    expect(handed).toBe(true);
    await w.waitExit();
    for (let i = 0; i < 400 && text.split('\n').length <= lines.length; i++) await new Promise((r) => setTimeout(r, 5));
    expect(text.trim().split('\n').sort()).toEqual(lines);
    w.release();
  });
});
