/**
 * Nomad's log rotation (logmon's FileRotator): a stream is written to `<dir>/<base>.N`, N from 0; when a
 * file reaches `maxFileSize` bytes the writer moves to N+1 and deletes files older than the last `maxFiles`.
 * Like Nomad, files are cut at the byte limit (a line may span two files); readers join them in order.
 */
import { closeSync, mkdirSync, openSync, readdirSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { LogConfig } from '../../jobspec/types.ts';

/** Nomad's defaults: 10 files of 10 MB per stream. */
export const DEFAULT_LOG_CONFIG: Readonly<LogConfig> = Object.freeze({ maxFiles: 10, maxFileSize: 10 * 1024 * 1024 });

/** A `logs` block that cannot work (fewer than one file, or files under one byte). */
export class LogConfigError extends RangeError {
  readonly code = 'ErrLogConfig';
  constructor(config: LogConfig) {
    super(`logs: max_files and max_file_size must be at least 1 (got ${config.maxFiles} files of ${config.maxFileSize} bytes)`);
    this.name = 'LogConfigError';
  }
}

/** Throws LogConfigError unless both limits are at least 1. */
export function validateLogConfig(config: LogConfig): void {
  if (!(config.maxFiles >= 1) || !(config.maxFileSize >= 1)) throw new LogConfigError(config);
}

/** The directory holding every task's rotated logs for an allocation (`<alloc dir>/alloc/logs`). */
export function allocLogDir(allocDir: string): string {
  return join(allocDir, 'alloc', 'logs');
}

/** The base name of a task's stream, e.g. `web.stdout` (files are `web.stdout.0`, `web.stdout.1`, ...). */
export function logBaseName(task: string, stream: 'stdout' | 'stderr'): string {
  return `${task}.${stream}`;
}

function readNames(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The indices of `<base>.N` files present in `dir` (or in `names`, a listing of it), ascending. */
export function listLogIndices(dir: string, base: string, names: readonly string[] = readNames(dir)): number[] {
  const prefix = `${base}.`;
  const indices: number[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const suffix = name.slice(prefix.length);
    if (/^\d+$/.test(suffix)) indices.push(Number(suffix));
  }
  return indices.sort((a, b) => a - b);
}

/** The path of file N of a stream. */
export function logFilePath(dir: string, base: string, index: number): string {
  return join(dir, `${base}.${index}`);
}

/**
 * Appends bytes to a rotating set of files. Writes are synchronous so bytes land in order and the size
 * accounting is exact; a pipe chunk is at most 64 KiB, so one write never blocks the loop for long.
 */
export class RotatingLogWriter {
  private fd: number | undefined;
  private index = 0;
  private size = 0;
  private closed = false;
  readonly maxFiles: number;
  readonly maxFileSize: number;

  /** `names`: a listing of `dir` the caller has just made (so `dir` exists), saving this writer its own. */
  constructor(
    readonly dir: string,
    readonly base: string,
    config: LogConfig = DEFAULT_LOG_CONFIG,
    names?: readonly string[],
  ) {
    validateLogConfig(config);
    this.maxFiles = Math.floor(config.maxFiles);
    this.maxFileSize = Math.floor(config.maxFileSize);
    if (!names) mkdirSync(dir, { recursive: true });
    // A restarted task continues its predecessor's sequence, as Nomad's rotator does, so no file is clobbered.
    const existing = listLogIndices(dir, base, names);
    if (existing.length > 0) {
      this.index = existing[existing.length - 1]!;
      this.size = statSync(this.path(this.index)).size;
    }
    this.purge(existing);
  }

  /** The index of the file being written. */
  get currentIndex(): number {
    return this.index;
  }

  /** Appends `chunk`, rotating as many times as its size needs. Ignored after close. */
  write(chunk: Uint8Array | string): void {
    if (this.closed) return;
    let buf = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    while (buf.length > 0) {
      if (this.size >= this.maxFileSize) this.rotate();
      const n = Math.min(buf.length, this.maxFileSize - this.size);
      const fd = this.open();
      let written = 0;
      while (written < n) written += writeSync(fd, buf, written, n - written);
      this.size += n;
      buf = buf.subarray(n);
    }
  }

  /** Closes the open file; later writes are dropped. Idempotent. */
  close(): void {
    this.closed = true;
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private open(): number {
    this.fd ??= openSync(this.path(this.index), 'a');
    return this.fd;
  }

  private rotate(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    this.index += 1;
    this.size = 0;
    this.purge();
  }

  /**
   * Deletes every file older than the newest `maxFiles` (the current file counts as one). `indices` is a
   * listing the caller just made (the constructor's), saving a second read of a dir every task logs to.
   */
  private purge(indices = listLogIndices(this.dir, this.base)): void {
    const oldestKept = this.index - this.maxFiles + 1;
    for (const i of indices) {
      if (i >= oldestKept) break;
      try {
        unlinkSync(this.path(i));
      } catch {
        // Already gone (a reader or a second writer removed it): the goal is reached either way.
      }
    }
  }

  private path(index: number): string {
    return logFilePath(this.dir, this.base, index);
  }
}

/** Writers for a task's stdout and stderr, from one listing of the log dir (made if missing). */
export function taskLogWriters(dir: string, task: string, config: LogConfig): [['stdout', RotatingLogWriter], ['stderr', RotatingLogWriter]] {
  mkdirSync(dir, { recursive: true });
  const names = readNames(dir);
  return [
    ['stdout', new RotatingLogWriter(dir, logBaseName(task, 'stdout'), config, names)],
    ['stderr', new RotatingLogWriter(dir, logBaseName(task, 'stderr'), config, names)],
  ];
}
