/**
 * A task's output through its driver's `Controller.logs()` (Nomad's `alloc logs`): a read-only controller
 * of the task's driver is built for the reading, so a follower spans restarts (every attempt writes to the
 * same rotated files) and ends once the task is dead for good, after the last lines are read.
 */
import { filter, take, type Observable as RxObservable, Observable } from 'rxjs';
import type { Driver, DriverContext, LogLine, LogOptions } from '../drivers/controller.ts';
import type { TaskSpec } from '../jobspec/types.ts';

/** A driver whose controllers cannot read logs back. */
export class LogsUnsupportedError extends Error {
  readonly code = 'ErrLogsUnsupported';
  constructor(driver: string) {
    super(`driver ${JSON.stringify(driver)} does not keep task logs`);
    this.name = 'LogsUnsupportedError';
  }
}

/** What reading one task's logs needs: its driver, the context its controllers get, and when it is dead. */
export interface TaskLogsSource {
  driver: Driver;
  task: TaskSpec;
  ctx: DriverContext;
  /** Emits true once the task is dead and will not run again; a follower then drains and completes. */
  dead$: RxObservable<boolean>;
}

/** The task's log lines; with `follow`, new lines as they are written until the task is dead. */
export function taskLogs(source: TaskLogsSource, opts: LogOptions): Observable<LogLine> {
  return new Observable<LogLine>((subscriber) => {
    const reader = source.driver.controller(source.task, source.ctx);
    if (!reader.logs) {
      subscriber.error(new LogsUnsupportedError(source.driver.name));
      return;
    }
    const lines = reader.logs(opts).subscribe(subscriber);
    // Closing the reader tells the driver no more output is coming: it reads what is left and completes.
    const end = opts.follow ? source.dead$.pipe(filter(Boolean), take(1)).subscribe(() => void reader.close().catch(() => undefined)) : undefined;
    return () => {
      lines.unsubscribe();
      end?.unsubscribe();
      void reader.close().catch(() => undefined);
    };
  });
}
