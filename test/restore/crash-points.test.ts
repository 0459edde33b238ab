/**
 * Kills a real agent process (SIGKILL) at chosen points of an allocation's life, starts another on the
 * same data dir, and checks what Nomad's client promises across restarts: the allocation is not lost, no
 * task starts while its previous process lives, a finished prestart or poststop task never runs again,
 * the poststop task runs exactly once, and nothing is left running at the end.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../machines/restart-tracker.ts';
import type { AllocSpec, TaskSpec } from '../../src/jobspec/types.ts';
import { FileStateStore } from '../../src/state/file-store.ts';
import type { AgentProcessInput, CrashPoint } from './fixtures/agent-process.ts';
import { bundleAgent, crashJob, leftovers, readMarkers, runAgent, scenarioDirs, supervisorPids, TASK_SH } from './harness.ts';

const lines = (path: string): string[] => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : []);

const TASKS = ['init', 'side', 'main', 'post'];
// Generous: every scenario starts several node processes, and CI boxes can be slow.
const TIMEOUT = 120_000;
let bundle: string;
let buildDir: string;
const roots: string[] = [];

beforeAll(async () => {
  buildDir = mkdtempSync(join(tmpdir(), 'allocrun-restore-build-'));
  bundle = await bundleAgent(buildDir);
}, TIMEOUT);

afterAll(() => {
  for (const d of [buildDir, ...roots]) rmSync(d, { recursive: true, force: true });
});

/**
 * Runs the job through the given kills (a crash point, or a delay after which the suite kills the
 * agent), then lets one last agent finish it, and checks every promise.
 */
async function survive(
  id: string,
  kills: (CrashPoint | number)[],
  opts: {
    mainExit?: number;
    gated?: string;
    sidecarDies?: boolean;
    afterKills?: (dataDir: string) => Promise<void>;
    /** Checks what a killed agent printed (the signals it sent before it died). */
    crashed?: (stdout: string) => void;
  } = {},
) {
  const { root, dataDir, markers } = scenarioDirs();
  roots.push(root);
  const spec = crashJob(id, markers, opts);
  const input: AgentProcessInput = { dataDir, spec };
  for (const kill of kills) {
    const exit = typeof kill === 'number' ? await runAgent(bundle, input, kill) : await runAgent(bundle, { ...input, crash: kill });
    // A crash point that the run never reached (it finished first) is a broken scenario, not a pass.
    if (typeof kill !== 'number') expect(exit.signal, `the agent died at ${JSON.stringify(kill)}\n${exit.stderr}`).toBe('SIGKILL');
    // Dying on the way to the signal (while the stop marker is written) would be another scenario.
    if (typeof kill !== 'number' && kill.at === 'after-kill-signal') expect(exit.stdout, 'the stop signal went out before the agent died').toMatch(/^signal SIGTERM sent to group \d+$/m);
    opts.crashed?.(exit.stdout);
  }
  await opts.afterKills?.(dataDir);
  if (opts.gated) writeFileSync(join(markers, `${opts.gated}.release`), '');
  const last = await runAgent(bundle, input);
  expect(last.stderr).toBe('');
  expect(last).toMatchObject({ code: 0, stdout: 'ready\nfinished\n' });

  const record = await new FileStateStore(dataDir).load(id);
  expect(record, 'the allocation record').toBeDefined();
  const states = record!.state.taskStates;
  const m = readMarkers(markers, TASKS);
  expect(m.overlaps, 'starts while the previous process lived').toEqual([]);
  expect(m.runs, 'runs per task').toEqual({ init: 1, side: 1, main: 1, post: 1 });
  expect(m.done.post, 'poststop finished exactly once').toBe(1);
  expect(m.sidecarStops, 'the sidecar was stopped once').toBe(1);
  for (const t of TASKS) {
    const types = states[t]!.events.map((e) => e.type);
    expect(types.filter((x) => x === 'Started'), `${t} Started events`).toHaveLength(1);
    expect(types, `${t} was never lost`).not.toContain('Failed Restoring Task');
    expect(states[t]!.state).toBe('dead');
  }
  expect(leftovers(m.groups, supervisorPids(dataDir, id, TASKS)), 'processes left running').toEqual([]);
  return record!;
}

/** Resolves once a supervisor in `dir` has recorded its workload's exit (a `status` line of its claim; watched, not polled). */
function statusRecorded(dir: string): Promise<void> {
  return new Promise((resolve) => {
    const watcher = watch(dir);
    const check = () => {
      if (readdirSync(dir).some((f) => f.endsWith('.claim') && /^status \d+$/m.test(readFileSync(join(dir, f), 'utf8')))) {
        watcher.close();
        resolve();
      }
    };
    watcher.on('change', check);
    check();
  });
}

