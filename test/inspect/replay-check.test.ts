/**
 * `replayRecording` (what `allocrun replay --check` runs) on recordings of real runs: raw_exec processes
 * that fail and restart, a prestart hook that fails once, an in-place update and a kill. Today's machines
 * fed the recorded inputs take the recorded steps; a machine with a changed restart decision is caught at
 * the exit it decides differently.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { checkRecording, divergenceReport } from '../../src/cli/replay-check.ts';
import { recordInspection } from '../../src/inspect/record.ts';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { createTaskRunner } from '../../src/runtime/create-task-runner.ts';
import { createAgent } from '../../src/runtime/create-agent.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { replayRecording } from '../../src/runtime/replay-driver.ts';
import { encodeReplayValue, type ReplayInputLine } from '../../src/inspect/replay-format.ts';
import { failingSpec, linesOf, oneRestartFewer, recordFailingRun, recordUpdatedAndKilledRun, sh, until } from './replay-runs.ts';

let dir: string;
let failing: unknown[];
let failingFile: string;
let killed: unknown[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'allocrun-replay-'));
  failingFile = await recordFailingRun(dir);
  failing = await linesOf(failingFile);
  killed = await linesOf(await recordUpdatedAndKilledRun(dir));
}, 120_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const inputs = (lines: unknown[]) => lines.filter((l): l is ReplayInputLine => (l as { kind?: string }).kind === 'replay-input');

describe('a recording holds every input that crossed into the machines', () => {
  it('has the driver results (start, wait with its exit code), the failed hook, the sleeps and the commands', () => {
    const results = inputs(failing).filter((l) => l.input === 'result');
    const exits = results.filter((l) => l.src === 'driverWait').map((l) => (l.event.output as { exitCode: number }).exitCode);
    // The first attempt fails in prestart (the hook), the next three exit 3: restarts 1 to 3, then the alloc fails.
    expect(exits).toEqual([3, 3, 3]);
    const hookError = results.find((l) => l.event.type === 'xstate.error.actor.prestart:flaky');
    expect((hookError?.event.error as Error).message).toBe('the config service is not up yet');
    expect(results.filter((l) => l.src === 'sleepUntil').length).toBeGreaterThanOrEqual(3);
    const commands = inputs(killed).filter((l) => l.input === 'command').map((l) => l.event.type);
    expect(commands).toEqual(expect.arrayContaining(['xstate.init', 'UPDATE', 'KILL']));
  });
});

describe('replay --check on recordings of real runs', () => {
  it('finds a raw_exec task that fails, restarts and fails its alloc, with a hook failing once, identical', async () => {
    const result = await replayRecording(failing);
    expect(result.divergence).toBeUndefined();
    expect(result.inputsFed).toBe(inputs(failing).length);
    expect(result.summary.clientStatuses.fail1).toBe('failed');
    const main = result.summary.taskStates['fail1/main'] as { restarts: number; events: { type: string }[] };
    expect(main.restarts).toBe(3);
    expect(main.events.map((e) => e.type)).toContain('Task hook failed');
  });

  it('finds it identical from lines as a generated test holds them (errors as { $error }, not revived)', async () => {
    const asWritten = JSON.parse(JSON.stringify(failing, encodeReplayValue)) as unknown[];
    expect(JSON.stringify(asWritten)).toContain('"$error"');
    expect((await replayRecording(asWritten)).divergence).toBeUndefined();
  });

  it('finds a task updated in place and then killed identical', async () => {
    const result = await replayRecording(killed);
    expect(result.divergence).toBeUndefined();
    expect(result.summary.clientStatuses.kill1).toBe('complete');
    expect((result.summary.taskStates['kill1/api'] as { events: { type: string }[] }).events.map((e) => e.type)).toContain('Killed');
  });

  it('reports a changed restart decision at the exit it decides differently', async () => {
    const result = await replayRecording(failing, { machines: { task: oneRestartFewer } });
    const d = result.divergence!;
    expect(d).toBeDefined();
    expect(d.actor).toBe('fail1/main');
    // The policy allows 3 restarts, the changed one 2: the failed hook takes one, the first exit the other,
    // and the second exit is decided differently, once its exited hooks are done.
    expect(d.input).toMatchObject({ input: 'result', to: 'fail1/main' });
    expect(d.input!.type).toMatch(/^xstate\.done\.actor\.exited:/);
    const waits = inputs(failing).filter((l) => l.src === 'driverWait');
    expect(d.at).toBeGreaterThanOrEqual(waits[1]!.at);
    expect(d.at).toBeLessThan(waits[2]!.at);
    expect(d.recorded).toMatch(/^xstate\.done\.actor\.exited:\S+ → pending\.restartDelay$/);
    expect(d.now).toMatch(/^xstate\.done\.actor\.exited:\S+ → terminal/);
    expect(d.took?.at(-1)).toMatchObject({ source: 'task.exited.deciding', guard: 'decided' });
  });

  it('names the machine source of the changed decision: the deciding state of machines/task-runner.ts', async () => {
    const { result } = await checkRecording(failingFile, { machines: { task: oneRestartFewer } });
    const d = result.divergence!;
    expect(d.location).toMatch(/^task\.exited\.deciding → task\.terminal \(guard decided; actions recordNotRestarting\) at machines\/task-runner\.ts:(\d+)$/);
    const line = Number(/:(\d+)$/.exec(d.location!)![1]);
    const source = (await readFile(new URL('../../machines/task-runner.ts', import.meta.url), 'utf8')).split('\n');
    expect(source[line - 1]).toMatch(/^\s*deciding: \{/);
    expect(divergenceReport(failingFile, d)).toContain(`  machine:  ${d.location}\n`);
  });

  it('refuses a malformed replay line, naming it, instead of guessing', async () => {
    const i = failing.findIndex((l) => (l as ReplayInputLine).kind === 'replay-input' && (l as ReplayInputLine).input === 'result');
    const broken = failing.map((l, j) => (j === i ? { ...(l as object), from: undefined } : l));
    await expect(replayRecording(broken)).rejects.toThrow(/^replay line \d+ \(replay-input\) needs the child it is the result of \(`from`\)$/);
  });

  it('reports a recorded result the replay is not waiting on', async () => {
    // Drop the first driver start's result: the wait that follows it has no call under way.
    const i = failing.findIndex((l) => (l as ReplayInputLine).kind === 'replay-input' && (l as ReplayInputLine).src === 'driverStart');
    const result = await replayRecording([...failing.slice(0, i), ...failing.slice(i + 1)]);
    expect(result.divergence?.message).toMatch(/not waiting on it/);
    expect(result.divergence?.actor).toBe('fail1/main');
  });
});

describe('replay --check from a checkpoint', () => {
  it('rebuilds a runner resumed from a snapshot (its running task reattached) and finds its run identical', async () => {
    const where = await mkdtemp(join(dir, 'resumed-'));
    const spec = { id: 'res1', job: 'j', group: 'g', type: 'batch' as const, tasks: [{ name: 'web', driver: 'mock', config: { run_for: '10s', exit_code: 1 } }] };
    const clock = new SimulatedClock(5_000);
    const opts = { clock, builtinHooks: false, hostEnv: {}, seed: 3, dataDir: where };
    const first = createAllocRunner(spec, opts).start();
    await clock.advanceUntil(() => first.getState().taskStates.web?.state === 'running');
    const snapshot = first.persist();
    first.send({ type: 'SHUTDOWN' });
    first.stop();
    const file = join(where, 'resumed.jsonl');
    const rec = recordInspection(file, { now: () => clock.now() });
    const resumed = createAllocRunner(spec, { ...opts, snapshot, inspect: rec.inspect, machineClock: rec.machineClock }).start();
    await clock.advanceUntil(() => resumed.getState().clientStatus === 'failed');
    resumed.stop();
    await rec.close();
    const lines = await linesOf(file);
    expect(lines.find((l) => (l as { kind?: string }).kind === 'replay-root')).toMatchObject({ id: 'res1', snapshot: expect.any(Object) });
    const result = await replayRecording(lines);
    expect(result.divergence).toBeUndefined();
    expect(result.summary.clientStatuses.res1).toBe('failed');
    expect((result.summary.taskStates['res1/web'] as { restarts: number }).restarts).toBeGreaterThan(0);
  });
});

describe('replay --check of a standalone task runner', () => {
  it('rebuilds a createTaskRunner root and finds its restarts identical', async () => {
    const where = await mkdtemp(join(dir, 'task-'));
    const clock = new SimulatedClock(0);
    const file = join(where, 'task.jsonl');
    const rec = recordInspection(file, { now: () => clock.now() });
    const runner = createTaskRunner(
      { name: 'solo', driver: 'mock', config: { run_for: '3s', exit_code: 2 }, restart: { attempts: 1, interval: 3_600_000, delay: 2_000, mode: 'fail' } },
      { clock, jobType: 'batch', seed: 9, allocDir: where, inspect: rec.inspect, machineClock: rec.machineClock },
    ).start();
    await clock.advanceUntil(() => runner.getState().state === 'dead');
    runner.stop();
    await rec.close();
    const lines = await linesOf(file);
    const root = lines.find((l) => (l as { kind?: string }).kind === 'replay-root') as { machine: string; id: string };
    expect(root.machine).toBe('task');
    const result = await replayRecording(lines);
    expect(result.divergence).toBeUndefined();
    expect(result.summary.taskStates[root.id]).toMatchObject({ state: 'dead', failed: true, restarts: 1 });
  });
});

describe('a recording of a runner not given the machine clock', () => {
  it('says so in its root line (replay --check then hints that recorded times may differ by a tick)', async () => {
    const where = await mkdtemp(join(dir, 'unpinned-'));
    const clock = new SimulatedClock(0);
    const file = join(where, 'unpinned.jsonl');
    const rec = recordInspection(file, { now: () => clock.now() });
    const runner = createTaskRunner({ name: 'solo', driver: 'mock', config: { run_for: '1s' } }, { clock, jobType: 'batch', allocDir: where, inspect: rec.inspect }).start();
    await clock.advanceUntil(() => runner.getState().state === 'dead');
    runner.stop();
    await rec.close();
    const lines = await linesOf(file);
    expect(lines.find((l) => (l as { kind?: string }).kind === 'replay-root')).toMatchObject({ pinnedClock: false });
    // A simulated clock does not tick by itself: the replay is identical all the same.
    expect((await replayRecording(lines)).divergence).toBeUndefined();
  });
});

describe("replay --check of an agent's allocations", () => {
  it('rebuilds allocations an agent restored (reattached to their live processes) and a new one, and finds them identical', async () => {
    const where = await mkdtemp(join(dir, 'agent-'));
    const svc: AllocSpec = { id: 'svc1', job: 'svc', group: 'web', type: 'service', tasks: [sh('api', 'trap "exit 0" TERM; while :; do sleep 0.05; done')] };
    const first = createAgent({ dataDir: where });
    await first.start();
    const running = first.run(svc);
    await until(running, (s) => s.taskStates.api?.state === 'running');
    await first.shutdown();

    const file = join(where, 'agent.jsonl');
    const rec = recordInspection(file);
    const second = createAgent({ dataDir: where, inspect: rec.inspect, machineClock: rec.machineClock });
    const [restored] = await second.start();
    const batch = second.run(failingSpec('batch1'));
    await until(batch, (s) => s.clientStatus === 'failed');
    restored!.send({ type: 'KILL' });
    await until(restored!, (s) => s.clientStatus === 'complete');
    await second.shutdown();
    await rec.close();

    const lines = await linesOf(file);
    const roots = lines.filter((l) => (l as { kind?: string }).kind === 'replay-root') as { id: string; snapshot?: unknown }[];
    expect(roots.map((r) => [r.id, r.snapshot !== undefined])).toEqual([['svc1', true], ['batch1', false]]);
    const result = await replayRecording(lines);
    expect(result.divergence).toBeUndefined();
    expect(result.summary.clientStatuses).toMatchObject({ svc1: 'complete', batch1: 'failed' });
  });
});
