/**
 * The alloc runner's checks record (machines/alloc-checks.ts): CHECK_STATUS and CHECKS_REMOVED are heard in
 * prerun, running and postrun, where checks can run, and ignored from terminal on and while detaching.
 * Driven by events sent to the actor on a SimulatedClock, with alloc hooks held open by gates.
 */
import { describe, expect, it } from 'vitest';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { CHECK_OUTPUT_LIMIT, checkOutputOf, nextChecks } from '../../machines/alloc-checks.ts';
import type { AllocRunnerEvent } from '../../machines/alloc-runner-types.ts';
import type { AllocSpec, TaskSpec } from '../../machines/model.ts';
import { recordingAllocHook, type HookCall } from '../../src/testing/hook-recorder.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

const noRestart = { attempts: 0, interval: 3_600_000, delay: 1_000, mode: 'fail' as const };
const task = (name: string, config: Record<string, unknown>): TaskSpec => ({ name, driver: 'mock', config, restart: noRestart });
const alloc = (tasks: TaskSpec[]): AllocSpec => ({ id: 'a1', job: 'example', group: 'web', type: 'service', tasks });

function gate() {
  let open!: () => void;
  const p = new Promise<void>((r) => (open = r));
  return { wait: () => p, open: () => open() };
}

const status = (id: string, s: string, extra: { task?: string; output?: string; time?: number } = {}): AllocRunnerEvent => ({
  type: 'CHECK_STATUS',
  check: { id, name: `check-${id}`, service: 'web', status: s, output: extra.output ?? `said ${s}`, time: extra.time ?? 0, ...(extra.task !== undefined && { task: extra.task }) },
});

function setup(spec: AllocSpec, impl: Parameters<typeof recordingAllocHook>[2] = {}) {
  const clock = new SimulatedClock(0);
  const log: HookCall[] = [];
  const runner = createAllocRunner(spec, { clock, seed: 3, builtinHooks: false, allocHooks: [recordingAllocHook('rec', log, impl)] }).start();
  const checks = () => runner.actor.getSnapshot().context.checks;
  // The top-level state: hook phases are compound (`{ prerun: … }`).
  const value = () => {
    const v = runner.actor.getSnapshot().value;
    return typeof v === 'string' ? v : Object.keys(v)[0];
  };
  return { clock, runner, checks, value };
}

describe('the checks record', () => {
  it('is absent until a check reports, then holds the latest status of each check by ID', () => {
    expect(nextChecks({}, { type: 'KILL' })).toBeUndefined();
    const one = nextChecks({}, status('c1', 'pending', { task: 'server' }));
    expect(one).toEqual({ c1: { name: 'check-c1', service: 'web', task: 'server', status: 'pending', output: 'said pending', time: 0 } });
    const two = nextChecks({ checks: one }, status('c1', 'failure', { task: 'server', time: 5 }));
    expect(two!.c1).toMatchObject({ status: 'failure', time: 5 });
    // A group check has no task.
    expect(nextChecks({ checks: two }, status('g', 'success'))!.g).not.toHaveProperty('task');
    // Removing unknown checks leaves the record as it was (no new object, no context change).
    expect(nextChecks({ checks: two }, { type: 'CHECKS_REMOVED', ids: ['nope'] })).toBe(two);
    expect(nextChecks({ checks: two }, { type: 'CHECKS_REMOVED', ids: ['c1'] })).toEqual({});
  });

  it('cuts the output to CHECK_OUTPUT_LIMIT characters', () => {
    const long = 'x'.repeat(5_000);
    expect(checkOutputOf(long)).toHaveLength(CHECK_OUTPUT_LIMIT);
    expect(checkOutputOf(long).endsWith('…')).toBe(true);
    expect(checkOutputOf('short')).toBe('short');
    expect(nextChecks({}, status('c1', 'failure', { output: long }))!.c1!.output).toHaveLength(CHECK_OUTPUT_LIMIT);
  });
});

describe('CHECK_STATUS and CHECKS_REMOVED per state', () => {
  it('are heard during prerun and while running', async () => {
    const g = gate();
    const r = setup(alloc([task('main', { run_for: '1h' })]), { prerun: g.wait });
    await r.clock.advance(1);
    expect(r.value()).toBe('prerun');
    r.runner.send(status('c1', 'pending') as never);
    expect(r.checks()).toEqual({ c1: expect.objectContaining({ status: 'pending' }) });
    g.open();
    await r.clock.advanceUntil(() => r.runner.getState().taskStates.main!.state === 'running', 10_000);
    expect(r.value()).toBe('running');
    r.runner.send(status('c1', 'success', { time: r.clock.now() }) as never);
    r.runner.send(status('c2', 'failure') as never);
    expect(r.checks()).toMatchObject({ c1: { status: 'success', time: r.clock.now() }, c2: { status: 'failure' } });
    r.runner.send({ type: 'CHECKS_REMOVED', ids: ['c2'] } as never);
    expect(Object.keys(r.checks()!)).toEqual(['c1']);
    r.runner.stop();
  });

  it('are heard in postrun, until its hooks stop the checks; ignored once terminal and destroyed', async () => {
    const g = gate();
    const r = setup(alloc([task('main', { run_for: '1s' })]), { postrun: g.wait });
    await r.clock.advanceUntil(() => r.value() === 'postrun', 10_000);
    r.runner.send(status('c1', 'failure') as never);
    expect(r.checks()).toMatchObject({ c1: { status: 'failure' } });
    g.open();
    await r.clock.advanceUntil(() => r.value() === 'terminal', 10_000);
    const before = r.checks();
    r.runner.send(status('c1', 'success') as never);
    r.runner.send({ type: 'CHECKS_REMOVED', ids: ['c1'] } as never);
    expect(r.checks()).toBe(before);
    r.runner.send({ type: 'DESTROY' });
    await r.clock.advanceUntil(() => r.value() === 'destroyed', 10_000);
    r.runner.send(status('c9', 'success') as never);
    expect(r.checks()).toEqual({ c1: expect.objectContaining({ status: 'failure' }) });
  });

  it('are ignored while detaching and once detached', async () => {
    const g = gate();
    const r = setup(alloc([task('main', { run_for: '1h' })]), { shutdown: g.wait });
    await r.clock.advanceUntil(() => r.runner.getState().taskStates.main!.state === 'running', 10_000);
    r.runner.send(status('c1', 'success') as never);
    r.runner.send({ type: 'SHUTDOWN' });
    await r.clock.advanceUntil(() => r.value() === 'detaching', 10_000);
    r.runner.send(status('c1', 'failure') as never);
    expect(r.checks()).toMatchObject({ c1: { status: 'success' } });
    g.open();
    await r.clock.advanceUntil(() => r.value() === 'detached', 10_000);
    r.runner.send(status('c1', 'failure') as never);
    expect(r.checks()).toMatchObject({ c1: { status: 'success' } });
  });
});
