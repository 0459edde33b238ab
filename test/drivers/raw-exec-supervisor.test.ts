/**
 * The raw_exec supervisor script on its own, under a chosen shell: its output pipes are here-document pipes
 * where the shell makes those (no `mkfifo` process), else two FIFOs; either way the task's output reaches
 * the agent and its exit status is recorded.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
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
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const collect = (r: Readable): Promise<string> => {
  let text = '';
  r.on('data', (d: Buffer) => (text += d.toString()));
  return once(r, 'close').then(() => text);
};

/** Runs `command` under the supervisor script with `shell` as the supervisor's shell, as spawnSupervised does. */
async function supervise(shell: string, command: string[]) {
  const taskDir = mkdtempSync(join(tmpdir(), 'allocrun-supervisor-'));
  dirs.push(taskDir);
  ensurePrivateDir(taskDir);
  const prefix = attemptPrefix(taskDir, 0, 'test');
  const child = spawn(shell, ['-c', SUPERVISOR_SCRIPT, 'allocrun-supervisor', prefix, setsid!, '-', mkfifo!, 'allocrun_go', ...command], {
    cwd: taskDir,
    env: {},
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore', 'pipe'],
  });
  const exited = once(child, 'exit');
  const [reported] = (await once(child.stdio[3] as Readable, 'data')) as [Buffer];
  const pid = Number(reported.toString().trim());
  const out = openOutput({ prefix, pid: child.pid!, startTime: readProcStat(child.pid!)?.startTime });
  expect(out, 'the output pipes').toBeDefined();
  const [stdout, stderr] = [collect(out!.stdout), collect(out!.stderr)];
  child.stdin!.end('go\n');
  const [code] = (await exited) as [number | null];
  return {
    pid,
    code,
    stdout: await stdout,
    stderr: await stderr,
    status: readFileSync(`${prefix}.status`, 'utf8'),
    fifos: readdirSync(privateDir(taskDir)).filter((f) => f.endsWith('.out') || f.endsWith('.err')),
    prefix,
  };
}

describe.skipIf(!setsid || !mkfifo)('the raw_exec supervisor script', () => {
  it.skipIf(!shHereDocIsPipe)('under a shell whose here-documents are pipes, makes no FIFOs and still carries the output', async () => {
    const r = await supervise('/bin/sh', ['/bin/sh', '-c', 'echo out; echo err >&2; exit 3']);
    expect(r).toMatchObject({ code: 3, stdout: 'out\n', stderr: 'err\n', status: '3\n', fifos: [] });
  });

  it.skipIf(!bash)('under a shell whose empty here-document is not a pipe (bash), makes FIFOs and carries the output through them', async () => {
    const r = await supervise(bash!, ['/bin/sh', '-c', 'echo out; echo err >&2; exit 3']);
    expect(r).toMatchObject({ code: 3, stdout: 'out\n', stderr: 'err\n', status: '3\n' });
    expect(r.fifos.sort()).toEqual(['exec-0-test.err', 'exec-0-test.out']);
    expect(existsSync(`${r.prefix}.pid`)).toBe(true);
  });
});
