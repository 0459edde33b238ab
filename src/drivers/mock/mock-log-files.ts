/**
 * The mock's output in the task's rotated log files, as Nomad's mock goes through logmon like every driver:
 * raw_exec's file names, rotation and reader, so `alloc logs` finds the lines after the agent restarts.
 * Used when the allocation has a log dir (the alloc_dir hook made it); a bare run keeps output in memory.
 */
import { existsSync } from 'node:fs';
import type { LogConfig } from '../../jobspec/types.ts';
import type { LogLine } from '../controller.ts';
import { taskLogWriters, type RotatingLogWriter } from '../raw-exec/rotating-log.ts';

/** Whether `logDir` is there to hold task output. */
export function hasLogDir(logDir: string): boolean {
  return existsSync(logDir);
}

/** One task attempt's writers for its stdout and stderr files; each line written ends with a newline. */
export class MockLogFiles {
  private writers?: Record<'stdout' | 'stderr', RotatingLogWriter>;
  private failed = false;

  constructor(
    private readonly dir: string,
    private readonly task: string,
    private readonly config: LogConfig,
  ) {}

  write(line: LogLine): void {
    if (this.failed) return;
    try {
      this.writers ??= Object.fromEntries(taskLogWriters(this.dir, this.task, this.config)) as Record<'stdout' | 'stderr', RotatingLogWriter>;
      this.writers[line.stream].write(`${line.line}\n`);
    } catch {
      // A full or vanished disk loses this task's logs, as raw_exec's do, but must not take the agent down
      // (the write runs in a clock timer, where a throw would be uncaught).
      this.failed = true;
      this.close();
    }
  }

  /** Closes the files; later writes are dropped. Idempotent. */
  close(): void {
    if (!this.writers) return;
    this.writers.stdout.close();
    this.writers.stderr.close();
  }
}
