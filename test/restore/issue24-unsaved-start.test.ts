/**
 * Issue 24: after a restore, a sidecar spawned just before the agent was SIGKILLed was left running while
 * its events ended at Killing, and the poststop task had already run. The saved snapshot predated the
 * spawn (the task still pending), so the kill took the task straight to dead without a driver call. The
 * kill of a restored pending task now checks the driver's start-attempt record first: the workload is
 * found and stopped before the task is dead, so before poststop runs. Real processes, a real SIGKILL.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { isLive, readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import type { UnsavedStartInput } from './fixtures/unsaved-start-process.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURE = fileURLToPath(new URL('./fixtures/unsaved-start-process.ts', import.meta.url));

/** Runs the fixture in `mode` to its end (or its own SIGKILL). */
function runFixture(mode: 'crash' | 'restore', input: UnsavedStartInput): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, mode, JSON.stringify(input)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

const roots: string[] = [];
const pids: number[] = [];
afterEach(() => {
  for (const pid of pids.splice(0)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function job(id: string, markers: string): AllocSpec {
  const env = { MARKERS: markers };
  const sh = (script: string) => ({ command: '/bin/sh', args: ['-c', script] });
  return {
    id,
    job: 'unsaved-start',
    group: 'g',
    type: 'service',
    tasks: [
      {
        name: 'side',
        driver: 'raw_exec',
        lifecycle: { hook: 'prestart', sidecar: true },
        env,
        killTimeout: 5_000,
        config: sh('echo $$ > "$MARKERS/side.pid"; trap "exit 0" TERM; while :; do sleep 0.05; done'),
      },
      { name: 'main', driver: 'raw_exec', env, config: sh('sleep 30') },
      {
        name: 'post',
        driver: 'raw_exec',
        lifecycle: { hook: 'poststop' },
        env,
        // What the poststop task sees of the sidecar: a live process (not a zombie) is "alive".
        config: sh('p=$(cat "$MARKERS/side.pid"); if [ -r /proc/$p/stat ] && ! grep -q "^[0-9]* (.*) [ZX] " /proc/$p/stat; then echo alive; else echo dead; fi > "$MARKERS/post.saw"'),
      },
    ],
  };
}

const live = (pid: number) => isLive(readProcStat(pid));

describe('issue 24: killing a restored task whose saved snapshot predates its spawn', () => {
  it('finds the workload through the start-attempt record and stops it before poststop runs', async () => {
    const root = mkdtempSync(join(tmpdir(), 'allocrun-unsaved-start-'));
    roots.push(root);
    const markers = join(root, 'markers');
    mkdirSync(markers);
    const input: UnsavedStartInput = { dataDir: join(root, 'data'), snapshotFile: join(root, 'snapshot.json'), spec: job('unsaved-1', markers) };

    const crashed = await runFixture('crash', input);
    expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
    const sidePid = Number(/spawned (\d+)/.exec(crashed.stdout)?.[1]);
    pids.push(sidePid);
    // The scenario holds: the sidecar outlived its agent, and the snapshot on disk has it pending.
    expect(live(sidePid)).toBe(true);
    const saved = readFileSync(input.snapshotFile, 'utf8');
    expect(saved).not.toContain('"Started"');

    const restored = await runFixture('restore', input);
    expect(restored.code, restored.stderr).toBe(0);
    const end = JSON.parse(restored.stdout.trim().split('\n').pop()!) as { events: Record<string, string[]> };

    expect(live(sidePid)).toBe(false);
    expect(existsSync(join(markers, 'post.saw'))).toBe(true);
    expect(readFileSync(join(markers, 'post.saw'), 'utf8').trim()).toBe('dead');
    // The sidecar's record does not stop at Killing: its workload's end and the kill are on it.
    expect(end.events.side!.slice(-3)).toEqual(['Killing', 'Terminated', 'Killed']);
  });
});
