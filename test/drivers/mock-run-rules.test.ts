/**
 * The mock driver's run, option by option, on a simulated clock (Nomad's drivers/mock): run_for and the
 * exit it ends with, start_error and start_block_for, kill_after against the kill timeout, scheduled
 * stdout/stderr, signals, exec, the network it reports, its handle and recovery of a live workload.
 */
import { describe, expect, it } from 'vitest';
import type { Controller, DriverContext, LogLine } from '../../src/drivers/controller.ts';
import { createMockDriver, MOCK_CONTROLLERS_KEPT, MockStartError } from '../../src/drivers/mock/mock-driver.ts';
import type { ExitResult } from '../../src/jobspec/types.ts';
import { settle, SimulatedClock } from '../../src/testing/simulated-clock.ts';

const never = new AbortController().signal;

function setup(config: Record<string, unknown>, opts: { allocId?: string; clock?: SimulatedClock } = {}) {
  const clock = opts.clock ?? new SimulatedClock();
  const ctx: DriverContext = { allocId: opts.allocId ?? 'a', env: {}, taskDir: '/nonexistent', allocDir: '/nonexistent', clock };
  const driver = createMockDriver();
  const task = { name: 't', driver: 'mock', config };
  const c = driver.controller(task, ctx);
  return { clock, ctx, driver, task, c };
}

/** The exit once it has come, or 'running'. */
function watch(c: Controller): { get: () => ExitResult | 'running' } {
  let exit: ExitResult | 'running' = 'running';
  void c.wait(never).then((r) => (exit = r));
  return { get: () => exit };
}

async function started(config: Record<string, unknown>, opts?: { allocId?: string; clock?: SimulatedClock }) {
  const s = setup(config, opts);
  await s.c.start(never);
  return s;
}

function lines(c: Controller): LogLine[] {
  const out: LogLine[] = [];
  c.logs!({ follow: true }).subscribe((l) => out.push(l));
  return out;
}