describe('an agent killed at a chosen point', () => {
  const cases: [string, CrashPoint][] = [
    ['before the main task is spawned', { at: 'before-start', task: 'main' }],
    ['right after the main task is spawned', { at: 'after-start', task: 'main' }],
    ['right after the prestart task exits', { at: 'after-wait', task: 'init' }],
  ];
  it.each(cases)('%s: nothing lost, nothing started twice, poststop once', async (_name, point) => {
    const record = await survive(`c-${point.at}-${point.task}`, [point]);
    expect(record.state.clientStatus).toBe('complete');
  }, TIMEOUT);

  it('right after the stop signal reached the sidecar, before its end was saved: the sidecar ends as a kill, not a failure', async () => {
    const point: CrashPoint = { at: 'after-kill-signal', task: 'side' };
    const record = await survive('c-kill-unsaved', [point], {
      sidecarDies: true,
      // The point itself: the disk shows the sidecar running with its kill begun (the save of the main task's
      // death, which the kill waits for: kill-gate.ts) and nothing of what the signal did; and the sidecar
      // has died of that signal before the next agent starts, so only the files tell.
      afterKills: async (dataDir) => {
        const saved = (await new FileStateStore(dataDir).load('c-kill-unsaved'))!.state.taskStates.side!;
        expect(saved.state).toBe('running');
        expect(saved.events.map((e) => e.type)).toContain('Killing');
        expect(saved.events.map((e) => e.type)).not.toContain('Terminated');
        await statusRecorded(join(dataDir, 'allocs', 'c-kill-unsaved', 'side', 'private'));
      },
    });
    const side = record.state.taskStates.side!;
    // It died of the signal (143) the dead agent sent: only the stop marker says that was a kill.
    expect(side.events.find((e) => e.type === 'Terminated')).toMatchObject({ exitCode: 143, signal: 15 });
    expect(side.events.map((e) => e.type)).toContain('Killed');
    expect(side.failed).toBe(false);
    expect(record.state.clientStatus).toBe('complete');
  }, TIMEOUT);

  it('while the main task runs (held until the crash): nothing lost, nothing started twice, poststop once', async () => {
    const record = await survive('c-during-main', [{ at: 'saved', task: 'main', state: 'running' }], { gated: 'main' });
    expect(record.state.clientStatus).toBe('complete');
  }, TIMEOUT);

  it('while the poststop task runs (held until the crash): nothing lost, poststop once', async () => {
    const record = await survive('c-during-poststop', [{ at: 'saved', task: 'post', state: 'running' }], { gated: 'post' });
    expect(record.state.clientStatus).toBe('complete');
  }, TIMEOUT);

  it('at a slow save of the main task\'s death: the sidecar it stops is not signalled before that save, and is stopped once', async () => {
    // The save recording the death takes 300 ms; the sidecar's kill, which that death causes, waits for it.
    const point: CrashPoint = { at: 'saved', task: 'main', state: 'dead', holdMs: 300 };
    const record = await survive('c-failed-main-slow', [point], {
      mainExit: 1,
      crashed: (stdout) => expect(stdout, 'signals sent before the death was saved').not.toMatch(/^signal /m),
    });
    expect(record.state.clientStatus).toBe('failed');
    expect(record.state.taskStates.main!.failed).toBe(true);
  }, TIMEOUT);

  it('after the main task failed: the sidecar is killed and the poststop task runs', async () => {
    const record = await survive('c-failed-main', [{ at: 'saved', task: 'main', state: 'dead' }], { mainExit: 1 });
    expect(record.state.clientStatus).toBe('failed');
    expect(record.state.taskStates.main!.failed).toBe(true);
  }, TIMEOUT);
});

describe('an agent killed at random points', () => {
  // 12 scenarios of 3 kills each: 36 random points, replayable from the seed.
  const SEED = 20261123;
  const rng = mulberry32(SEED);
  // Counted from the agent's "ready": the job's life is about a second (prestart 0.1 s, main 0.4 s,
  // sidecar stop 0.2 s, poststop 0.2 s, plus the agent's own work).
  const scenarios = Array.from({ length: 12 }, (_, i) => ({ i, delays: [0, 1, 2].map(() => Math.round(rng.next() * 1_200)) }));
  it.each(scenarios)('scenario $i (seed 20261123), kills after $delays ms', async ({ i, delays }) => {
    await survive(`r-${i}`, delays);
  }, TIMEOUT);
});

