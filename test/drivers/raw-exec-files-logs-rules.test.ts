/**
 * raw_exec's logs (rotating-log.ts, log-reader.ts), the rules the first table left open: a writer given its
 * dir's listing trusts it (no dir made, no second listing) and holds only its current file open; a stream's
 * files are named by a number and nothing else; a restarted task whose newest file is already full starts the
 * next one with its first byte; a follower the writer rotated past goes on at the oldest file
 * left; a follower without an activity check follows for good; a file that goes between the listing and the
 * open reads as nothing; and a reader holds no file open between reads. On a temp dir and a simulated clock.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom, toArray } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readLogs } from '../../src/drivers/raw-exec/log-reader.ts';
import { listLogIndices, RotatingLogWriter } from '../../src/drivers/raw-exec/rotating-log.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'allocrun-logrules2-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const files = () => readdirSync(dir).sort();
const read = (name: string) => readFileSync(join(dir, name), 'utf8');
/** This process's open fds on files of the test's dir (other suites' sockets may come and go meanwhile). */
const openLogFds = () =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(`${realpathSync(dir)}/`);
    } catch {
      return false; // closed since the listing
    }
  });
const logFdsOpen = () => openLogFds().length;

describe("a writer given its dir's listing trusts it", () => {
  it('makes no dir of its own', () => {
    const missing = join(dir, 'logs');
    new RotatingLogWriter(missing, 'web.stdout', { maxFiles: 2, maxFileSize: 10 }, []).close();
    expect(existsSync(missing)).toBe(false);
  });

  it('goes on from the listing, not from a second look at the dir', () => {
    writeFileSync(join(dir, 'web.stdout.0'), 'a');
    writeFileSync(join(dir, 'web.stdout.4'), 'b');
    const w = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 10, maxFileSize: 10 }, ['web.stdout.0']);
    expect(w.currentIndex).toBe(0);
    w.write('c');
    w.close();
    expect([read('web.stdout.0'), read('web.stdout.4')]).toEqual(['ac', 'b']);
  });
});

describe('a writer holds only the file it writes', () => {
  it('after a rotation, only the current file is open; after close, none', () => {
    const w = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 5, maxFileSize: 2 });
    w.write('abcde');
    expect(logFdsOpen()).toBe(1);
    expect(readlinkSync(`/proc/self/fd/${openLogFds()[0]}`)).toBe(join(realpathSync(dir), 'web.stdout.2'));
    w.close();
    expect(logFdsOpen()).toBe(0);
  });
});

describe("a stream's files are named by a number and nothing else", () => {
  it('a suffix that only ends in digits is not one of its files', () => {
    expect(listLogIndices('/unused', 'web.stdout', ['web.stdout.a1', 'web.stdout.1', 'web.stdout.-2'])).toEqual([1]);
  });
});

describe('a restarted task whose newest file is full', () => {
  it('starts the next file with its first byte, keeping the full one', () => {
    writeFileSync(join(dir, 'web.stdout.3'), 'abc');
    const w = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 10, maxFileSize: 3 });
    expect(w.currentIndex).toBe(3);
    w.write('d');
    expect(w.currentIndex).toBe(4);
    w.close();
    expect(files()).toEqual(['web.stdout.3', 'web.stdout.4']);
    expect([read('web.stdout.3'), read('web.stdout.4')]).toEqual(['abc', 'd']);
  });

  it('with one file kept, drops the full one for the next', () => {
    writeFileSync(join(dir, 'web.stdout.3'), 'abc');
    const w = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 1, maxFileSize: 3 });
    w.write('d');
    w.close();
    expect(files()).toEqual(['web.stdout.4']);
  });
});

describe('a follower', () => {
  it('the writer rotated past goes on at the oldest file left, without the lines it lost', async () => {
    const clock = new SimulatedClock();
    const got: string[] = [];
    const sub = readLogs({ dir, task: 'web', stream: 'stdout', follow: true, clock, pollMs: 10 }).subscribe((l) => got.push(l.line));
    const w = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 2, maxFileSize: 3 });
    w.write('a\n');
    await clock.advance(10);
    expect(got).toEqual(['a']);
    // Three files' worth while the follower sleeps: files 0 and 1 are gone, 2 and 3 are left.
    w.write('b\nc\nd\ne\nf\n');
    expect(files()).toEqual(['web.stdout.2', 'web.stdout.3']);
    await clock.advance(10);
    w.close();
    expect(got).toEqual(['a', 'd', 'e', 'f']);
    sub.unsubscribe();
  });

  it('without an activity check follows for good: a poll never ends it', async () => {
    const clock = new SimulatedClock();
    const got: string[] = [];
    let done = false;
    const sub = readLogs({ dir, task: 'web', stream: 'stdout', follow: true, clock, pollMs: 10 }).subscribe({
      next: (l) => got.push(l.line),
      complete: () => (done = true),
    });
    writeFileSync(join(dir, 'web.stdout.0'), 'a\npart');
    await clock.advance(10);
    expect(got).toEqual(['a']);
    expect(done).toBe(false);
    writeFileSync(join(dir, 'web.stdout.0'), 'a\npart\nb\n');
    await clock.advance(10);
    expect(got).toEqual(['a', 'part', 'b']);
    expect(done).toBe(false);
    expect(clock.pendingTimers).toBe(1);
    sub.unsubscribe();
  });

  it('unsubscribed, polls no more', async () => {
    const clock = new SimulatedClock();
    const got: string[] = [];
    const sub = readLogs({ dir, task: 'web', stream: 'stdout', follow: true, clock, pollMs: 10 }).subscribe((l) => got.push(l.line));
    sub.unsubscribe();
    expect(clock.pendingTimers).toBe(0);
    writeFileSync(join(dir, 'web.stdout.0'), 'a\n');
    await clock.advance(100);
    expect(got).toEqual([]);
  });
});

describe('a reader', () => {
  it('reads a file that goes between the listing and the open as nothing (a dangling link stands in for it)', async () => {
    symlinkSync(join(dir, 'gone'), join(dir, 'web.stdout.0'));
    writeFileSync(join(dir, 'web.stdout.1'), 'after\n');
    const lines = await lastValueFrom(readLogs({ dir, task: 'web', stream: 'stdout', clock: new SimulatedClock() }).pipe(toArray()));
    expect(lines.map((l) => l.line)).toEqual(['after']);
  });

  it('ends with the error when a file cannot be read', async () => {
    // A directory where a log file should be: it opens, and the read fails (EISDIR).
    mkdirSync(join(dir, 'web.stdout.0'));
    const err = await lastValueFrom(readLogs({ dir, task: 'web', stream: 'stdout', clock: new SimulatedClock() }).pipe(toArray())).catch((e: unknown) => e);
    expect((err as NodeJS.ErrnoException).code).toBe('EISDIR');
  });

  it('holds no file open once it has read, nor between the polls of a follow', async () => {
    for (let i = 0; i < 3; i++) writeFileSync(join(dir, `web.stdout.${i}`), `${i}\n`);
    writeFileSync(join(dir, 'web.stderr.0'), 'e\n');
    await lastValueFrom(readLogs({ dir, task: 'web', clock: new SimulatedClock() }).pipe(toArray()));
    expect(logFdsOpen()).toBe(0);
    const clock = new SimulatedClock();
    const sub = readLogs({ dir, task: 'web', follow: true, clock, pollMs: 10 }).subscribe();
    await clock.advance(30);
    expect(logFdsOpen()).toBe(0);
    sub.unsubscribe();
  });
});
