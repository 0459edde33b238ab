/**
 * publishLogs (SwarmKit's agent/exec publishing): a log stream that fails makes the publishing fail with
 * its error, after the lines before it were published; a publisher that fails ends the subscription and
 * the publishing with the publisher's error; a stream that ends publishes every line in order.
 */
import { Observable, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { publishLogs } from '../../src/drivers/executor.ts';

type Line = { stream: 'stdout'; data: string; time: number };
const line = (data: string): Line => ({ stream: 'stdout', data, time: 0 });
const controllerOf = (logs: () => Observable<Line>) => ({ logs }) as never;

describe('publishLogs', () => {
  it('publishes every line in order, and ends when the stream does', async () => {
    const seen: string[] = [];
    await publishLogs(controllerOf(() => new Observable<Line>((s) => { s.next(line('a')); s.next(line('b')); s.complete(); })), 't1', { publish: async (m) => void seen.push(`${m.taskId}:${(m as unknown as Line).data}`) }, {}, new AbortController().signal);
    expect(seen).toEqual(['t1:a', 't1:b']);
  });

  it('fails with the stream\'s error, after publishing the lines before it', async () => {
    const seen: string[] = [];
    const boom = new Error('log file gone');
    const p = publishLogs(controllerOf(() => new Observable<Line>((s) => { s.next(line('a')); s.error(boom); })), 't1', { publish: (m) => void seen.push((m as unknown as Line).data) }, {}, new AbortController().signal);
    await expect(p).rejects.toBe(boom);
    expect(seen).toEqual(['a']);
  });

  it("fails with the publisher's error and ends the subscription", async () => {
    const lines = new Subject<Line>();
    const refused = new Error('publisher gone');
    const p = publishLogs(controllerOf(() => lines), 't1', { publish: () => Promise.reject(refused) }, {}, new AbortController().signal);
    lines.next(line('a'));
    await expect(p).rejects.toBe(refused);
    expect(lines.observed).toBe(false);
  });
});
