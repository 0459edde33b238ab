/**
 * The mock driver's logs, read as Nomad's `alloc logs` reads them: through a controller built only to
 * read, which gets what the running controller wrote (all of it, the tail, one stream), completes at once
 * without follow, and with follow ends when closed. The kept output is bounded per task and per clock.
 */
import { describe, expect, it } from 'vitest';
import type { DriverContext, LogLine, LogOptions } from '../../src/drivers/controller.ts';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.ts';
import { MOCK_LINES_KEPT, MOCK_TASKS_KEPT, mockTaskOutput } from '../../src/drivers/mock/mock-output.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';

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
