/**
 * The crash suite's tools: the agent built into one file (so each of the many agent processes starts in
 * a fraction of a second), a runner that starts it and SIGKILLs it, the job it runs, and readers for the
 * marker files its tasks write and for the processes they leave behind.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { isLive, readProcStat } from '../../src/drivers/raw-exec/proc-stat.ts';
import type { AllocSpec, TaskSpec } from '../../src/jobspec/types.ts';
import type { AgentProcessInput } from './fixtures/agent-process.ts';

const here = dirname(fileURLToPath(import.meta.url));
export const TASK_SH = join(here, 'fixtures', 'task.sh');

/** Bundles fixtures/agent-process.ts into `dir`; returns the file to run with node. */
export async function bundleAgent(dir: string): Promise<string> {
  const outfile = join(dir, 'agent-process.mjs');
  await build({
    entryPoints: [join(here, 'fixtures', 'agent-process.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    logLevel: 'error',
    // Bundled CommonJS dependencies call require().
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  });
  return outfile;
}

export interface AgentExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs one agent process to its end; with `killAfterMs` the suite SIGKILLs it that long after the agent
 * said it was ready (restored, and the job submitted), if it is still alive.
 */
export function runAgent(bundle: string, input: AgentProcessInput, killAfterMs?: number): Promise<AgentExit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bundle, JSON.stringify(input)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timer: NodeJS.Timeout | undefined;
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (killAfterMs !== undefined && timer === undefined && stdout.includes('ready\n')) timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** A fresh data dir and markers dir for one scenario. */
export function scenarioDirs(): { root: string; dataDir: string; markers: string } {
  const root = mkdtempSync(join(tmpdir(), 'allocrun-restore-'));
  const markers = join(root, 'markers');
  mkdirSync(markers);
  return { root, dataDir: join(root, 'data'), markers };
}

function task(name: string, args: string[], extra: Partial<TaskSpec> = {}): TaskSpec {
  return { name, driver: 'raw_exec', config: { command: '/bin/sh', args: [TASK_SH, name, ...args] }, killSignal: 'SIGTERM', killTimeout: 5_000, ...extra };
}

/**
 * The job every scenario runs: a prestart task, a prestart sidecar, the main task and a poststop task.
 * `mainExit` 1 makes the main task fail (no restarts), so the allocation fails while the sidecar still
 * runs and the poststop task has yet to run. `gated` names a task (main or post) held until released.
 * `sidecarDies`: the sidecar ends by the stop signal (143) instead of exiting 0 from its trap.
 */
export function crashJob(id: string, markers: string, opts: { mainExit?: number; gated?: string; sidecarDies?: boolean } = {}): AllocSpec {
  const env = { MARKERS: markers };
  const gate = (name: string) => (opts.gated === name ? ['gated'] : []);
  return {
    id,
    job: 'crash',
    group: 'g',
    type: 'batch',
    restart: { attempts: 0, interval: 60_000, delay: 0, mode: 'fail' },
    tasks: [
      task('init', ['0.1', '0'], { lifecycle: { hook: 'prestart' }, env }),
      task('side', ['0', '0', opts.sidecarDies ? 'sidecar-dies' : 'sidecar'], { lifecycle: { hook: 'prestart', sidecar: true }, env }),
      task('main', ['0.4', String(opts.mainExit ?? 0), ...gate('main')], { env }),
      task('post', ['0.2', '0', ...gate('post')], { lifecycle: { hook: 'poststop' }, env }),
    ],
  };
}

const lines = (path: string): string[] => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : []);

/** What the tasks' marker files say. */
export function readMarkers(markers: string, tasks: string[]) {
  const runs: Record<string, number> = {};
  const done: Record<string, number> = {};
  const groups: number[] = [];
  for (const t of tasks) {
    const r = lines(join(markers, `${t}.runs`));
    runs[t] = r.length;
    done[t] = lines(join(markers, `${t}.done`)).length;
    groups.push(...r.map((l) => Number(l.split(' ')[0])));
  }
  return { runs, done, groups, overlaps: lines(join(markers, 'overlaps')), sidecarStops: lines(join(markers, 'side.stopped')).length };
}

/** The supervisor pids an agent recorded for the allocation's tasks (their `.claim` files). */
export function supervisorPids(dataDir: string, allocId: string, tasks: string[]): number[] {
  const pids: number[] = [];
  for (const t of tasks) {
    const dir = join(dataDir, 'allocs', allocId, t, 'private');
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.claim'))) {
      // Its first line (the supervisor's pid; the workload's pid and status follow).
      const pid = Number(readFileSync(join(dir, f), 'utf8').split('\n', 1)[0]);
      if (pid > 1) pids.push(pid);
    }
  }
  return pids;
}

/**
 * Live processes left behind: any member of a task's process group, or a supervisor. PID 1 here may not
 * reap orphans, so a zombie (state Z) counts as dead.
 */
export function leftovers(groups: number[], supervisors: number[]): string[] {
  const wanted = new Set(groups);
  const found: string[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readProcStat(Number(name));
    if (!isLive(stat)) continue;
    if (wanted.has(stat.pgrp)) found.push(`${stat.pid} (${stat.comm}) in task group ${stat.pgrp}`);
    else if (supervisors.includes(stat.pid)) found.push(`${stat.pid} (${stat.comm}), a supervisor`);
  }
  return found;
}

