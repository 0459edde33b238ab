/** What `run` and `agent` share: picking the view, feeding it a runner's events, following task output. */
import { join } from 'node:path';
import type { Subscription } from 'rxjs';
import { realClock } from '../drivers/clock.ts';
import { readLogs } from '../drivers/raw-exec/log-reader.ts';
import type { AllocRunner } from '../runtime/create-alloc-runner.ts';
import type { AllocSpec } from '../jobspec/types.ts';
import { jsonView, plainView, tableView, type RunView } from './run-view.ts';

/** JSON lines with `--json`, the live table on a terminal, plain lines otherwise. */
export function chooseView(json: boolean): { view: RunView; tty: boolean } {
  const tty = !json && process.stdout.isTTY === true && process.env.TERM !== 'dumb';
  if (tty) process.once('exit', () => process.stdout.write('\x1b[?25h')); // never leave the cursor hidden
  const view = json ? jsonView(process.stdout) : tty ? tableView(process.stdout, { color: !process.env.NO_COLOR }) : plainView(process.stdout);
  return { view, tty };
}

/** Sends a runner's task events, state changes and refused commands to the view. */
export function watchRunner(view: RunView, spec: AllocSpec, runner: AllocRunner): void {
  runner.events$.subscribe(({ task, event }) => view.taskEvent(spec, task, event));
  runner.state$.subscribe((state) => view.state(spec, state));
  runner.rejections$.subscribe((r) => view.rejection(spec, r));
}

/**
 * Follows every task's log files (only new lines: a reused data dir holds earlier runs' logs) into the
 * view. `drain` reads what is left and ends; `stop` just ends.
 */
export function followTaskOutput(allocs: AllocSpec[], dataDir: string, view: RunView): { drain(): Promise<void>; stop(): void } {
  let active = true;
  const ended: Promise<void>[] = [];
  const subscriptions: Subscription[] = [];
  for (const spec of allocs) {
    const dir = join(dataDir, 'allocs', spec.id, 'alloc', 'logs');
    for (const t of spec.tasks) {
      ended.push(
        new Promise<void>((done) => {
          const lines$ = readLogs({ dir, task: t.name, follow: true, tail: 0, clock: realClock, pollMs: 200, isActive: () => active });
          subscriptions.push(
            lines$.subscribe({
              next: (l) => view.output?.(spec, t.name, l),
              complete: done,
              error: () => done(), // a log we cannot read costs the view some lines, not the run
            }),
          );
        }),
      );
    }
  }
  return {
    drain: async () => {
      active = false; // each follower reads to the end on its next poll, then completes
      await Promise.all(ended);
    },
    stop: () => subscriptions.forEach((s) => s.unsubscribe()),
  };
}

