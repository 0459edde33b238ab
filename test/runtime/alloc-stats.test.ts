import { Observable, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { ResourceUsage } from '../../src/drivers/controller.ts';
import { AllocStatsReporter, READ_LEASE_SAMPLES } from '../../src/runtime/alloc-stats.ts';

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
  it('does not sample a tracked task while nobody reads its stats', () => {
    const r = new AllocStatsReporter();
    const src = fakeSource();
    r.track('web', src.open);
    expect(src.isOpen()).toBe(false);
  });

  it('samples while stats$ has a subscriber, and stops when the last one leaves', () => {
    const r = new AllocStatsReporter();
    const src = fakeSource();
    r.track('web', src.open);
    const seen: number[] = [];
    const a = r.stats$.subscribe((u) => seen.push(u.usage.memoryRss));
    const b = r.stats$.subscribe(() => undefined);
    expect(src.isOpen()).toBe(true);
    src.emit(usage(100));
    expect(seen).toEqual([0, 100]);
    a.unsubscribe();
    expect(src.isOpen()).toBe(true);
    b.unsubscribe();
    expect(src.isOpen()).toBe(false);
  });

  it('opens a task tracked while stats$ is watched at once', () => {
    const r = new AllocStatsReporter();
    const sub = r.stats$.subscribe(() => undefined);
    const src = fakeSource();
    r.track('web', src.open);
    expect(src.isOpen()).toBe(true);
    sub.unsubscribe();
  });

  it(`keeps sampling for ${READ_LEASE_SAMPLES} samples after a latest() read, then stops`, () => {
    const r = new AllocStatsReporter();
    const src = fakeSource();
    r.track('web', src.open);
    expect(r.latest().tasks).toEqual({});
    expect(src.isOpen()).toBe(true);
    for (let i = 1; i < READ_LEASE_SAMPLES; i++) src.emit(usage(i));
    expect(src.isOpen()).toBe(true);
    expect(r.latest('web').usage.memoryRss).toBe(READ_LEASE_SAMPLES - 1);
    // The second read renewed the lease.
    for (let i = 0; i < READ_LEASE_SAMPLES - 1; i++) src.emit(usage(7));
    expect(src.isOpen()).toBe(true);
    src.emit(usage(8));
    expect(src.isOpen()).toBe(false);
    expect(r.latest('web').usage.memoryRss).toBe(8);
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
