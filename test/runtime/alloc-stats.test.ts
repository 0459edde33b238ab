import { Observable, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { ResourceUsage } from '../../src/drivers/controller.ts';
import { AllocStatsReporter, BACKGROUND_INTERVAL_MS, READ_LEASE_SAMPLES } from '../../src/runtime/alloc-stats.ts';

const usage = (rss: number, timestamp = 1): ResourceUsage => ({
  timestamp,
  cpu: { percent: 1, userMs: 0, systemMs: 0, totalTicks: 0 },
  memory: { rss, vms: 0, swap: 0 },
  pids: [1],
});

/** A task's stats stream that counts how often it is open, and the interval each opening asked for. */
function fakeSource() {
  const samples = new Subject<ResourceUsage>();
  let open = 0;
  const intervals: (number | undefined)[] = [];
  const stream = new Observable<ResourceUsage>((sub) => {
    open++;
    const inner = samples.subscribe(sub);
    return () => {
      open--;
      inner.unsubscribe();
    };
  });
  return {
    open: (ms?: number) => (intervals.push(ms), stream),
    emit: (u: ResourceUsage) => samples.next(u),
    end: () => samples.complete(),
    isOpen: () => open > 0,
    opened: () => intervals.length,
    /** `fast` for the hook's own interval (none asked), else the interval asked for. */
    rates: () => intervals.map((ms) => (ms === undefined ? 'fast' : ms)),
  };
}

describe('AllocStatsReporter', () => {
  it('samples a tracked task from the moment it is tracked, at the full rate, with nobody reading', () => {
    const r = new AllocStatsReporter();
    const src = fakeSource();
    r.track('web', src.open);
    expect(src.isOpen()).toBe(true);
    expect(src.rates()).toEqual(['fast']);
    src.emit(usage(100));
    src.emit(usage(120));
    // The first read finds the figures already there (Nomad's stats hook samples from poststart).
    expect(r.latest('web').usage.memoryRss).toBe(120);
  });

  it(`drops to one sample every ${BACKGROUND_INTERVAL_MS} ms after ${READ_LEASE_SAMPLES} samples nobody asked for, and keeps sampling`, () => {
    const r = new AllocStatsReporter();
    const src = fakeSource();
    r.track('web', src.open);
    for (let i = 1; i < READ_LEASE_SAMPLES; i++) src.emit(usage(i));
    expect(src.rates()).toEqual(['fast']);
    src.emit(usage(5));
    expect(src.rates()).toEqual(['fast', BACKGROUND_INTERVAL_MS]);
    expect(src.isOpen()).toBe(true);
    src.emit(usage(6));
    expect(r.latest().usage.memoryRss).toBe(6);
  });

  it(`a read returns the background figures and samples at the full rate for ${READ_LEASE_SAMPLES} samples again`, () => {
    const r = new AllocStatsReporter();
    const src = fakeSource();
    r.track('web', src.open);
    for (let i = 0; i < READ_LEASE_SAMPLES; i++) src.emit(usage(1));
    src.emit(usage(42));
    expect(r.latest('web').usage.memoryRss).toBe(42);
    expect(src.rates()).toEqual(['fast', BACKGROUND_INTERVAL_MS, 'fast']);
    // Another read renews the lease without reopening.
    for (let i = 1; i < READ_LEASE_SAMPLES; i++) src.emit(usage(7));
    r.latest();
    for (let i = 1; i < READ_LEASE_SAMPLES; i++) src.emit(usage(7));
    expect(src.rates()).toEqual(['fast', BACKGROUND_INTERVAL_MS, 'fast']);
    src.emit(usage(8));
    expect(src.rates()).toEqual(['fast', BACKGROUND_INTERVAL_MS, 'fast', BACKGROUND_INTERVAL_MS]);
    expect(src.opened()).toBe(4);
  });

  it('samples at the full rate while stats$ is watched, and slows down when the last watcher leaves', () => {
    const r = new AllocStatsReporter();
    const src = fakeSource();
    r.track('web', src.open);
    for (let i = 0; i < READ_LEASE_SAMPLES; i++) src.emit(usage(1));
    const seen: number[] = [];
    const a = r.stats$.subscribe((u) => seen.push(u.usage.memoryRss));
    const b = r.stats$.subscribe(() => undefined);
    expect(src.rates()).toEqual(['fast', BACKGROUND_INTERVAL_MS, 'fast']);
    for (let i = 0; i < 3 * READ_LEASE_SAMPLES; i++) src.emit(usage(100));
    expect(src.rates()).toHaveLength(3);
    a.unsubscribe();
    expect(src.rates()).toHaveLength(3);
    b.unsubscribe();
    expect(src.rates()).toEqual(['fast', BACKGROUND_INTERVAL_MS, 'fast', BACKGROUND_INTERVAL_MS]);
    expect(seen.at(-1)).toBe(100);
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
