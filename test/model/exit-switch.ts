/**
 * Nomad's mock driver with an exit switch, for path tests whose events include "the workload exits now, with
 * this code": every call goes to a real mock controller (start errors, kill signals, kill timeouts, all on the
 * runner's clock), but `exit(task, code)` ends the current workload on demand.
 */
import { createMockDriver, type Controller, type Driver } from '../../src/index.ts';
import type { ExitResult } from '../../machines/model.ts';

/** A mock driver whose running workloads can be ended from the test. */
export interface SwitchableDriver extends Driver {
  /** Ends `task`'s running workload with `exitCode`; throws if it has none (the path expected one). */
  exit(task: string, exitCode: number): void;
  /** How many workloads each task has started. */
  readonly starts: Record<string, number>;
}

/** Wraps the mock driver so each controller's `wait` also ends when the switch is thrown. */
export function switchableMockDriver(): SwitchableDriver {
  const mock = createMockDriver();
  const live = new Map<string, (r: ExitResult) => void>();
  const starts: Record<string, number> = {};
  const wrap = (task: string, inner: Controller): Controller => {
    let flip!: (r: ExitResult) => void;
    const switched = new Promise<ExitResult>((resolve) => (flip = resolve));
    const arm = () =>
      live.set(task, (r) => {
        flip(r);
        // The mock's own timers for this workload are cleared by ending it; its result is never read.
        void inner.terminate(new AbortController().signal);
      });
    return {
      prepare: (signal) => inner.prepare(signal),
      async start(signal) {
        await inner.start(signal);
        starts[task] = (starts[task] ?? 0) + 1;
        arm();
      },
      wait: (signal) => Promise.race([inner.wait(signal), switched]),
      async shutdown(opts, signal) {
        live.delete(task);
        return inner.shutdown(opts, signal);
      },
      async terminate(signal) {
        live.delete(task);
        return inner.terminate(signal);
      },
      remove: (signal) => inner.remove(signal),
      close: () => inner.close(),
      signal: (sig, signal) => inner.signal!(sig, signal),
      handle: () => inner.handle?.(),
    };
  };
  return {
    name: 'mock',
    starts,
    controller: (task, ctx) => wrap(task.name, mock.controller(task, ctx)),
    recover: (handle, task, ctx) => wrap(task.name, mock.recover!(handle, task, ctx)),
    exit(task, exitCode) {
      const end = live.get(task);
      if (!end) throw new Error(`task ${task} has no running workload to end`);
      live.delete(task);
      end({ exitCode, signal: 0 });
    },
  };
}