describe('run_for, exit_code, exit_signal, exit_err_msg: the exit at the end of the run', () => {
  it.each<[string, Record<string, unknown>, number, ExitResult]>([
    ['no options: exits 0 at once', {}, 0, { exitCode: 0, signal: 0 }],
    ['run_for', { run_for: '10s' }, 10_000, { exitCode: 0, signal: 0 }],
    ['exit_code', { run_for: '1s', exit_code: 3 }, 1_000, { exitCode: 3, signal: 0 }],
    ['exit_signal', { run_for: '1s', exit_signal: 9 }, 1_000, { exitCode: 0, signal: 9 }],
    ['exit_err_msg', { run_for: '1s', exit_code: 1, exit_err_msg: 'crashed' }, 1_000, { exitCode: 1, signal: 0, err: 'crashed' }],
    ['an empty exit_err_msg is no error', { run_for: '1s', exit_err_msg: '' }, 1_000, { exitCode: 0, signal: 0 }],
  ])('%s', async (_what, config, runFor, result) => {
    const { clock, c } = await started(config);
    const exit = watch(c);
    if (runFor > 0) {
      await clock.advance(runFor - 1);
      expect(exit.get()).toBe('running');
    }
    await clock.advance(1);
    expect(exit.get()).toStrictEqual(result);
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('start_error, start_error_recoverable', () => {
  it.each([true, false])('start fails with start_error, recoverable %s, and the task never runs', async (recoverable) => {
    const { c } = setup({ start_error: 'no luck', start_error_recoverable: recoverable, run_for: '1s' });
    const err = await c.start(never).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(MockStartError);
    expect(err).toMatchObject({ name: 'MockStartError', code: 'ErrMockStart', message: 'no luck', recoverable });
    expect(c.handle!()).toBeUndefined();
    await expect(c.wait(never)).rejects.toMatchObject({ name: 'TaskNotStartedError', code: 'ErrTaskNotRunning', message: 'task "t" is not running' });
  });

  it('start_error_recoverable defaults to false', async () => {
    const { c } = setup({ start_error: 'x' });
    await expect(c.start(never)).rejects.toMatchObject({ recoverable: false });
  });
});

describe('start_block_for: start returns only after the block, and the run starts then', () => {
  it('start resolves at start_block_for, not before, and run_for counts from there', async () => {
    const { clock, c } = setup({ start_block_for: '2s', run_for: '1s' });
    let done = false;
    void c.start(never).then(() => (done = true));
    await clock.advance(1_999);
    expect(done).toBe(false);
    await clock.advance(1);
    expect(done).toBe(true);
    expect(c.handle!()).toEqual({ driver: 'mock', taskName: 't', state: { startedAt: 2_000 } });
    const exit = watch(c);
    await clock.advance(999);
    expect(exit.get()).toBe('running');
    await clock.advance(1);
    expect(exit.get()).toEqual({ exitCode: 0, signal: 0 });
  });

  it('an abort during the block rejects start with its reason', async () => {
    const { clock, c } = setup({ start_block_for: '2s' });
    const ac = new AbortController();
    const result = c.start(ac.signal).then(() => 'started', (e: unknown) => e);
    await clock.advance(500);
    ac.abort(new Error('stop'));
    expect(await result).toMatchObject({ message: 'stop' });
  });

  it('start_error comes after the block', async () => {
    const { clock, c } = setup({ start_block_for: '1s', start_error: 'late' });
    let err: unknown;
    void c.start(never).catch((e: unknown) => (err = e));
    await clock.advance(999);
    expect(err).toBeUndefined();
    await clock.advance(1);
    expect(err).toMatchObject({ message: 'late' });
  });
});

describe('kill_after: how long the task takes to exit after the kill signal', () => {
  it.each<[string, Record<string, unknown>, { signal: string; timeout: number }, number, ExitResult]>([
    ['no kill_after: exits at once by the signal sent', {}, { signal: 'SIGTERM', timeout: 5_000 }, 0, { exitCode: 143, signal: 15 }],
    ['kill_after within the timeout: exits then, by the signal sent', { kill_after: '2s' }, { signal: 'SIGINT', timeout: 5_000 }, 2_000, { exitCode: 130, signal: 2 }],
    ['kill_after equal to the timeout: still the signal sent', { kill_after: '5s' }, { signal: 'SIGTERM', timeout: 5_000 }, 5_000, { exitCode: 143, signal: 15 }],
    ['kill_after past the timeout: force-killed at the timeout', { kill_after: '6s' }, { signal: 'SIGTERM', timeout: 5_000 }, 5_000, { exitCode: 137, signal: 9 }],
  ])('%s', async (_what, config, opts, after, result) => {
    const { clock, c } = await started({ run_for: '1h', ...config });
    const exit = watch(c);
    await c.shutdown(opts, never);
    if (after > 0) {
      await clock.advance(after - 1);
      expect(exit.get()).toBe('running');
      await clock.advance(1);
    } else await clock.advance(0);
    expect(exit.get()).toStrictEqual(result);
    expect(clock.pendingTimers).toBe(0);
  });

  it('shutdown of a task that never started or has exited does nothing', async () => {
    const { clock, c } = setup({ run_for: '1s' });
    await c.shutdown({ signal: 'SIGTERM', timeout: 0 }, never);
    expect(clock.pendingTimers).toBe(0);
    await c.start(never);
    const exit = watch(c);
    await clock.advance(1_000);
    await c.shutdown({ signal: 'SIGTERM', timeout: 0 }, never);
    expect(clock.pendingTimers).toBe(0);
    expect(exit.get()).toEqual({ exitCode: 0, signal: 0 });
  });

  it('terminate kills a running task at once with SIGKILL; on a task not running it does nothing', async () => {
    const { clock, c } = setup({ run_for: '1h' });
    await c.terminate(never);
    expect(c.handle!()).toBeUndefined();
    await c.start(never);
    const exit = watch(c);
    await c.terminate(never);
    await settle();
    expect(exit.get()).toEqual({ exitCode: 137, signal: 9 });
    expect(clock.pendingTimers).toBe(0);
  });

  it('the first exit wins: a shutdown after run_for has ended leaves its exit', async () => {
    const { clock, c } = await started({ run_for: '1s', kill_after: '1s', exit_code: 2 });
    const exit = watch(c);
    await c.shutdown({ signal: 'SIGTERM', timeout: 5_000 }, never);
    await clock.advance(1_000);
    expect(exit.get()).toEqual({ exitCode: 2, signal: 0 });
  });
});

describe('stdout_string, stdout_repeat, stdout_repeat_duration (and stderr_*): output on the clock', () => {
  it.each<[string, Record<string, unknown>, 'stdout' | 'stderr', number[]]>([
    ['one line at start', { stdout_string: 'hi' }, 'stdout', [0]],
    ['repeated: 1 + stdout_repeat lines, stdout_repeat_duration apart', { stdout_string: 'hi', stdout_repeat: 3, stdout_repeat_duration: '1s' }, 'stdout', [0, 1_000, 2_000, 3_000]],
    ['stderr the same way', { stderr_string: 'hi', stderr_repeat: 2, stderr_repeat_duration: '500ms' }, 'stderr', [0, 500, 1_000]],
    ['no lines after the task exits', { stdout_string: 'hi', stdout_repeat: 5, stdout_repeat_duration: '1s', run_for: '2500ms' }, 'stdout', [0, 1_000, 2_000]],
  ])('%s', async (_what, config, stream, times) => {
    const { clock, c } = setup({ run_for: '1h', ...config });
    const out = lines(c);
    await clock.advance(100);
    await c.start(never);
    await clock.advance(10_000);
    expect(out).toEqual(times.map((t) => ({ stream, line: 'hi', time: 100 + t })));
  });

  it('no output option: no lines, and the log stream completes when the task exits', async () => {
    const { clock, c } = await started({ run_for: '1s' });
    let completed = false;
    const out: LogLine[] = [];
    c.logs!({ follow: true }).subscribe({ next: (l) => out.push(l), complete: () => (completed = true) });
    await clock.advance(999);
    expect(completed).toBe(false);
    await clock.advance(1);
    expect(completed).toBe(true);
    expect(out).toEqual([]);
  });

  it('a line due at the instant the task exits is not written after the exit', async () => {
    const { clock, c } = await started({ run_for: '1s', stdout_string: 'x', stdout_repeat: 1, stdout_repeat_duration: '1s' });
    const out = lines(c);
    await clock.advance(1_000);
    expect(out.map((l) => l.time)).toEqual([0]);
  });

  it('a task stopped by terminate writes no more lines', async () => {
    const { clock, c } = await started({ run_for: '1h', stdout_string: 'x', stdout_repeat: 3, stdout_repeat_duration: '1s' });
    const out = lines(c);
    await clock.advance(1_500);
    await c.terminate(never);
    await clock.advance(10_000);
    expect(out.map((l) => l.time)).toEqual([0, 1_000]);
  });
});

describe('signal and signal_error', () => {
  it('a running task takes a known signal; an unknown one is refused; the call is recorded', async () => {
    const { c } = await started({ run_for: '1h' });
    await expect(c.signal!('SIGHUP', never)).resolves.toBeUndefined();
    await expect(c.signal!('SIGNOPE', never)).rejects.toThrow('unknown signal "SIGNOPE"');
    expect((c as unknown as { calls: string[] }).calls).toEqual(['start', 'prepare', 'signal:SIGHUP', 'signal:SIGNOPE']);
  });

  it('signal_error makes every signal fail with that message', async () => {
    const { c } = await started({ run_for: '1h', signal_error: 'cannot signal' });
    await expect(c.signal!('SIGHUP', never)).rejects.toThrow(/^cannot signal$/);
  });

  it('a task not running refuses a signal', async () => {
    const { clock, c } = setup({ run_for: '1s' });
    await expect(c.signal!('SIGHUP', never)).rejects.toMatchObject({ name: 'TaskNotStartedError' });
    await c.start(never);
    await clock.advance(1_000);
    await expect(c.signal!('SIGHUP', never)).rejects.toMatchObject({ message: 'task "t" is not running' });
  });
});

describe('driver_ip, driver_port_map, driver_advertise: the network a running task reports', () => {
  it.each<[string, Record<string, unknown>, unknown]>([
    ['neither ip nor port map: none', { driver_advertise: true }, undefined],
    ['an ip only', { driver_ip: '10.0.0.2' }, { ip: '10.0.0.2', autoAdvertise: false }],
    ['a port map only', { driver_port_map: 'http:80' }, { portMap: { http: 80 }, autoAdvertise: false }],
    ['both, advertised', { driver_ip: '10.0.0.2', driver_port_map: 'http:80', driver_advertise: true }, { ip: '10.0.0.2', portMap: { http: 80 }, autoAdvertise: true }],
  ])('%s', async (_what, config, network) => {
    const { c } = await started({ run_for: '1h', ...config });
    expect(c.network!()).toStrictEqual(network);
  });

  it('none before the task runs or after it exits, and the port map handed out is a copy', async () => {
    const { clock, c } = setup({ run_for: '1s', driver_ip: '10.0.0.2', driver_port_map: 'http:80' });
    expect(c.network!()).toBeUndefined();
    await c.prepare(never);
    expect(c.network!()).toBeUndefined();
    await c.start(never);
    c.network!()!.portMap!['http'] = 1;
    expect(c.network!()!.portMap).toEqual({ http: 80 });
    await clock.advance(1_000);
    expect(c.network!()).toBeUndefined();
  });
});

describe('exec_command: what an exec into the task returns', () => {
  it('returns exec_command after its run_for on the clock', async () => {
    const { clock, c } = await started({ run_for: '1h', exec_command: { run_for: '2s', exit_code: 3, stdout_string: 'out' } });
    let result: unknown;
    void c.exec!('ls', ['-l'], { timeout: 5_000 }, never).then((r) => (result = r));
    await clock.advance(1_999);
    expect(result).toBeUndefined();
    await clock.advance(1);
    expect(result).toEqual({ output: 'out', exitCode: 3 });
    expect((c as unknown as { calls: string[] }).calls).toContain('exec:ls -l');
  });

  it('without exec_command: empty output, exit 0, at once', async () => {
    const { clock, c } = await started({ run_for: '1h' });
    const result = c.exec!('ls', [], { timeout: 0 }, never);
    await clock.advance(0);
    await expect(result).resolves.toEqual({ output: '', exitCode: 0 });
  });

  it('a run_for equal to the timeout completes', async () => {
    const { clock, c } = await started({ run_for: '1h', exec_command: { run_for: '1s' } });
    const result = c.exec!('ls', [], { timeout: 1_000 }, never);
    await clock.advance(1_000);
    await expect(result).resolves.toEqual({ output: '', exitCode: 0 });
  });

  it('a run_for past the timeout fails at the timeout, naming command and task', async () => {
    const { clock, c } = await started({ run_for: '1h', exec_command: { run_for: '10s' } });
    let err: unknown;
    void c.exec!('ls', [], { timeout: 1_000 }, never).catch((e: unknown) => (err = e));
    await clock.advance(999);
    expect(err).toBeUndefined();
    await clock.advance(1);
    expect(err).toMatchObject({ message: 'exec "ls" in task "t" timed out after 1000 ms' });
  });

  it('a task not running refuses exec', async () => {
    const { c } = setup({ run_for: '1h' });
    await expect(c.exec!('ls', [], { timeout: 1_000 }, never)).rejects.toMatchObject({ name: 'TaskNotStartedError' });
  });
});

describe('wait, prepare, start: the calls on one task', () => {
  it('wait with an aborted signal rejects with its reason; an abort during the wait does too', async () => {
    const { c } = await started({ run_for: '1h' });
    const reason = new Error('gone');
    await expect(c.wait(AbortSignal.abort(reason))).rejects.toBe(reason);
    const ac = new AbortController();
    const w = c.wait(ac.signal);
    ac.abort(reason);
    await expect(w).rejects.toBe(reason);
  });

  it('a prepared task that never started is not running', async () => {
    const { c } = setup({});
    await c.prepare(never);
    await expect(c.wait(never)).rejects.toMatchObject({ name: 'TaskNotStartedError' });
  });

  it('a second prepare, or a second start, changes nothing', async () => {
    const { clock, c } = setup({ run_for: '1s' });
    await c.prepare(never);
    await c.prepare(never);
    await c.start(never);
    await clock.advance(500);
    await c.start(never);
    expect(c.handle!()).toEqual({ driver: 'mock', taskName: 't', state: { startedAt: 0 } });
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(500);
    await c.start(never);
    expect(clock.pendingTimers).toBe(0);
    expect((c as unknown as { calls: string[] }).calls).toEqual(['prepare', 'prepare', 'start', 'start', 'start']);
  });

  it('prepare parses the config: a bad one fails prepare', async () => {
    const { c } = setup({ run_for: true });
    await expect(c.prepare(never)).rejects.toMatchObject({ name: 'MockConfigError' });
  });

  it('remove and close are recorded and leave a running task alone', async () => {
    const { clock, c } = await started({ run_for: '1s' });
    const exit = watch(c);
    await c.remove(never);
    await c.close!();
    expect((c as unknown as { calls: string[] }).calls).toEqual(['start', 'prepare', 'wait', 'remove', 'close']);
    await clock.advance(1_000);
    expect(exit.get()).toEqual({ exitCode: 0, signal: 0 });
  });
});

describe('the driver and recovery of a live workload', () => {
  it("is named mock unless named otherwise, and lists the controllers it made", () => {
    expect(createMockDriver().name).toBe('mock');
    expect(createMockDriver({ name: 'mock_driver' }).name).toBe('mock_driver');
    const { driver, c } = setup({});
    expect(driver.controllers).toEqual([c]);
  });

  it('lists only the newest controllers it made, so a task restarted without end does not grow it', () => {
    const { driver, task, ctx } = setup({});
    const made = Array.from({ length: MOCK_CONTROLLERS_KEPT + 5 }, () => driver.controller(task, ctx));
    expect(driver.controllers).toHaveLength(MOCK_CONTROLLERS_KEPT);
    expect(driver.controllers).toEqual(made.slice(-MOCK_CONTROLLERS_KEPT));
  });

  it('a handle without a start time cannot be recovered', () => {
    const { driver, task, ctx } = setup({});
    expect(() => driver.recover!({ driver: 'mock', taskName: 't', state: {} }, task, ctx)).toThrow('cannot recover mock task "t": the handle has no start time');
  });

  it('on the same clock, recovery reattaches to the live workload itself', async () => {
    const { driver, task, ctx, c } = await started({ run_for: '1h' });
    const again = driver.recover!(c.handle!()!, task, ctx);
    expect(again).toBe(c);
    expect(driver.controllers).toEqual([c, c]);
  });

  it('a workload of another allocation, or one that has exited, is not reattached', async () => {
    const { clock, driver, task, ctx, c } = await started({ run_for: '1s' });
    const other = driver.recover!(c.handle!()!, task, { ...ctx, allocId: 'b' });
    expect(other).not.toBe(c);
    await clock.advance(1_000);
    const after = driver.recover!(c.handle!()!, task, ctx);
    expect(after).not.toBe(c);
  });

  it('recovered on a new clock, the task runs the rest of its run_for, and at once if that has passed', async () => {
    const first = await started({ run_for: '10s', exit_code: 4 });
    await first.clock.advance(4_000);
    const clock = new SimulatedClock(4_000);
    const again = first.driver.recover!(first.c.handle!()!, first.task, { ...first.ctx, clock });
    expect(again.handle!()).toEqual({ driver: 'mock', taskName: 't', state: { startedAt: 0 } });
    const exit = watch(again);
    await clock.advance(5_999);
    expect(exit.get()).toBe('running');
    await clock.advance(1);
    expect(exit.get()).toEqual({ exitCode: 4, signal: 0 });

    const late = new SimulatedClock(60_000);
    const overdue = first.driver.recover!(first.c.handle!()!, first.task, { ...first.ctx, clock: late });
    const lateExit = watch(overdue);
    await settle();
    await late.advance(0);
    expect(lateExit.get()).toEqual({ exitCode: 4, signal: 0 });
    expect(late.now()).toBe(60_000);
  });

  it('a recovered workload is in the table: recovering it again reattaches to it', async () => {
    const first = await started({ run_for: '10s' });
    const clock = new SimulatedClock(1_000);
    const ctx = { ...first.ctx, clock };
    const again = first.driver.recover!(first.c.handle!()!, first.task, ctx);
    expect(first.driver.recover!(first.c.handle!()!, first.task, ctx)).toBe(again);
  });
});

describe('the calls on a task in each phase', () => {
  it('wait on a task never prepared nor started rejects: it is not running', async () => {
    const { c } = setup({ run_for: '1s' });
    await expect(c.wait(never)).rejects.toMatchObject({ name: 'TaskNotStartedError' });
  });

  it('prepare on a running task changes nothing: it still runs and exits at its time', async () => {
    const { clock, c } = await started({ run_for: '1s', exit_code: 5 });
    await c.prepare(never);
    const exit = watch(c);
    await clock.advance(1_000);
    expect(exit.get()).toEqual({ exitCode: 5, signal: 0 });
  });

  it('terminate before start leaves the task to start and run', async () => {
    const { clock, c } = setup({ run_for: '1s' });
    await c.terminate(never);
    await c.start(never);
    expect(c.handle!()).toEqual({ driver: 'mock', taskName: 't', state: { startedAt: 0 } });
    const exit = watch(c);
    await clock.advance(1_000);
    expect(exit.get()).toEqual({ exitCode: 0, signal: 0 });
  });

  it('shutdown and terminate are recorded by name', async () => {
    const { c } = await started({ run_for: '1h' });
    await c.shutdown({ signal: 'SIGTERM', timeout: 1_000 }, never);
    await c.terminate(never);
    expect((c as unknown as { calls: string[] }).calls).toEqual(['start', 'prepare', 'shutdown', 'terminate']);
  });
});

describe('recovery: more than one workload, and a recovered one stopped', () => {
  it('two workloads on one clock are both live: each is reattached', async () => {
    const clock = new SimulatedClock();
    const a = await started({ run_for: '1h' }, { clock, allocId: 'a' });
    const b = await started({ run_for: '1h' }, { clock, allocId: 'b' });
    expect(a.driver.recover!(a.c.handle!()!, a.task, a.ctx)).toBe(a.c);
    expect(b.driver.recover!(b.c.handle!()!, b.task, b.ctx)).toBe(b.c);
  });

  it('a handle with no state at all cannot be recovered', () => {
    const { driver, task, ctx } = setup({});
    expect(() => driver.recover!({ driver: 'mock', taskName: 't' } as never, task, ctx)).toThrow('cannot recover mock task "t": the handle has no start time');
  });

  it('the rest of run_for counts from the start time, on a task started after 0', async () => {
    const first = setup({ run_for: '10s' });
    await first.clock.advance(3_000);
    await first.c.start(never);
    const clock = new SimulatedClock(7_000);
    const again = first.driver.recover!(first.c.handle!()!, first.task, { ...first.ctx, clock });
    const exit = watch(again);
    await clock.advance(5_999);
    expect(exit.get()).toBe('running');
    await clock.advance(1);
    expect(exit.get()).toEqual({ exitCode: 0, signal: 0 });
  });

  it('a recovered task is running: shutdown stops it by the signal sent', async () => {
    const first = await started({ run_for: '1h' });
    const clock = new SimulatedClock(1_000);
    const again = first.driver.recover!(first.c.handle!()!, first.task, { ...first.ctx, clock });
    const exit = watch(again);
    await again.shutdown({ signal: 'SIGTERM', timeout: 1_000 }, never);
    await clock.advance(0);
    expect(exit.get()).toEqual({ exitCode: 143, signal: 15 });
  });
});
