/**
 * The last resort (src/runtime/last-resort.ts) in a real process: errors a hook or driver leaves behind,
 * where no call can catch them, are recorded on the task they came from and the process lives on; the
 * same process without it dies of the first one. See fixtures/last-resort-process.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../src/jobspec/types.ts';
import { processRunning } from '../api/agent-process.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURE = fileURLToPath(new URL('./fixtures/last-resort-process.ts', import.meta.url));

interface Run {
  child: ChildProcess;
  /** Resolves with the step's JSON line once printed; rejects if the process ends first. */
  step(name: string): Promise<Record<string, unknown>>;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

function run(...args: string[]): Run {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  const step = (name: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const look = () => {
        const line = out.split('\n').find((l) => l.startsWith(`{"step":"${name}"`));
        if (line) return resolve(JSON.parse(line) as Record<string, unknown>);
        if (child.exitCode !== null || child.signalCode !== null) return reject(new Error(`the process ended before step ${name}:\n${err}`));
        child.stdout!.once('data', look);
      };
      child.once('close', look);
      look();
    });
  return { child, step, stderr: () => err, exited };
}


describe('the last resort', () => {
  it('records every error a hook or driver leaves behind on its task, naming the hook or driver, and the process lives on', async () => {
    const r = run();
    const done = await r.step('done');
    expect(processRunning(r.child.pid!)).toBe(true);
    const events = done.events as TaskEvent[];
    const unexpected = events.filter((e) => e.details?.unexpected === 'true').map((e) => [e.type, e.message]);
    expect(unexpected).toEqual(
      expect.arrayContaining([
        ['Task hook failed', expect.stringMatching(/^prerun hook "leaky-prerun" failed unexpectedly .*rejection left behind by the prerun hook$/)],
        ['Task hook failed', expect.stringMatching(/^prestart hook "leaky-prestart" failed unexpectedly .*timer thrown after the prestart hook returned$/)],
        ['Task hook failed', expect.stringMatching(/^poststart hook "leaky-poststart" failed unexpectedly .*rejection left behind by the poststart hook$/)],
        ['Driver Failure', expect.stringMatching(/^start driver "leaky" failed unexpectedly .*rejection left behind by the driver start$/)],
        ['Driver Failure', expect.stringMatching(/^shutdown driver "leaky" failed unexpectedly .*error event nobody listened to in the driver shutdown$/)],
      ]),
    );
    expect(unexpected).toHaveLength(5);
    // The task still ran its course: killed, and dead.
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['Started', 'Killing', 'Killed']));
    r.child.stdin!.end();
    expect(await r.exited).toEqual({ code: 0, signal: null });
  });

  it('logs each error on stderr with the task it came from, and one from outside any task without one', async () => {
    const r = run();
    await r.step('done');
    r.child.stdin!.end();
    await r.exited;
    expect(r.stderr()).toContain('allocrun: unhandled rejection in poststart hook "leaky-poststart" of task "web" of allocation last-resort-1, the agent carries on: Error: rejection left behind by the poststart hook');
    expect(r.stderr()).toContain('allocrun: uncaught exception in shutdown driver "leaky" of task "web" of allocation last-resort-1');
    expect(r.stderr()).toContain('allocrun: uncaught exception, the agent carries on: Error: thrown outside any task');
  });

  it('without it, the same process dies of the first error left behind', async () => {
    const r = run('--without');
    await expect(r.step('done')).rejects.toThrow(/ended before step done/);
    const { code } = await r.exited;
    expect(code).not.toBe(0);
    expect(r.stderr()).toMatch(/rejection left behind by the prerun hook|timer thrown after the prestart hook returned/);
  });
});
