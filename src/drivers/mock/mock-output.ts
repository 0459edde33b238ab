/**
 * The mock's task output when its allocation has no log dir (a run without the alloc_dir hook, as the
 * machines' tests and the benches make), kept beside the clock as its workloads are: one log per task of an
 * allocation, across its attempts, so a controller built only to read it gets what the running controller
 * wrote. Bounded like Nomad's log rotation: the last lines of each task, and the most recent tasks of a clock.
 * With a log dir the output goes to the task's rotated files instead (mock-log-files.ts).
 */
import { Observable, Subject } from 'rxjs';
import type { Clock } from '../clock.ts';
import type { LogLine, LogOptions } from '../controller.ts';

/** Lines kept per task (older ones are rotated away). */
export const MOCK_LINES_KEPT = 1_000;
/** Tasks whose output a clock keeps (the oldest written is dropped first). */
export const MOCK_TASKS_KEPT = 10_000;

/** One task's output: its last lines and the ones still to come. */
export class MockTaskOutput {
  private readonly lines: LogLine[] = [];
  private readonly added$ = new Subject<LogLine>();

  write(line: LogLine): void {
    this.lines.push(line);
    if (this.lines.length > MOCK_LINES_KEPT) this.lines.shift();
    this.added$.next(line);
  }

  /**
   * The kept lines of the asked stream (the last `tail` of them); without `follow` it then completes, with
   * it new lines follow until `ended` settles.
   */
  read(opts: LogOptions, ended: Promise<void>): Observable<LogLine> {
    return new Observable<LogLine>((subscriber) => {
      const wanted = (l: LogLine) => opts.stream === undefined || l.stream === opts.stream;
      const kept = this.lines.filter(wanted);
      const from = opts.tail === undefined ? 0 : Math.max(0, kept.length - opts.tail);
      for (const line of kept.slice(from)) subscriber.next(line);
      if (!opts.follow) {
        subscriber.complete();
        return;
      }
      const sub = this.added$.subscribe((l) => wanted(l) && subscriber.next(l));
      void ended.then(() => subscriber.complete());
      return () => sub.unsubscribe();
    });
  }
}

const outputs = new WeakMap<Clock, Map<string, MockTaskOutput>>();

/** The output of `task` in allocation `allocId` on `clock`, made on first use. */
export function mockTaskOutput(clock: Clock, allocId: string, task: string): MockTaskOutput {
  let table = outputs.get(clock);
  if (!table) outputs.set(clock, (table = new Map()));
  const key = `${allocId}\u0000${task}`;
  let out = table.get(key);
  if (!out) {
    if (table.size >= MOCK_TASKS_KEPT) table.delete(table.keys().next().value!);
    table.set(key, (out = new MockTaskOutput()));
  }
  return out;
}
