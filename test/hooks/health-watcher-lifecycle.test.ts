/**
 * The health_watcher's lifecycle (Nomad's health_hook.go), on the hook itself with the simulated clock:
 * manual health watches nothing; prerun subscribes once and never after a verdict; a verdict is reported
 * once and ends the subscription, even when the first state already decides it; postrun, shutdown,
 * destroy and an update that stops the allocation end the watch without a verdict, while any other update
 * keeps it; so does a stop the runner heard before the hook's update ran (a task death or a timer is then the
 * stop's); a task that goes back to pending stops the min_healthy_time wait.
 */
import { describe, expect, it } from 'vitest';
import { healthHook, type HealthReport, type UpdateStrategy } from '../../src/hooks/health-hook.ts';
import type { AllocSpec, AllocState, TaskSpec, TaskState } from '../../src/jobspec/types.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

const main: TaskSpec = { name: 'main', driver: 'mock', config: {} };
const UPDATE: UpdateStrategy = { minHealthyTime: 10_000, healthyDeadline: 300_000 };
const running = (startedAt: number): AllocState => ({ clientStatus: 'running', taskStates: { main: { state: 'running', failed: false, restarts: 0, events: [], startedAt } as TaskState } });
const pending: AllocState = { clientStatus: 'pending', taskStates: { main: { state: 'pending', failed: false, restarts: 0, events: [] } } };
const failed: AllocState = { clientStatus: 'failed', taskStates: { main: { state: 'dead', failed: true, restarts: 0, events: [], startedAt: 1, finishedAt: 2 } } };
const spec = (desiredStatus?: AllocSpec['desiredStatus']): AllocSpec => ({ id: 'a', job: 'j', group: 'g', type: 'service', tasks: [main], ...(desiredStatus && { desiredStatus }) });

/** The hook with a watch whose listeners the test feeds, and what it reported. */
function watcher(first: AllocState, update: UpdateStrategy = UPDATE) {
  const clock = new SimulatedClock();
  const listeners = new Set<(s: AllocState) => void>();
  let watches = 0;
  const reports: HealthReport[] = [];
  // What the runner last heard from the server; `told` changes it without any update hook having run.
  let latest = spec();
  const hook = healthHook({
    update,
    tasks: [main],
    clock,
    latestAlloc: () => latest,
    watch: (l) => {
      watches++;
      listeners.add(l);
      l(first);
      return () => listeners.delete(l);
    },
    report: (r) => reports.push(r),
  });
  const push = (s: AllocState) => [...listeners].forEach((l) => l(s));
  const signal = new AbortController().signal;
  const told = (desiredStatus: AllocSpec['desiredStatus']) => (latest = spec(desiredStatus));
  return { clock, hook, push, reports, listeners, watches: () => watches, signal, told };
}

describe('the health_watcher', () => {
  it('with manual health, watches nothing and reports nothing', async () => {
    const w = watcher(running(0), { ...UPDATE, healthCheck: 'manual' });
    await w.hook.prerun!({}, w.signal);
    await w.clock.advance(400_000);
    expect([w.watches(), w.reports.length]).toEqual([0, 0]);
  });

  it('subscribes once, however often prerun runs, and not again after its verdict', async () => {
    const w = watcher(running(0));
    await w.hook.prerun!({}, w.signal);
    await w.hook.prerun!({}, w.signal);
    expect(w.watches()).toBe(1);
    await w.clock.advance(10_000);
    expect(w.reports.map((r) => r.status.healthy)).toEqual([true]);
    await w.hook.prerun!({}, w.signal);
    expect(w.watches()).toBe(1);
  });

  it('reports a verdict the first state decides once, and ends the subscription', async () => {
    const w = watcher(failed);
    await w.hook.prerun!({}, w.signal);
    w.push(failed);
    expect(w.reports.map((r) => r.status.healthy)).toEqual([false]);
    expect(w.listeners.size).toBe(0);
  });

  it.each(['postrun', 'shutdown', 'destroy'] as const)('%s ends the watch without a verdict', async (phase) => {
    const w = watcher(running(0));
    await w.hook.prerun!({}, w.signal);
    await w.hook[phase]!(w.signal);
    expect(w.listeners.size).toBe(0);
    await w.clock.advance(400_000);
    expect(w.reports).toEqual([]);
  });

  it('an update that stops the allocation ends the watch without a verdict; another update keeps it', async () => {
    const kept = watcher(running(0));
    await kept.hook.prerun!({}, kept.signal);
    await kept.hook.update!({ alloc: spec(), allocEnv: {} }, kept.signal);
    await kept.clock.advance(10_000);
    expect(kept.reports.map((r) => r.status.healthy)).toEqual([true]);

    const stopped = watcher(running(0));
    await stopped.hook.prerun!({}, stopped.signal);
    await stopped.hook.update!({ alloc: spec('stop'), allocEnv: {} }, stopped.signal);
    expect(stopped.listeners.size).toBe(0);
    await stopped.clock.advance(400_000);
    expect(stopped.reports).toEqual([]);
  });

  it.each(['stop', 'evict'] as const)('a task death heard once the allocation is to %s, before its update reaches the hook, ends the watch without a verdict', async (desired) => {
    const w = watcher(running(0));
    await w.hook.prerun!({}, w.signal);
    w.told(desired);
    w.push(failed);
    expect(w.listeners.size).toBe(0);
    await w.clock.advance(400_000);
    expect(w.reports).toEqual([]);
  });

  it.each([
    ['min_healthy_time', 10_000],
    ['healthy_deadline', 300_000],
  ])('the %s timer that fires once the allocation is to stop gives no verdict', async (_timer, at) => {
    // Running, then pending again: only the deadline is left to decide, unless min_healthy_time does first.
    const w = watcher(running(0));
    await w.hook.prerun!({}, w.signal);
    if (at > 10_000) w.push(pending);
    await w.clock.advance(at - 1);
    w.told('stop');
    await w.clock.advance(1);
    expect(w.reports).toEqual([]);
    expect(w.listeners.size).toBe(0);
  });

  it('prerun of an allocation already to stop watches nothing', async () => {
    const w = watcher(failed);
    w.told('stop');
    await w.hook.prerun!({}, w.signal);
    await w.clock.advance(400_000);
    expect([w.watches(), w.reports]).toEqual([0, []]);
  });

  it('a task that goes back to pending stops the min_healthy_time wait', async () => {
    const w = watcher(running(0));
    await w.hook.prerun!({}, w.signal);
    await w.clock.advance(5_000);
    w.push(pending);
    await w.clock.advance(10_000);
    expect(w.reports).toEqual([]);
  });
});
