/**
 * `runner.logs(task, opts)` in process (Nomad's `alloc logs`): a read-only controller of the task's driver is
 * built for the reading, and a follower ends once the task is dead. The driver here keeps its lines in
 * memory, and ends a reader's stream when the reader is closed, as raw_exec does with its files.
 */
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { LogsUnsupportedError } from '../../src/runtime/task-logs.ts';
import type { Controller, Driver, DriverContext, LogLine, LogOptions } from '../../src/drivers/controller.ts';
import type { AllocSpec, TaskSpec } from '../../src/jobspec/types.ts';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

/** A reader the test can see: what it was built with, what it was asked, and whether it was closed. */
interface Reader {
  task: TaskSpec;
  ctx: DriverContext;
  opts?: LogOptions;
  lines: Subject<LogLine>;
  closed: number;
}

/**
 * The mock driver for running, with `logs()` on every controller, each reader's lines fed by the test; with
 * `keepsLogs: false` its controllers have no `logs()` at all.
 */
function loggingDriver({ keepsLogs = true } = {}) {
  const mock = createMockDriver();
  const readers: Reader[] = [];
  const driver: Driver = {
    name: 'mock',
    controller(task, ctx): Controller {
      const inner = mock.controller(task, ctx);
      const reader: Reader = { task, ctx, lines: new Subject<LogLine>(), closed: 0 };
      readers.push(reader);
      const logs = (opts: LogOptions) => {
        reader.opts = opts;
        return reader.lines.asObservable();
      };
      const close = async () => {
        reader.closed++;
        reader.lines.complete();
      };
      return new Proxy(inner, {
        get(target, key) {
          if (key === 'logs') return keepsLogs ? logs : undefined;
          if (key === 'close') return close;
          const value: unknown = Reflect.get(target, key, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    },
  };
  return { driver, readers };
}

const alloc = (task: TaskSpec): AllocSpec => ({ id: 'logs1', job: 'j', group: 'g', type: 'batch', tasks: [task] });
const web: TaskSpec = { name: 'web', driver: 'mock', config: { run_for: '10s' }, logs: { maxFiles: 2, maxFileSize: 1 } };

function start(drivers: Record<string, Driver>, task: TaskSpec = web) {
  const clock = new SimulatedClock(0);
  const runner = createAllocRunner(alloc(task), { clock, builtinHooks: false, drivers, dataDir: '/data' }).start();
  return { clock, runner };
}

const line = (text: string): LogLine => ({ stream: 'stdout', line: text, time: 0 });

describe("task logs (Nomad's alloc logs)", () => {
  it("reads the task's lines through a new controller of its driver, built with the task's dirs and log settings", async () => {
    const { driver, readers } = loggingDriver();
    const { clock, runner } = start({ mock: driver });
    await clock.advance(1);
    const got: string[] = [];
    const sub = runner.logs('web', { stream: 'stdout', tail: 5 }).subscribe((l) => got.push(l.line));
    const reader = readers.at(-1)!;
    expect(reader.opts).toEqual({ stream: 'stdout', tail: 5 });
    expect(reader.task.name).toBe('web');
    expect(reader.ctx).toMatchObject({ allocId: 'logs1', env: {}, taskDir: '/data/allocs/logs1/web', allocDir: '/data/allocs/logs1', logs: web.logs });
    expect(reader.ctx.clock).toBe(clock);
    reader.lines.next(line('hello'));
    expect(got).toEqual(['hello']);
    sub.unsubscribe();
    expect(reader.closed).toBe(1);
  });

  it('without follow, a reader stays open while the task runs and after it is dead', async () => {
    const { driver, readers } = loggingDriver();
    const { clock, runner } = start({ mock: driver });
    await clock.advance(1);
    runner.logs('web', {}).subscribe();
    const reader = readers.at(-1)!;
    await clock.advance(10_000);
    expect(runner.getState().taskStates.web!.state).toBe('dead');
    expect(reader.closed).toBe(0);
  });

  it('with follow, the reader is closed once the task is dead, so the stream drains and completes', async () => {
    const { driver, readers } = loggingDriver();
    const { clock, runner } = start({ mock: driver });
    await clock.advance(1);
    let completed = false;
    runner.logs('web', { follow: true }).subscribe({ complete: () => (completed = true) });
    const reader = readers.at(-1)!;
    await clock.advance(5_000);
    expect(reader.closed).toBe(0);
    expect(completed).toBe(false);
    await clock.advance(5_000);
    expect(reader.closed).toBeGreaterThan(0);
    expect(completed).toBe(true);
  });

  it('fails with ErrLogsUnsupported for a driver whose controllers keep no logs', async () => {
    const { driver } = loggingDriver({ keepsLogs: false });
    const { runner } = start({ mock: driver });
    let err: unknown;
    runner.logs('web', {}).subscribe({ error: (e) => (err = e) });
    expect(err).toBeInstanceOf(LogsUnsupportedError);
    expect(err).toMatchObject({ code: 'ErrLogsUnsupported', name: 'LogsUnsupportedError', message: 'driver "mock" does not keep task logs' });
  });

  it('fails, naming the allocation and the task, for a task it does not have', async () => {
    const { driver } = loggingDriver();
    const { runner } = start({ mock: driver });
    let err: unknown;
    runner.logs('nope', {}).subscribe({ error: (e) => (err = e) });
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toBe('allocation logs1 has no task "nope" with a known driver');
  });
});
