/**
 * The raw_exec supervisor script on its own, under a chosen shell: its output pipes are here-document pipes
 * where the shell makes those (no `mkfifo` process), else two FIFOs; either way the task's output reaches
 * the agent and its pid and exit status are recorded as lines of its claim (no file of their own).
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from './until.ts';
import { openOutput } from '../../src/drivers/raw-exec/launch.ts';
import { readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import { lookupBin } from '../../src/drivers/raw-exec/process.ts';
import { attemptPrefix, ensurePrivateDir, privateDir, SUPERVISOR_SCRIPT } from '../../src/drivers/raw-exec/supervisor.ts';

const TOOLS = '/usr/bin:/bin:/usr/sbin:/sbin';
const setsid = lookupBin('setsid', '/', TOOLS);
const mkfifo = lookupBin('mkfifo', '/', TOOLS);
const bash = lookupBin('bash', '/', TOOLS);
/** Whether `/bin/sh` makes an empty here-document a pipe (dash and busybox do). */
const shHereDocIsPipe = spawnSync('/bin/sh', ['-c', 'exec 5<<E\nE\n[ -p /proc/self/fd/5 ]']).status === 0;

const dirs: string[] = [];
/** Process groups a test started (the supervisor's and the workload's), SIGKILLed after it by pid. */
const groups: number[] = [];
afterEach(() => {
  for (const g of groups.splice(0)) {
    try {
      process.kill(-g, 'SIGKILL');
    } catch {
      // gone
    }
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const collect = (r: Readable): Promise<string> => {
  let text = '';
  r.on('data', (d: Buffer) => (text += d.toString()));
  return once(r, 'close').then(() => text);
};

/** Starts `command` under the supervisor script with `shell` as the supervisor's shell, as spawnSupervised does. */
async function start(shell: string, command: string[]) {
  const taskDir = mkdtempSync(join(tmpdir(), 'allocrun-supervisor-'));
  dirs.push(taskDir);
  ensurePrivateDir(taskDir);
  const prefix = attemptPrefix(taskDir, 0, 'test');
  const child = spawn(shell, ['-c', SUPERVISOR_SCRIPT, 'allocrun-supervisor', prefix, '-', mkfifo!, 'allocrun_go', setsid!, ...command], {
    cwd: taskDir,
    env: {},
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore', 'pipe'],
  });
  const exited = once(child, 'exit');
  groups.push(child.pid!);
  const [reported] = (await once(child.stdio[3] as Readable, 'data')) as [Buffer];
  const pid = Number(reported.toString().trim());
  groups.push(pid);
  return { child, exited, prefix, taskDir, pid };
}

/** Runs `command` under the supervisor script to its end, collecting its output as the agent does. */
async function supervise(shell: string, command: string[]) {
  const { child, exited, prefix, taskDir, pid } = await start(shell, command);
  const out = await openOutput({ prefix, pid: child.pid!, startTime: readProcStat(child.pid!)?.startTime });
  expect(out, 'the output pipes').toBeDefined();
  const [stdout, stderr] = [collect(out!.stdout), collect(out!.stderr)];
  child.stdin!.end('go\n');
  const [code] = (await exited) as [number | null];
  return {
    pid,
    code,
    stdout: await stdout,
    stderr: await stderr,
    claim: readFileSync(`${prefix}.claim`, 'utf8'),
    fifos: readdirSync(privateDir(taskDir)).filter((f) => f.endsWith('.out') || f.endsWith('.err')),
    supervisor: child.pid!,
  };
}

/** Field 6 of /proc/<pid>/stat, the session id, and the ignored and blocked signal masks of /proc/<pid>/status. */
function sessionAndSignals(pid: number): { session: number; ignored: string; blocked: string } {
  const session = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[3]);
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mask = (name: string) => new RegExp(`^${name}:\\s*(\\w+)$`, 'm').exec(status)![1]!;
  return { session, ignored: mask('SigIgn'), blocked: mask('SigBlk') };
}

const shells = [['/bin/sh', '/bin/sh'], ...(bash ? [['bash', bash]] : [])];

describe.skipIf(!setsid || !mkfifo)('the workload under the supervisor script', () => {
  it.each(shells)('under %s: is the pid reported, its child, leading a session and group of its own, ignoring and blocking no signal', async (_, shell) => {
    const sleep = lookupBin('sleep', '/', TOOLS)!;
    const { child, exited, prefix, pid } = await start(shell!, [sleep, '600']);
    child.stdin!.end('go\n');
    await until(() => readProcStat(pid)?.comm === 'sleep', 'the workload running sleep');
    const stat = readProcStat(pid)!;
    expect([stat.ppid, stat.pgrp]).toEqual([child.pid, pid]);
    expect(sessionAndSignals(pid)).toEqual({ session: pid, ignored: '0000000000000000', blocked: '0000000000000000' });
    expect(readFileSync(`${prefix}.claim`, 'utf8')).toBe(`${child.pid}\npid ${pid}\n`);
    process.kill(-pid, 'SIGTERM');
    expect((await exited)[0]).toBe(128 + 15);
    expect(readFileSync(`${prefix}.claim`, 'utf8')).toBe(`${child.pid}\npid ${pid}\nstatus 143\n`);
    expect(existsSync(`${prefix}.pid`) || existsSync(`${prefix}.status`)).toBe(false);
  });
});

describe.skipIf(!setsid || !mkfifo)('the raw_exec supervisor script', () => {
  it.skipIf(!shHereDocIsPipe)('under a shell whose here-documents are pipes, makes no FIFOs and still carries the output', async () => {
    const r = await supervise('/bin/sh', ['/bin/sh', '-c', 'echo out; echo err >&2; exit 3']);
    expect(r).toMatchObject({ code: 3, stdout: 'out\n', stderr: 'err\n', fifos: [] });
    expect(r.claim).toBe(`${r.supervisor}\npid ${r.pid}\nstatus 3\n`);
  });

  it.skipIf(!bash)('under a shell whose empty here-document is not a pipe (bash), makes FIFOs and carries the output through them', async () => {
    const r = await supervise(bash!, ['/bin/sh', '-c', 'echo out; echo err >&2; exit 3']);
    expect(r).toMatchObject({ code: 3, stdout: 'out\n', stderr: 'err\n', claim: `${r.supervisor}\npid ${r.pid}\nstatus 3\n` });
    expect(r.fifos.sort()).toEqual(['exec-0-test.err', 'exec-0-test.out']);
  });
});
