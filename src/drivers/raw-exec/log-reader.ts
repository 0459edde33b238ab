/**
 * Reads a task's rotated log files back as lines (Nomad's `alloc logs`), optionally following them by
 * polling on the driver's clock. Polling rather than fs.watch: it behaves the same on every filesystem and
 * under a simulated clock, and rotation is detected simply by the next index appearing.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { Observable } from 'rxjs';
import type { Clock } from '../clock.ts';
import type { LogLine } from '../controller.ts';
import { listLogIndices, logBaseName, logFilePath } from './rotating-log.ts';

/** What to read and how. */
export interface ReadLogsOptions {
  /** The alloc's log directory (`<alloc dir>/alloc/logs`). */
  dir: string;
  task: string;
  /** One stream, or both (stdout first) when absent. */
  stream?: 'stdout' | 'stderr';
  follow?: boolean;
  /** Lines from the end of each stream to start with; all when absent. */
  tail?: number;
  clock: Clock;
  /** How often a follower looks for new bytes. */
  pollMs?: number;
  /** While true a follower keeps polling; once false it drains what is left and completes. Absent: forever. */
  isActive?: () => boolean;
}

const CHUNK = 64 * 1024;

/** Incremental reader of one stream across its rotated files; remembers file index, offset and a partial line. */
class StreamCursor {
  private index: number | undefined;
  private offset = 0;
  private partial = '';
  private decoder = new StringDecoder('utf8');

  constructor(
    private readonly dir: string,
    private readonly base: string,
  ) {}

  /** Every complete line written since the last call. */
  readLines(): string[] {
    const text = this.readNew();
    if (text === '') return [];
    const parts = (this.partial + text).split('\n');
    this.partial = parts.pop() ?? '';
    return parts.map(stripCR);
  }

  /** The unterminated last line, once the writer is done. */
  flush(): string[] {
    const rest = this.partial + this.decoder.end();
    this.partial = '';
    return rest === '' ? [] : [stripCR(rest)];
  }

  private readNew(): string {
    let out = '';
    for (;;) {
      // List before reading: file N+1 exists only once N is full, so N can be read to its end safely.
      const indices = listLogIndices(this.dir, this.base);
      if (indices.length === 0) return out;
      if (this.index === undefined || this.index < indices[0]!) {
        // First read, or the writer rotated past us and deleted our file: continue at the oldest left.
        this.index = indices[0]!;
        this.offset = 0;
      }
      out += this.readToEnd(logFilePath(this.dir, this.base, this.index));
      const next = indices.find((i) => i > this.index!);
      if (next === undefined) return out;
      this.index = next;
      this.offset = 0;
    }
  }

  private readToEnd(path: string): string {
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch {
      return '';
    }
    try {
      const buf = Buffer.alloc(CHUNK);
      let out = '';
      for (;;) {
        const n = readSync(fd, buf, 0, CHUNK, this.offset);
        if (n <= 0) return out;
        this.offset += n;
        out += this.decoder.write(buf.subarray(0, n));
      }
    } finally {
      closeSync(fd);
    }
  }
}

function stripCR(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

/** The lines of a task's logs as an Observable; completes at the end unless following. */
export function readLogs(opts: ReadLogsOptions): Observable<LogLine> {
  const streams: ('stdout' | 'stderr')[] = opts.stream ? [opts.stream] : ['stdout', 'stderr'];
  const pollMs = opts.pollMs ?? 250;
  return new Observable<LogLine>((subscriber) => {
    const cursors = streams.map((stream) => ({ stream, cursor: new StreamCursor(opts.dir, logBaseName(opts.task, stream)) }));
    let timer: unknown;
    let stopped = false;
    const emit = (stream: 'stdout' | 'stderr', lines: string[]) => {
      const time = opts.clock.now();
      for (const line of lines) {
        if (stopped) return;
        subscriber.next({ stream, line, time });
      }
    };
    const drainAndComplete = () => {
      for (const { stream, cursor } of cursors) emit(stream, [...cursor.readLines(), ...cursor.flush()]);
      subscriber.complete();
    };
    const poll = () => {
      timer = undefined;
      if (stopped) return;
      try {
        // Sample activity before reading so the bytes written just before the writer closed are not missed.
        const active = opts.isActive?.() ?? true;
        if (!active) return drainAndComplete();
        for (const { stream, cursor } of cursors) emit(stream, cursor.readLines());
        if (!stopped) timer = opts.clock.setTimeout(poll, pollMs);
      } catch (err) {
        subscriber.error(err);
      }
    };
    try {
      for (const { stream, cursor } of cursors) {
        // Without follow the unterminated last line is final, so it counts towards the tail.
        const lines = opts.follow ? cursor.readLines() : [...cursor.readLines(), ...cursor.flush()];
        emit(stream, opts.tail === undefined ? lines : opts.tail <= 0 ? [] : lines.slice(-opts.tail));
      }
      if (opts.follow) timer = opts.clock.setTimeout(poll, pollMs);
      else subscriber.complete();
    } catch (err) {
      subscriber.error(err);
    }
    return () => {
      stopped = true;
      if (timer !== undefined) opts.clock.clearTimeout(timer);
    };
  });
}
