import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom, toArray } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LogLine } from '../../src/drivers/controller.ts';
import { readLogs } from '../../src/drivers/raw-exec/log-reader.ts';
import { listLogIndices, logFilePath, RotatingLogWriter } from '../../src/drivers/raw-exec/rotating-log.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'allocrun-logs-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const read = (i: number, base = 'web.stdout') => readFileSync(logFilePath(dir, base, i), 'utf8');
const numbered = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `${String(from + i).padStart(4, '0')}\n`).join('');

describe('RotatingLogWriter', () => {
  it('writes file 0 until the size limit, then rotates to the next index', () => {
    const w = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 10, maxFileSize: 10 });
    w.write('0123456789abcdefghij01234');
    w.close();
    expect(listLogIndices(dir, 'web.stdout')).toEqual([0, 1, 2]);
    expect([read(0), read(1), read(2)]).toEqual(['0123456789', 'abcdefghij', '01234']);
  });

  it('does not rotate before a full file gets more bytes', () => {
    const w = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 10, maxFileSize: 10 });
    w.write('0123456789');
    expect(listLogIndices(dir, 'web.stdout')).toEqual([0]);
    w.write('x');
    w.close();
    expect(listLogIndices(dir, 'web.stdout')).toEqual([0, 1]);
  });

  it('keeps only maxFiles files, deleting the oldest', () => {
    const w = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 3, maxFileSize: 5 });
    for (let i = 0; i < 10; i++) w.write(`${i}${i}${i}${i}\n`);
    w.close();
    expect(listLogIndices(dir, 'web.stdout')).toEqual([7, 8, 9]);
    expect(read(9)).toBe('9999\n');
  });

  it('continues the newest existing file when a restarted task reopens the stream', () => {
    const first = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 5, maxFileSize: 8 });
    first.write('abcdefghijk');
    first.close();
    const second = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 5, maxFileSize: 8 });
    expect(second.currentIndex).toBe(1);
    second.write('lmnopq');
    second.close();
    expect([read(0), read(1), read(2)]).toEqual(['abcdefgh', 'ijklmnop', 'q']);
  });

  it('purges old files left beyond maxFiles when it opens', () => {
    for (let i = 0; i < 6; i++) writeFileSync(logFilePath(dir, 'web.stderr', i), 'old');
    new RotatingLogWriter(dir, 'web.stderr', { maxFiles: 2, maxFileSize: 100 }).close();
    expect(listLogIndices(dir, 'web.stderr')).toEqual([4, 5]);
  });

  it('leaves other tasks and streams alone', () => {
    writeFileSync(logFilePath(dir, 'api.stdout', 0), 'api');
    writeFileSync(logFilePath(dir, 'web.stderr', 0), 'err');
    const w = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 1, maxFileSize: 2 });
    w.write('aabbcc');
    w.close();
    expect(listLogIndices(dir, 'web.stdout')).toEqual([2]);
    expect(listLogIndices(dir, 'api.stdout')).toEqual([0]);
    expect(listLogIndices(dir, 'web.stderr')).toEqual([0]);
  });

  it('drops writes after close', () => {
    const w = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 2, maxFileSize: 100 });
    w.write('kept');
    w.close();
    w.write('dropped');
    expect(read(0)).toBe('kept');
  });

  it('rejects a size or count below one', () => {
    expect(() => new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 0, maxFileSize: 10 })).toThrow(
      expect.objectContaining({ code: 'ErrLogConfig', message: expect.stringContaining('max_files') }),
    );
  });
});

describe('readLogs', () => {
  const lines = (ls: LogLine[]) => ls.map((l) => `${l.stream}:${l.line}`);

  it('reads lines back in order across rotated files, including one split between files', async () => {
    const w = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 10, maxFileSize: 7 });
    w.write(numbered(0, 5)); // 25 bytes: lines straddle the 7-byte files
    w.close();
    const out = await lastValueFrom(readLogs({ dir, task: 'web', stream: 'stdout', clock: new SimulatedClock() }).pipe(toArray()));
    expect(out.map((l) => l.line)).toEqual(['0000', '0001', '0002', '0003', '0004']);
  });

  it('reads both streams, stdout first, and keeps an unterminated last line', async () => {
    const out = new RotatingLogWriter(dir, 'web.stdout');
    const err = new RotatingLogWriter(dir, 'web.stderr');
    out.write('one\ntwo');
    err.write('oops\r\n');
    out.close();
    err.close();
    const got = await lastValueFrom(readLogs({ dir, task: 'web', clock: new SimulatedClock() }).pipe(toArray()));
    expect(lines(got)).toEqual(['stdout:one', 'stdout:two', 'stderr:oops']);
  });

  it('starts from the last `tail` lines', async () => {
    const w = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 10, maxFileSize: 11 });
    w.write(numbered(0, 20));
    w.close();
    const got = await lastValueFrom(readLogs({ dir, task: 'web', stream: 'stdout', tail: 3, clock: new SimulatedClock() }).pipe(toArray()));
    expect(got.map((l) => l.line)).toEqual(['0017', '0018', '0019']);
  });

  it('follows new lines across rotations and completes once the writer is done', async () => {
    const clock = new SimulatedClock();
    const w = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 3, maxFileSize: 10 });
    let active = true;
    const got: string[] = [];
    let completed = false;
    readLogs({ dir, task: 'web', stream: 'stdout', follow: true, clock, pollMs: 100, isActive: () => active }).subscribe({
      next: (l) => got.push(l.line),
      complete: () => (completed = true),
    });
    w.write('first\n');
    await clock.advance(100);
    expect(got).toEqual(['first']);
    w.write(numbered(0, 4)); // rotates twice
    await clock.advance(100);
    expect(got).toEqual(['first', '0000', '0001', '0002', '0003']);
    w.write('last words');
    w.close();
    active = false;
    await clock.advance(100);
    expect(got.at(-1)).toBe('last words');
    expect(completed).toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });

  it('skips ahead when the writer rotated past a slow follower', async () => {
    const clock = new SimulatedClock();
    const w = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 2, maxFileSize: 5 });
    w.write(numbered(0, 1)); // fills file 0
    const got: string[] = [];
    readLogs({ dir, task: 'web', stream: 'stdout', follow: true, clock, pollMs: 100, isActive: () => true }).subscribe((l) => got.push(l.line));
    expect(got).toEqual(['0000']);
    w.write(numbered(1, 10)); // files 1..9 written, only 8 and 9 kept: the follower's file 0 is gone
    w.close();
    await clock.advance(100);
    expect(got).toEqual(['0000', '0008', '0009']);
  });

  it('stops polling when unsubscribed', async () => {
    const clock = new SimulatedClock();
    const sub = readLogs({ dir, task: 'web', follow: true, clock }).subscribe();
    expect(clock.pendingTimers).toBe(1);
    sub.unsubscribe();
    expect(clock.pendingTimers).toBe(0);
    expect(statSync(dir).isDirectory()).toBe(true);
  });
});
