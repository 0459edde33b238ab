import { Observable, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { ResourceUsage } from '../../src/drivers/controller.ts';
import { AllocStatsReporter } from '../../src/runtime/alloc-stats.ts';

const usage = (rss: number, timestamp = 1): ResourceUsage => ({
  timestamp,
  cpu: { percent: 1, userMs: 0, systemMs: 0, totalTicks: 0 },
  memory: { rss, vms: 0, swap: 0 },
  pids: [1],
});

/** A task's stats stream that counts how often it is open. */
function fakeSource() {
  const samples = new Subject<ResourceUsage>();
  let open = 0;
  let opened = 0;
  const stream = new Observable<ResourceUsage>((sub) => {
    open++;
    opened++;
    const inner = samples.subscribe(sub);
    return () => {
      open--;
      inner.unsubscribe();
    };
  });
  return { open: () => stream, emit: (u: ResourceUsage) => samples.next(u), end: () => samples.complete(), isOpen: () => open > 0, opened: () => opened };
}

describe('AllocStatsReporter', () => {
  it('samples a tracked task from the moment it is tracked, with nobody reading', () => {
    const r = new AllocStatsReporter();
    const src = fakeSource();
    r.track('web', src.open);
    expect(src.isOpen()).toBe(true);
    src.emit(usage(100));
    src.emit(usage(120));
    // The first read finds the figures already there (Nomad's stats hook samples from poststart).
    expect(r.latest('web').usage.memoryRss).toBe(120);
  });

  it('keeps sampling after reads and after stats$ watchers leave, until the task is untracked', () => {
    const r = new AllocStatsReporter();
    const src = fakeSource();
    r.track('web', src.open);
    const seen: number[] = [];
    r.stats$.subscribe((u) => seen.push(u.usage.memoryRss)).unsubscribe();
    for (let i = 0; i < 10; i++) r.latest();
    expect(src.isOpen()).toBe(true);
    src.emit(usage(7));
    expect(r.latest().usage.memoryRss).toBe(7);
    expect(src.opened()).toBe(1);
    expect(seen).toEqual([0]);
  });

  it('stats$ carries every sample to a watcher, current value first', () => {
    const r = new AllocStatsReporter();
    const src = fakeSource();
    r.track('web', src.open);
    src.emit(usage(100));
    const seen: number[] = [];
    const sub = r.stats$.subscribe((u) => seen.push(u.usage.memoryRss));
    src.emit(usage(150));
    sub.unsubscribe();
    expect(seen).toEqual([100, 150]);
  });

  it('forgets an untracked task and closes its stream', () => {
    const r = new AllocStatsReporter();
    const src = fakeSource();
    r.track('web', src.open);
    const sub = r.stats$.subscribe(() => undefined);
    src.emit(usage(5));
    r.untrack('web');
    expect(src.isOpen()).toBe(false);
    expect(r.latest().tasks).toEqual({});
    sub.unsubscribe();
  });

  it('does not reopen a stream that completed (the task is gone)', () => {
    const r = new AllocStatsReporter();
    const src = fakeSource();
    r.track('web', src.open);
    const sub = r.stats$.subscribe(() => undefined);
    src.end();
    sub.unsubscribe();
    r.latest();
    r.stats$.subscribe(() => undefined).unsubscribe();
    expect(src.opened()).toBe(1);
  });
});
