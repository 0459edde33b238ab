/**
 * raw_exec's logs, rule by rule (Nomad's logmon FileRotator and `alloc logs`): which files a stream owns,
 * where a file is cut, what is kept, and how a reader joins, tails, decodes and follows them. On a temp dir
 * and a simulated clock: milliseconds.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom, toArray } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LogLine } from '../../src/drivers/controller.ts';
import { readLogs, type ReadLogsOptions } from '../../src/drivers/raw-exec/log-reader.ts';
import {
  DEFAULT_LOG_CONFIG,
  listLogIndices,
  logBaseName,
  LogConfigError,
  logFilePath,
  RotatingLogWriter,
  taskLogWriters,
  validateLogConfig,
} from '../../src/drivers/raw-exec/rotating-log.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'allocrun-logrules-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const files = () => readdirSync(dir).sort();
const read = (name: string) => readFileSync(join(dir, name), 'utf8');

describe('a logs block needs at least one file of at least one byte (Nomad: 10 files of 10 MB)', () => {
  it('defaults to 10 files of 10 MiB, frozen', () => {
    expect(DEFAULT_LOG_CONFIG).toEqual({ maxFiles: 10, maxFileSize: 10 * 1024 * 1024 });
    expect(Object.isFrozen(DEFAULT_LOG_CONFIG)).toBe(true);
  });

  it.each([
    [{ maxFiles: 1, maxFileSize: 1 }, true],
    [{ maxFiles: 0, maxFileSize: 1 }, false],
    [{ maxFiles: 1, maxFileSize: 0 }, false],
    [{ maxFiles: 0.5, maxFileSize: 1 }, false],
    [{ maxFiles: Number.NaN, maxFileSize: 1 }, false],
    [{ maxFiles: 1, maxFileSize: Number.NaN }, false],
  ])('%j is valid: %s', (config, valid) => {
    if (valid) expect(() => validateLogConfig(config)).not.toThrow();
    else expect(() => validateLogConfig(config)).toThrow(LogConfigError);
  });

  it('names both limits in its error, a RangeError with a code', () => {
    const err = new LogConfigError({ maxFiles: 0, maxFileSize: 5 });
    expect(err).toBeInstanceOf(RangeError);
    expect(err.code).toBe('ErrLogConfig');
    expect(err.name).toBe('LogConfigError');
    expect(err.message).toBe('logs: max_files and max_file_size must be at least 1 (got 0 files of 5 bytes)');
  });
});

describe('a stream owns the files <task>.<stream>.N, N a number', () => {
  it('is named after its task and stream', () => {
    expect(logBaseName('web', 'stdout')).toBe('web.stdout');
    expect(logBaseName('web', 'stderr')).toBe('web.stderr');
    expect(logFilePath('/logs', 'web.stdout', 3)).toBe('/logs/web.stdout.3');
  });

  it('lists its indices in numeric order, ignoring other streams, tasks and suffixes', () => {
    const names = ['web.stdout.10', 'web.stdout.2', 'web.stdout.0', 'web.stdout.', 'web.stdout.1a', 'web.stdout.x', 'web.stderr.3', 'xweb.stdout.4', 'web.stdout'];
    expect(listLogIndices('/unused', 'web.stdout', names)).toEqual([0, 2, 10]);
  });

  it('lists the dir itself when given no listing, and nothing for a missing dir', () => {
    for (const n of ['web.stdout.1', 'web.stdout.0', 'db.stdout.5']) writeFileSync(join(dir, n), '');
    expect(listLogIndices(dir, 'web.stdout')).toEqual([0, 1]);
    expect(listLogIndices(join(dir, 'missing'), 'web.stdout')).toEqual([]);
  });
});

describe('a file is cut at the byte limit, and only the newest max_files are kept', () => {
  it('fills a file to exactly the limit, and opens the next only for the next byte', () => {
    const w = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 5, maxFileSize: 4 });
    w.write('abcd');
    expect(files()).toEqual(['web.stdout.0']);
    expect(w.currentIndex).toBe(0);
    w.write('e');
    expect(files()).toEqual(['web.stdout.0', 'web.stdout.1']);
    expect(w.currentIndex).toBe(1);
    w.close();
  });

  it('cuts one chunk across as many files as it needs', () => {
    const w = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 5, maxFileSize: 3 });
    w.write('abcdefgh');
    w.close();
    expect(files().map((f) => [f, read(f)])).toEqual([
      ['web.stdout.0', 'abc'],
      ['web.stdout.1', 'def'],
      ['web.stdout.2', 'gh'],
    ]);
  });

  it('writes the bytes of a view, not of the buffer under it', () => {
    const w = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 5, maxFileSize: 100 });
    w.write(Buffer.from('xxhelloyy').subarray(2, 7));
    w.write(new Uint8Array([33, 10]));
    w.close();
    expect(read('web.stdout.0')).toBe('hello!\n');
  });

  it('rounds fractional limits down', () => {
    const w = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 2.9, maxFileSize: 3.9 });
    expect([w.maxFiles, w.maxFileSize]).toEqual([2, 3]);
    w.write('abcdefghi');
    w.close();
    expect(files()).toEqual(['web.stdout.1', 'web.stdout.2']);
  });

  it('keeps exactly max_files files, the current one among them', () => {
    const w = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 3, maxFileSize: 1 });
    w.write('abcde');
    w.close();
    expect(files()).toEqual(['web.stdout.2', 'web.stdout.3', 'web.stdout.4']);
  });

  it('with one file, keeps only the current one', () => {
    const w = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 1, maxFileSize: 2 });
    w.write('abcde');
    w.close();
    expect(files()).toEqual(['web.stdout.2']);
    expect(read('web.stdout.2')).toBe('e');
  });

  it('a restarted task continues the newest file, counting the bytes already in it', () => {
    writeFileSync(join(dir, 'web.stdout.3'), 'ab');
    writeFileSync(join(dir, 'web.stdout.0'), 'old');
    const w = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 10, maxFileSize: 3 });
    expect(w.currentIndex).toBe(3);
    w.write('cd');
    w.close();
    expect(read('web.stdout.3')).toBe('abc');
    expect(read('web.stdout.4')).toBe('d');
    expect(read('web.stdout.0')).toBe('old');
  });

  it('on open, removes files older than max_files behind the newest, even with gaps', () => {
    for (const i of [0, 2, 5, 7, 8]) writeFileSync(join(dir, `web.stdout.${i}`), 'x');
    new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 3, maxFileSize: 10 }).close();
    expect(files()).toEqual(['web.stdout.7', 'web.stdout.8']);
  });

  it('makes its dir when it is missing', () => {
    const sub = join(dir, 'a', 'b');
    const w = new RotatingLogWriter(sub, 'web.stdout');
    w.write('x');
    w.close();
    expect(readFileSync(join(sub, 'web.stdout.0'), 'utf8')).toBe('x');
  });

  it('drops writes after close, and closes twice without harm', () => {
    const w = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 2, maxFileSize: 10 });
    w.write('a');
    w.close();
    w.close();
    w.write('b');
    expect(read('web.stdout.0')).toBe('a');
  });

  it('a closed writer that never wrote leaves no file', () => {
    new RotatingLogWriter(dir, 'web.stdout').close();
    expect(files()).toEqual([]);
  });

  it("a task's writers are its stdout's and its stderr's, each going on from its own files", () => {
    const logs = join(dir, 'logs');
    mkdirSync(logs);
    writeFileSync(join(logs, 'web.stderr.2'), 'e');
    const [[outName, out], [errName, err]] = taskLogWriters(logs, 'web', { maxFiles: 4, maxFileSize: 8 });
    expect([outName, errName]).toEqual(['stdout', 'stderr']);
    expect([out.base, err.base, out.dir]).toEqual(['web.stdout', 'web.stderr', logs]);
    expect([out.currentIndex, err.currentIndex]).toEqual([0, 2]);
    expect([out.maxFiles, out.maxFileSize]).toEqual([4, 8]);
    out.close();
    err.close();
  });

  it("a task's writers make the log dir", () => {
    const logs = join(dir, 'alloc', 'logs');
    const writers = taskLogWriters(logs, 'web', DEFAULT_LOG_CONFIG);
    for (const [, w] of writers) w.close();
    expect(existsSync(logs)).toBe(true);
  });
});

describe('a reader joins the files into lines', () => {
  const all = (opts: Partial<ReadLogsOptions> = {}) =>
    lastValueFrom(readLogs({ dir, task: 'web', clock: new SimulatedClock(), ...opts }).pipe(toArray()));
  const text = (ls: LogLine[]) => ls.map((l) => `${l.stream}:${l.line}`);

  it('reads one stream when asked', async () => {
    writeFileSync(join(dir, 'web.stdout.0'), 'out\n');
    writeFileSync(join(dir, 'web.stderr.0'), 'err\n');
    expect(text(await all({ stream: 'stderr' }))).toEqual(['stderr:err']);
    expect(text(await all({ stream: 'stdout' }))).toEqual(['stdout:out']);
    expect(text(await all())).toEqual(['stdout:out', 'stderr:err']);
  });

  it('reads nothing for a task that wrote nothing', async () => {
    expect(await all()).toEqual([]);
  });

  it.each([
    [undefined, ['a', 'b', 'c']],
    [2, ['b', 'c']],
    [3, ['a', 'b', 'c']],
    [10, ['a', 'b', 'c']],
    [1, ['c']],
    [0, []],
    [-1, []],
  ])('a tail of %s gives %j, the unterminated last line counting', async (tail, lines) => {
    writeFileSync(join(dir, 'web.stdout.0'), 'a\nb\nc');
    expect((await all({ stream: 'stdout', ...(tail === undefined ? {} : { tail }) })).map((l) => l.line)).toEqual(lines);
  });

  it('takes the tail of each stream apart', async () => {
    writeFileSync(join(dir, 'web.stdout.0'), 'o1\no2\n');
    writeFileSync(join(dir, 'web.stderr.0'), 'e1\ne2\n');
    expect(text(await all({ tail: 1 }))).toEqual(['stdout:o2', 'stderr:e2']);
  });

  it('strips a CR before the newline only, and keeps empty lines', async () => {
    writeFileSync(join(dir, 'web.stdout.0'), 'a\r\n\r\nb\rc\n\nd\r');
    expect((await all({ stream: 'stdout' })).map((l) => l.line)).toEqual(['a', '', 'b\rc', '', 'd']);
  });

  it('decodes a character whose bytes two files split', async () => {
    const euro = Buffer.from('€\n'); // 3 bytes and a newline
    writeFileSync(join(dir, 'web.stdout.0'), euro.subarray(0, 2));
    writeFileSync(join(dir, 'web.stdout.1'), euro.subarray(2));
    expect((await all({ stream: 'stdout' })).map((l) => l.line)).toEqual(['€']);
  });

  it('reads a file longer than one read (64 KiB) whole', async () => {
    const long = 'x'.repeat(200_000);
    writeFileSync(join(dir, 'web.stdout.0'), `${long}\nend\n`);
    const lines = (await all({ stream: 'stdout' })).map((l) => l.line);
    expect(lines.map((l) => l.length)).toEqual([200_000, 3]);
    expect(lines[0]).toBe(long);
  });

  it('stamps each line with the clock at the read', async () => {
    writeFileSync(join(dir, 'web.stdout.0'), 'a\n');
    const got = await lastValueFrom(readLogs({ dir, task: 'web', clock: new SimulatedClock(1234) }).pipe(toArray()));
    expect(got).toEqual([{ stream: 'stdout', line: 'a', time: 1234 }]);
  });
});

describe('a follower polls on the clock until the writer is done', () => {
  it('looks every 250 ms unless told otherwise', async () => {
    const clock = new SimulatedClock();
    const got: string[] = [];
    const sub = readLogs({ dir, task: 'web', stream: 'stdout', follow: true, clock }).subscribe((l) => got.push(l.line));
    writeFileSync(join(dir, 'web.stdout.0'), 'a\n');
    await clock.advance(249);
    expect(got).toEqual([]);
    await clock.advance(1);
    expect(got).toEqual(['a']);
    sub.unsubscribe();
  });

  it('holds back an unterminated line while following, and gives it once the writer is done', async () => {
    const clock = new SimulatedClock();
    let active = true;
    const got: LogLine[] = [];
    let done = false;
    readLogs({ dir, task: 'web', follow: true, clock, pollMs: 10, isActive: () => active }).subscribe({ next: (l) => got.push(l), complete: () => (done = true) });
    writeFileSync(join(dir, 'web.stdout.0'), 'a\nhalf');
    writeFileSync(join(dir, 'web.stderr.0'), 'err');
    await clock.advance(10);
    expect(got.map((l) => l.line)).toEqual(['a']);
    expect(done).toBe(false);
    active = false;
    await clock.advance(10);
    expect(got.map((l) => `${l.stream}:${l.line}`)).toEqual(['stdout:a', 'stdout:half', 'stderr:err']);
    expect(got.map((l) => l.time)).toEqual([10, 20, 20]);
    expect(done).toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });

  it('a follow with a tail starts from the last complete lines', async () => {
    writeFileSync(join(dir, 'web.stdout.0'), 'a\nb\nc\npartial');
    const clock = new SimulatedClock();
    const got: string[] = [];
    let active = true;
    readLogs({ dir, task: 'web', stream: 'stdout', follow: true, tail: 1, clock, pollMs: 10, isActive: () => active }).subscribe((l) => got.push(l.line));
    expect(got).toEqual(['c']);
    active = false;
    await clock.advance(10);
    expect(got).toEqual(['c', 'partial']);
  });

  it('ends with the error when asking whether the writer is done throws', async () => {
    const clock = new SimulatedClock();
    let error: unknown;
    readLogs({
      dir,
      task: 'web',
      follow: true,
      clock,
      pollMs: 10,
      isActive: () => {
        throw new Error('boom');
      },
    }).subscribe({ error: (e) => (error = e) });
    await clock.advance(10);
    expect((error as Error).message).toBe('boom');
    expect(clock.pendingTimers).toBe(0);
  });

  it('stops emitting at once when unsubscribed in the middle of a batch', async () => {
    const clock = new SimulatedClock();
    const got: string[] = [];
    const sub = readLogs({ dir, task: 'web', stream: 'stdout', follow: true, clock, pollMs: 10 }).subscribe((l) => {
      got.push(l.line);
      if (got.length === 2) sub.unsubscribe();
    });
    writeFileSync(join(dir, 'web.stdout.0'), 'a\nb\nc\nd\n');
    await clock.advance(10);
    expect(got).toEqual(['a', 'b']);
    expect(clock.pendingTimers).toBe(0);
  });

  it('reads on where it left off, never twice', async () => {
    const clock = new SimulatedClock();
    const got: string[] = [];
    const sub = readLogs({ dir, task: 'web', stream: 'stdout', follow: true, clock, pollMs: 10 }).subscribe((l) => got.push(l.line));
    const w = new RotatingLogWriter(dir, 'web.stdout', { maxFiles: 10, maxFileSize: 4 });
    w.write('ab\n');
    await clock.advance(10);
    w.write('cd\nef');
    await clock.advance(10);
    w.write('\n');
    await clock.advance(10);
    w.close();
    expect(got).toEqual(['ab', 'cd', 'ef']);
    sub.unsubscribe();
  });
});
