/**
 * The mock driver's logs, read as Nomad's `alloc logs` reads them: through a controller built only to
 * read, which gets what the running controller wrote (all of it, the tail, one stream), completes at once
 * without follow, and with follow ends when closed. Without a log dir the output is kept in memory, bounded
 * per task and per clock; with one (the alloc_dir hook's `alloc/logs`) it goes to raw_exec's rotated files,
 * so a driver on a new clock (an agent restarted) reads it back.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DriverContext, LogLine, LogOptions } from '../../src/drivers/controller.ts';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.ts';
import { MOCK_LINES_KEPT, MOCK_TASKS_KEPT, mockTaskOutput } from '../../src/drivers/mock/mock-output.ts';
import { allocLogDir } from '../../src/drivers/raw-exec/rotating-log.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { tempDir } from '../temp-dirs.ts';

const never = new AbortController().signal;
const task = { name: 't', driver: 'mock', config: { run_for: '1h', stdout_string: 'out', stderr_string: 'err', stdout_repeat: 4, stdout_repeat_duration: '1s' } };

function setup() {
  const clock = new SimulatedClock();
  const ctx: DriverContext = { allocId: 'a', env: {}, taskDir: '/nonexistent', allocDir: '/nonexistent', clock };
  const driver = createMockDriver();
  return { clock, ctx, driver };
}

function read(c: { logs?: (o: LogOptions) => import('rxjs').Observable<LogLine> }, opts: LogOptions) {
  const out: string[] = [];
  let done = false;
  c.logs!(opts).subscribe({ next: (l) => out.push(`${l.stream}:${l.line}@${l.time}`), complete: () => (done = true) });
  return { out, done: () => done };
}

describe('a reader controller gets what the running one wrote', () => {
  it('without follow: every kept line of the task, then complete', async () => {
    const { clock, ctx, driver } = setup();
    await driver.controller(task, ctx).start(never);
    await clock.advance(2_000);
    const r = read(driver.controller(task, ctx), {});
    expect(r.out).toEqual(['stdout:out@0', 'stderr:err@0', 'stdout:out@1000', 'stdout:out@2000']);
    expect(r.done()).toBe(true);
  });

  it('one stream, and the last `tail` lines of it', async () => {
    const { clock, ctx, driver } = setup();
    await driver.controller(task, ctx).start(never);
    await clock.advance(3_000);
    expect(read(driver.controller(task, ctx), { stream: 'stderr' }).out).toEqual(['stderr:err@0']);
    expect(read(driver.controller(task, ctx), { stream: 'stdout', tail: 2 }).out).toEqual(['stdout:out@2000', 'stdout:out@3000']);
    expect(read(driver.controller(task, ctx), { tail: 0 }).out).toEqual([]);
  });

  it('with follow: the kept lines, then new ones until the reader is closed', async () => {
    const { clock, ctx, driver } = setup();
    await driver.controller(task, ctx).start(never);
    const reader = driver.controller(task, ctx);
    const r = read(reader, { follow: true, stream: 'stdout' });
    await clock.advance(1_000);
    expect(r.out).toEqual(['stdout:out@0', 'stdout:out@1000']);
    expect(r.done()).toBe(false);
    await reader.close();
    await Promise.resolve();
    expect(r.done()).toBe(true);
    await clock.advance(1_000);
    expect(r.out).toHaveLength(2);
  });

  it('spans attempts of the task, and keeps allocations and tasks apart', async () => {
    const { clock, ctx, driver } = setup();
    await driver.controller({ ...task, config: { ...task.config, run_for: '100ms' } }, ctx).start(never);
    await clock.advance(500);
    await driver.controller(task, ctx).start(never);
    await clock.advance(1);
    expect(read(driver.controller(task, ctx), { stream: 'stdout' }).out).toEqual(['stdout:out@0', 'stdout:out@500']);
    expect(read(driver.controller({ ...task, name: 'other' }, ctx), {}).out).toEqual([]);
    expect(read(driver.controller(task, { ...ctx, allocId: 'b' }), {}).out).toEqual([]);
  });
});

describe('the kept output is bounded', () => {
  it(`keeps the last ${MOCK_LINES_KEPT} lines of a task`, () => {
    const out = mockTaskOutput(new SimulatedClock(), 'a', 't');
    for (let i = 0; i < MOCK_LINES_KEPT + 5; i++) out.write({ stream: 'stdout', line: String(i), time: i });
    const got: string[] = [];
    out.read({}, new Promise(() => undefined)).subscribe((l) => got.push(l.line));
    expect(got).toHaveLength(MOCK_LINES_KEPT);
    expect(got[0]).toBe('5');
  });

  it(`keeps the output of the last ${MOCK_TASKS_KEPT} tasks of a clock, dropping the oldest first`, () => {
    const clock = new SimulatedClock();
    mockTaskOutput(clock, 'first', 't').write({ stream: 'stdout', line: 'x', time: 0 });
    mockTaskOutput(clock, 'second', 't').write({ stream: 'stdout', line: 'y', time: 0 });
    for (let i = 0; i < MOCK_TASKS_KEPT - 1; i++) mockTaskOutput(clock, `n${i}`, 't');
    const lines = (id: string) => {
      const got: string[] = [];
      mockTaskOutput(clock, id, 't').read({}, new Promise(() => undefined)).subscribe((l) => got.push(l.line));
      return got;
    };
    expect(lines('second')).toEqual(['y']);
    expect(lines('first')).toEqual([]);
  });
});

describe("with a log dir: the task's rotated files", () => {
  function withLogDir(logs?: DriverContext['logs']) {
    const allocDir = tempDir('allocrun-mock-logs-');
    mkdirSync(allocLogDir(allocDir), { recursive: true });
    const clock = new SimulatedClock();
    const ctx: DriverContext = { allocId: 'a', env: {}, taskDir: join(allocDir, 't'), allocDir, clock, ...(logs && { logs }) };
    return { clock, ctx, driver: createMockDriver(), logDir: allocLogDir(allocDir) };
  }
  const lines = (r: { out: string[] }) => r.out.map((l) => l.replace(/@\d+$/, ''));

  it("writes each line to `<task>.<stream>.0`, and a driver on a new clock reads them back", async () => {
    const { clock, ctx, driver, logDir } = withLogDir();
    await driver.controller(task, ctx).start(never);
    await clock.advance(2_000);
    expect([readFileSync(join(logDir, 't.stdout.0'), 'utf8'), readFileSync(join(logDir, 't.stderr.0'), 'utf8')]).toEqual(['out\nout\nout\n', 'err\n']);
    const restarted = { ...ctx, clock: new SimulatedClock() };
    const r = read(createMockDriver().controller(task, restarted), {});
    expect([lines(r), r.done()]).toEqual([['stdout:out', 'stdout:out', 'stdout:out', 'stderr:err'], true]);
    expect(lines(read(createMockDriver().controller(task, restarted), { stream: 'stdout', tail: 1 }))).toEqual(['stdout:out']);
  });

  it("rotates by the task's logs settings, as raw_exec does", async () => {
    const { clock, ctx, driver, logDir } = withLogDir({ maxFiles: 2, maxFileSize: 8 });
    await driver.controller(task, ctx).start(never);
    await clock.advance(4_000);
    // Five lines of 4 bytes in files of 8: 0, 1 and 2; the oldest beyond two files is deleted.
    expect(readdirSync(logDir).filter((n) => n.startsWith('t.stdout')).sort()).toEqual(['t.stdout.1', 't.stdout.2']);
    expect(lines(read(driver.controller(task, ctx), { stream: 'stdout' }))).toEqual(['stdout:out', 'stdout:out', 'stdout:out']);
  });

  it('with follow: new lines of the running task, until the reader is closed', async () => {
    const { clock, ctx, driver } = withLogDir();
    await driver.controller(task, ctx).start(never);
    await clock.advance(1);
    const reader = driver.controller(task, ctx);
    const r = read(reader, { follow: true, stream: 'stdout' });
    expect(lines(r)).toEqual(['stdout:out']);
    await clock.advance(1_250);
    expect([lines(r), r.done()]).toEqual([['stdout:out', 'stdout:out'], false]);
    await reader.close();
    await clock.advance(250);
    expect([lines(r), r.done()]).toEqual([['stdout:out', 'stdout:out'], true]);
  });

  it('a log dir gone under a running task loses its lines, not the agent', async () => {
    // Files of one line: the second line opens a new file, in a dir no longer there.
    const { clock, ctx, driver, logDir } = withLogDir({ maxFiles: 2, maxFileSize: 4 });
    const c = driver.controller(task, ctx);
    await c.start(never);
    await clock.advance(1);
    rmSync(ctx.allocDir, { recursive: true, force: true });
    await clock.advance(2_000);
    mkdirSync(logDir, { recursive: true });
    expect(read(driver.controller(task, ctx), {}).out).toEqual([]);
    await c.terminate(never);
  });
});