describe("an embedder's KILL the agent died in", () => {
  /** Two main tasks that run until stopped (their TERM trap: `stopSeconds`, 0.2 s by default, a line in NAME.stopped, exit 0). */
  function twoTaskJob(id: string, markers: string, stopSeconds?: number): AllocSpec {
    const env = { MARKERS: markers, ...(stopSeconds !== undefined && { STOP_SECONDS: String(stopSeconds) }) };
    const task = (name: string): TaskSpec => ({ name, driver: 'raw_exec', config: { command: '/bin/sh', args: [TASK_SH, name, '0', '0', 'sidecar'] }, killSignal: 'SIGTERM', killTimeout: 5_000, env });
    return { id, job: 'crash', group: 'g', type: 'service', restart: { attempts: 0, interval: 60_000, delay: 0, mode: 'fail' }, tasks: [task('a'), task('b')] };
  }

  /** The agent dies at `crash` in an embedder's KILL; the next one must end the allocation, every task once. */
  async function killSurvives(id: string, crash: CrashPoint, stopSeconds?: number) {
    const { root, dataDir, markers } = scenarioDirs();
    roots.push(root);
    const input: AgentProcessInput = { dataDir, spec: twoTaskJob(id, markers, stopSeconds) };
    const tasks = ['a', 'b'];
    try {
      const crashed = await runAgent(bundle, { ...input, crash });
      expect(crashed.signal, `the agent died at the kill's first signal\n${crashed.stderr}`).toBe('SIGKILL');
      expect(crashed.stdout, 'the stop signal went out before the agent died').toMatch(/^signal (15|SIGTERM) sent to group \d+$/m);
      // The point itself: the disk says running, with no kill, for both tasks.
      const saved = (await new FileStateStore(dataDir).load(id))!.state.taskStates;
      for (const t of tasks) {
        expect(saved[t]!.state, `${t} saved running`).toBe('running');
        expect(saved[t]!.events.map((e) => e.type), `${t} saved with no kill`).not.toContain('Killing');
      }
      // The restored agent must end it on its own; one left running would hold it for good (SIGKILLed then).
      const last = await runAgent(bundle, input, 20_000);
      expect(last.stderr, 'the restore says why it kills').toMatch(
        new RegExp(`^allocrun agent: allocation ${id}: task "[ab]" was being killed when the last agent stopped, and its record does not say so: killing the allocation again\\n$`),
      );
      expect(last, 'the restored agent finished the killed allocation').toMatchObject({ code: 0, stdout: 'ready\nfinished\n' });

      const record = (await new FileStateStore(dataDir).load(id))!;
      const m = readMarkers(markers, tasks);
      expect(m.runs, 'runs per task: none restarted').toEqual({ a: 1, b: 1 });
      expect(m.overlaps).toEqual([]);
      for (const t of tasks) {
        const ts = record.state.taskStates[t]!;
        expect(ts.state, `${t} dead`).toBe('dead');
        expect(ts.failed, `${t} killed, not failed`).toBe(false);
        expect(ts.events.map((e) => e.type), `${t} killed`).toContain('Killed');
        expect(lines(join(markers, `${t}.stopped`)), `${t} stopped once`).toHaveLength(1);
      }
      expect(record.state.clientStatus).toBe('complete');
      expect(leftovers(m.groups, supervisorPids(dataDir, id, tasks)), 'processes left running').toEqual([]);
    } finally {
      // A failed run leaves the unkilled task behind: its group and supervisor go by their pids.
      const m = readMarkers(markers, tasks);
      for (const g of m.groups) try { process.kill(-g, 'SIGKILL'); } catch { /* gone */ }
      for (const p of supervisorPids(dataDir, id, tasks)) try { process.kill(p, 'SIGKILL'); } catch { /* gone */ }
    }
  }

  it('right after the first stop signal, before the Killing save: the restored agent ends the allocation, every task once', async () => {
    await killSurvives('c-embedder-kill', { at: 'embedder-kill-signal' });
  }, TIMEOUT);

  it('while its Killing save waits for the exits (the stop markers its only record): the restored agent ends the allocation, every task once', async () => {
    // The tasks' stop traps take 0.6 s, more than the 100 ms the agent lives after the first signal.
    await killSurvives('c-embedder-kill-waiting', { at: 'embedder-kill-waiting' }, 0.6);
  }, TIMEOUT);
});
