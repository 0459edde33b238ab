/**
 * AllocStatsReporter's task streams (open from track to untrack, whoever reads, at the full rate or the background
 * one), streams that end or fail, and the summary `latest()` computes (Nomad's
 * AllocStatsReporter.LatestAllocStats: CPU and memory summed, the newest timestamp).
 */
import { EMPTY, Observable, Subject, concat, of, throwError } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { ResourceUsage } from '../../src/drivers/controller.ts';
import { AllocStatsReporter, BACKGROUND_INTERVAL_MS, READ_LEASE_SAMPLES } from '../../src/runtime/alloc-stats.ts';

const usage = (cpu: number, rss: number, timestamp: number): ResourceUsage => ({
  timestamp,
  cpu: { percent: cpu, userMs: 0, systemMs: 0, totalTicks: 0 },
  memory: { rss, vms: 0, swap: 0 },
  pids: [1],
});

/** A task's stats stream (the samples the test emits, after `first` on each subscription) that counts its openings. */
function source(first: Observable<ResourceUsage> = EMPTY) {
  const samples = new Subject<ResourceUsage>();
  let open = 0;
  let opened = 0;
  const stream = new Observable<ResourceUsage>((sub) => {
    open++;
    opened++;
    const inner = concat(first, samples).subscribe(sub);
    return () => {
      open--;
      inner.unsubscribe();
    };
  });
  return { open: () => stream, emit: (u: ResourceUsage) => samples.next(u), fail: () => samples.error(new Error('gone')), isOpen: () => open > 0, opened: () => opened };
}

describe('AllocStatsReporter: when task streams are open', () => {
  it("closes the stream of a task's previous run when the task is tracked again (a restart)", () => {
    const r = new AllocStatsReporter();
    const first = source();
    const second = source();
    r.track('web', first.open);
    r.track('web', second.open);
    expect(first.isOpen()).toBe(false);
    expect(second.isOpen()).toBe(true);
  });

  it('untracking a task it never tracked (a task without stats exiting) changes nothing', () => {
    const r = new AllocStatsReporter();
    r.report('web', usage(1, 10, 1));
    expect(() => r.untrack('db')).not.toThrow();
    expect(Object.keys(r.latest().tasks)).toEqual(['web']);
  });

  it('keeps the samples a stream hands over while it is being opened, and stays open', () => {
    const r = new AllocStatsReporter();
    const src = source(of(usage(1, 1, 1), usage(1, 2, 2)));
    r.track('web', src.open);
    expect(src.isOpen()).toBe(true);
    expect(r.latest().usage.memoryRss).toBe(2);
  });

  it('a stream that hands over a whole lease of samples while it is being opened drops to the background rate after', () => {
    const r = new AllocStatsReporter();
    const buffered = Array.from({ length: READ_LEASE_SAMPLES }, (_, i) => usage(1, i + 1, i + 1));
    const samples = new Subject<ResourceUsage>();
    const asked: (number | undefined)[] = [];
    r.track('web', (ms) => (asked.push(ms), ms === undefined ? concat(of(...buffered), samples) : samples));
    expect(asked).toEqual([undefined, BACKGROUND_INTERVAL_MS]);
    expect(r.latest().usage.memoryRss).toBe(READ_LEASE_SAMPLES);
  });

  it('does not reopen a stream that failed (the task is gone), for readers or watchers', () => {
    const r = new AllocStatsReporter();
    const src = source();
    r.track('web', src.open);
    src.fail();
    r.latest();
    r.stats$.subscribe(() => undefined).unsubscribe();
    expect(src.opened()).toBe(1);
    expect(src.isOpen()).toBe(false);
  });

  it('does not reopen a stream that failed or ended while it was being opened, and keeps what it sent', () => {
    const r = new AllocStatsReporter();
    let opened = 0;
    r.track('web', () => {
      opened++;
      return throwError(() => new Error('no such process'));
    });
    r.track('db', () => {
      opened++;
      return of(usage(1, 5, 1));
    });
    r.latest();
    r.stats$.subscribe(() => undefined).unsubscribe();
    expect(opened).toBe(2);
    expect(r.latest('db').usage.memoryRss).toBe(5);
  });

  it('untrack closes the open stream and forgets the figures', () => {
    const r = new AllocStatsReporter();
    const src = source();
    r.track('web', src.open);
    src.emit(usage(1, 10, 1));
    r.untrack('web');
    expect(src.isOpen()).toBe(false);
    expect(r.latest().tasks).toEqual({});
  });
});

describe('AllocStatsReporter: the summary', () => {
  it('sums CPU and memory over every task and takes the newest timestamp', () => {
    const r = new AllocStatsReporter();
    r.report('web', usage(10, 100, 2_000));
    r.report('db', usage(5, 50, 1_000));
    const all = r.latest();
    expect(all.usage).toEqual({ cpuPercent: 15, memoryRss: 150 });
    expect(all.timestamp).toBe(2_000);
    expect(Object.keys(all.tasks).sort()).toEqual(['db', 'web']);
  });

  it('with a task name, sums that task alone, at its own timestamp', () => {
    const r = new AllocStatsReporter();
    r.report('web', usage(10, 100, 2_000));
    r.report('db', usage(5, 50, 1_000));
    const db = r.latest('db');
    expect(db).toEqual({ timestamp: 1_000, usage: { cpuPercent: 5, memoryRss: 50 }, tasks: { db: usage(5, 50, 1_000) } });
    expect(r.latest('nope')).toEqual({ timestamp: 0, usage: { cpuPercent: 0, memoryRss: 0 }, tasks: {} });
  });

  it('stats$ carries each new summary, current value first', () => {
    const r = new AllocStatsReporter();
    const seen: number[] = [];
    const sub = r.stats$.subscribe((s) => seen.push(s.usage.cpuPercent));
    r.report('web', usage(10, 100, 1));
    r.report('db', usage(5, 50, 2));
    r.clear('web');
    r.clear('web');
    sub.unsubscribe();
    expect(seen).toEqual([0, 10, 15, 5]);
  });
});
