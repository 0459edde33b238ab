/**
 * A supervisor started by an earlier agent version, with one of the previous scripts, is found and read by
 * this agent as its own: fixtures/supervisor-script-v1.sh (setsid, then an inner sh that reports its pid and
 * execs the task) and -v2.sh (the workload a subshell of the supervisor), both of which wrote the workload's
 * pid and status to `.pid` and `.status` files of their own, where this script appends them to its claim.
 * The workload is adopted with its start time, its output pipes are read again, a kill reaches it (its stop
 * marker read back as a kill), and its status is read from the file its supervisor wrote.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findEarlierSpawn, openOutput } from '../../src/drivers/raw-exec/launch.ts';
import { readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import { lookupBin } from '../../src/drivers/raw-exec/process.ts';
import { attemptPrefix, ensurePrivateDir, markStopping, writeIntent } from '../../src/drivers/raw-exec/supervisor.ts';
import { realClock } from '../../src/drivers/clock.ts';
import { leftoversRemovedAfterEach } from './raw-exec-leftovers.ts';
import { until } from './until.ts';

const TOOLS = '/usr/bin:/bin:/usr/sbin:/sbin';
const setsid = lookupBin('setsid', '/', TOOLS);
const mkfifo = lookupBin('mkfifo', '/', TOOLS);
const fixture = (name: string) => readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'fixtures', name), 'utf8');
/** Each previous script, and its arguments in the order the agent of its time passed them. */
const scripts: [string, string, (prefix: string) => string[]][] = [
  ['v1', fixture('supervisor-script-v1.sh'), (prefix) => [prefix, setsid!, '-', mkfifo!, 'allocrun_go']],
  ['v2', fixture('supervisor-script-v2.sh'), (prefix) => [prefix, '-', mkfifo!, 'allocrun_go', setsid!]],
];
const { dirs, children } = leftoversRemovedAfterEach();

describe.runIf(setsid && mkfifo)('a supervisor of a previous script version', () => {
  it.each(scripts)('(%s) is adopted by this agent: pid and start time, output, a kill, the recorded status', async (_version, script, args) => {
    const taskDir = mkdtempSync(join(tmpdir(), 'allocrun-older-supervisor-'));
    dirs.push(taskDir);
    ensurePrivateDir(taskDir);
    writeIntent(taskDir, 1, 'tok');
    const prefix = attemptPrefix(taskDir, 1, 'tok');
    // As the earlier agent spawned it (its argument order), then gone: its go pipe closed after the go.
    const task = ['/bin/sh', '-c', 'echo before the restart; exec sleep 600'];
    const sup = spawn('/bin/sh', ['-c', script, 'allocrun-supervisor', ...args(prefix), ...task], {
      cwd: taskDir,
      env: { PATH: TOOLS },
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore', 'pipe'],
    });
    children.push(sup);
    const [reported] = (await once(sup.stdio[3] as Readable, 'data')) as [Buffer];
    const pid = Number(reported.toString().trim());
    sup.stdin!.end('go\n');
    await until(() => readProcStat(pid)?.comm === 'sleep', 'the task running');
    sup.stdio[3]!.destroy();
    sup.unref();

    const w = (await findEarlierSpawn({ task: 'web', taskDir, attempt: 1, clock: realClock, pollMs: 20 }, new AbortController().signal))!;
    expect([w.pid, w.startTime, w.supervisor?.pid]).toEqual([pid, readProcStat(pid)!.startTime, sup.pid]);
    const out = (await openOutput(w.supervisor!))!;
    let text = '';
    out.stdout.on('data', (d: Buffer) => (text += d.toString()));
    await until(() => text === 'before the restart\n', 'the output written before the restart');
    await markStopping(prefix);
    expect(w.signalAll(15)).toBe(true);
    expect(await w.waitExit()).toEqual({ exitCode: 143, signal: 15, stoppedByAgent: true });
    expect(readFileSync(`${prefix}.status`, 'utf8')).toBe('143\n');
    expect(readFileSync(`${prefix}.claim`, 'utf8')).toBe(`${sup.pid}\n`);
    out.stdout.destroy();
    out.stderr.destroy();
  });
});
