/**
 * The health_watcher's lifecycle (Nomad's health_hook.go), on the hook itself with the simulated clock:
 * manual health watches nothing; prerun subscribes once and never after a verdict; a verdict is reported
 * once and ends the subscription, even when the first state already decides it; postrun, shutdown,
 * destroy and an update that stops the allocation end the watch without a verdict, while any other update
 * keeps it; so does a stop the runner heard before the hook's update ran (a task death or a timer is then the
 * stop's); a task that goes back to pending stops the min_healthy_time wait. A kill the runner was told (preKill)
 * ends the watch without a verdict unless the state as it is now decides; an update to another deployment
 * watches anew from then (with its update block), one to the same deployment keeps the watch and the verdict.
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
const spec = (desiredStatus?: AllocSpec['desiredStatus'], deploymentId = 'd1'): AllocSpec => ({ id: 'a', job: 'j', group: 'g', type: 'service', tasks: [main], update: UPDATE, deploymentId, ...(desiredStatus && { desiredStatus }) });

/** The hook with a watch whose listeners the test feeds, and what it reported. */
function watcher(first: AllocState, update: UpdateStrategy = UPDATE) {
  const clock = new SimulatedClock();
  const listeners = new Set<(s: AllocState) => void>();
  let watches = 0;
  const reports: HealthReport[] = [];
  // What the runner last heard from the server; `told` changes it without any update hook having run.
  let latest = spec();
  // The runner's state as it is now, which `watch` hears only after the runner's step.
  let now = first;
  const hook = healthHook({
    update,
    tasks: [main],
    clock,
    deploymentId: 'd1',
    latestAlloc: () => latest,
    current: () => now,
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
  /** The runner takes an update (its latest alloc) and then runs the hook's update with it. */
  const updated = (alloc: AllocSpec) => {
    latest = alloc;
    return hook.update!({ alloc, allocEnv: {} }, signal);
  };
  const stepTo = (s: AllocState) => (now = s);
  const taken = (alloc: AllocSpec) => (latest = alloc);
  return { clock, hook, push, reports, listeners, watches: () => watches, signal, told, updated, stepTo, taken };
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

  it('a kill it is told of before health is decided ends the watch without a verdict', async () => {
    const w = watcher(running(0));
    await w.hook.prerun!({}, w.signal);
    await w.clock.advance(5_000);
    await w.hook.preKill!(w.signal);
    // The killed task's death, then the deadline: neither is the allocation's failure.
    w.push(failed);
    await w.clock.advance(400_000);
    expect([w.listeners.size, w.reports]).toEqual([0, []]);
  });

  it('a kill started for a failure the watch has not heard yet still reports it unhealthy', async () => {
    const w = watcher(running(0));
    await w.hook.prerun!({}, w.signal);
    // The runner's step that failed the task also started the kill; the watch hears it only after.
    w.stepTo(failed);
    await w.hook.preKill!(w.signal);
    expect(w.reports.map((r) => r.status.healthy)).toEqual([false]);
    expect(w.listeners.size).toBe(0);
  });

  it('a kill after the verdict changes nothing', async () => {
    const w = watcher(running(0));
    await w.hook.prerun!({}, w.signal);
    await w.clock.advance(10_000);
    await w.hook.preKill!(w.signal);
    expect(w.reports.map((r) => r.status)).toEqual([{ healthy: true, timestamp: 10_000 }]);
  });

  it('an update to another deployment after the verdict watches anew, from the update, with the new update block', async () => {
    const w = watcher(running(0));
    await w.hook.prerun!({}, w.signal);
    await w.clock.advance(10_000);
    await w.updated({ ...spec(undefined, 'd2'), update: { minHealthyTime: 20_000, healthyDeadline: 300_000 } });
    expect(w.watches()).toBe(2);
    await w.clock.advance(19_999);
    expect(w.reports.length).toBe(1);
    await w.clock.advance(1);
    expect(w.reports.map((r) => r.status)).toEqual([{ healthy: true, timestamp: 10_000 }, { healthy: true, timestamp: 30_000 }]);
  });

  it('an update to another deployment while watching restarts the healthy_deadline from the update', async () => {
    const w = watcher(pending);
    await w.hook.prerun!({}, w.signal);
    await w.clock.advance(200_000);
    await w.updated(spec(undefined, 'd2'));
    await w.clock.advance(299_999);
    expect(w.reports).toEqual([]);
    await w.clock.advance(1);
    expect(w.reports.map((r) => r.status)).toEqual([{ healthy: false, timestamp: 500_000 }]);
  });

  it('an update in the same deployment keeps the verdict and watches nothing more', async () => {
    const w = watcher(running(0));
    await w.hook.prerun!({}, w.signal);
    await w.clock.advance(10_000);
    await w.updated(spec());
    await w.clock.advance(400_000);
    expect([w.watches(), w.reports.length]).toEqual([1, 1]);
  });

  it('an update to another deployment whose group has manual health, or no update block, watches nothing', async () => {
    for (const update of [{ ...UPDATE, healthCheck: 'manual' as const }, undefined]) {
      const w = watcher(running(0));
      await w.hook.prerun!({}, w.signal);
      const { update: _u, ...rest } = spec(undefined, 'd2');
      await w.updated({ ...rest, ...(update && { update }) });
      await w.clock.advance(400_000);
      expect([w.watches(), w.reports, w.listeners.size]).toEqual([1, [], 0]);
    }
  });

  it('a verdict the old deployment\'s timer gives once the runner took the update, before the hook heard it, is not reported', async () => {
    const w = watcher(running(0));
    await w.hook.prerun!({}, w.signal);
    await w.clock.advance(9_999);
    // The runner has taken the update (and cleared its verdict); the update hooks before this one still run.
    w.taken(spec(undefined, 'd2'));
    await w.clock.advance(1);
    expect(w.reports).toEqual([]);
  });

  it('an update in the same deployment watches anew when the runner holds no verdict and nothing watches (a restored runner)', async () => {
    // Made with the spec of the update the restored runner had not taken: taking it cleared the verdict.
    const w = watcher(running(0));
    w.stepTo({ ...running(0) });
    await w.updated(spec());
    expect(w.watches()).toBe(1);
    await w.clock.advance(10_000);
    expect(w.reports.map((r) => r.status)).toEqual([{ healthy: true, timestamp: 10_000 }]);
  });

  it('an update after a kill watches nothing', async () => {
    const w = watcher(running(0));
    await w.hook.prerun!({}, w.signal);
    await w.hook.preKill!(w.signal);
    await w.updated(spec(undefined, 'd2'));
    await w.clock.advance(400_000);
    expect([w.watches(), w.reports]).toEqual([1, []]);
  });
});
