/**
 * The mock driver: Nomad's mock_driver behaviour, timed entirely by the clock it is given, so a test on a
 * SimulatedClock runs a "10 minute" task instantly and deterministically. Implements the Controller contract.
 */
import type { Observable } from 'rxjs';
import type { ExitResult, LogConfig, TaskSpec } from '../../jobspec/types.ts';
import { sleep, type Clock } from '../clock.ts';
import type { Controller, Driver, DriverContext, DriverHandle, DriverNetwork, ExecResult, ExecSession, LogLine, LogOptions, ShutdownOptions } from '../controller.ts';
import { readLogs } from '../raw-exec/log-reader.ts';
import { allocLogDir, DEFAULT_LOG_CONFIG, validateLogConfig } from '../raw-exec/rotating-log.ts';
import { killedBy } from '../signals.ts';
import { signalFreeCalls } from '../../hooks/signal-free.ts';
import { parseMockConfig, type MockTaskConfig } from './mock-config.ts';
import { mockExecSession } from './mock-exec-streaming.ts';
import { hasLogDir, MockLogFiles } from './mock-log-files.ts';
import { mockTaskOutput, type MockTaskOutput } from './mock-output.ts';

/** A start error from the `start_error` option; `recoverable` feeds the restart decision. */
export class MockStartError extends Error {
  readonly code = 'ErrMockStart';
  constructor(message: string, readonly recoverable: boolean) {
    super(message);
    this.name = 'MockStartError';
  }
}

/** Raised when a controller call needs a started task. */
export class TaskNotStartedError extends Error {
  readonly code = 'ErrTaskNotRunning';
  constructor(task: string) {
    super(`task ${JSON.stringify(task)} is not running`);
    this.name = 'TaskNotStartedError';
  }
}

type Phase = 'new' | 'prepared' | 'running' | 'exited';

/**
 * The mock's process table: its workloads live beside the clock, not in the driver or runner that started
 * them, as real processes outlive a crashed agent. A runner rebuilt from a snapshot on the same clock (the
 * crash tests and the restore properties) reattaches to the workload itself, with whatever it was already
 * told (a shutdown signal still takes effect); on a new clock there is none, so recovery resumes the run.
 */
const workloads = new WeakMap<Clock, Map<string, MockController>>();

function workloadKey(allocId: string, task: string, startedAt: number): string {
  return `${allocId}\u0000${task}\u0000${startedAt}`;
}

class MockController implements Controller {
  private phase: Phase = 'new';
  private config?: MockTaskConfig;
  private startedAt?: number;
  private readonly exited: Promise<ExitResult>;
  private resolveExit!: (r: ExitResult) => void;
  private timers: unknown[] = [];
  /** Where this attempt's lines go: the task's log files, or memory when the allocation has no log dir. */
  private output?: MockLogFiles | MockTaskOutput;
  private readonly allocDir: string;
  private readonly logConfig: LogConfig;
  private isEnded = false;
  private ended!: () => void;
  /** Settles when the workload exits or the controller is closed: a log follower ends there. */
  private readonly whenEnded = new Promise<void>((r) => {
    this.ended = () => {
      this.isEnded = true;
      r();
    };
  });
  /** Calls made, for tests that check what the runner asked of the driver. */
  readonly calls: string[] = [];

  constructor(
    private readonly task: TaskSpec,
    private readonly clock: Clock,
    private readonly allocId: string,
    ctx: Pick<DriverContext, 'allocDir' | 'logs'>,
    recovered?: { startedAt: number },
  ) {
    this.exited = new Promise((r) => (this.resolveExit = r));
    this.allocDir = ctx.allocDir;
    this.logConfig = ctx.logs ?? task.logs ?? DEFAULT_LOG_CONFIG;
    // prepare and remove never read their signal, so the bindings need not make one for them (signal-free.ts).
    signalFreeCalls(this, { prepare: MockController.prototype.prepare, remove: MockController.prototype.remove });
    if (recovered) {
      this.config = parseMockConfig(task.config);
      this.startedAt = recovered.startedAt;
      this.phase = 'running';
      this.table().set(workloadKey(allocId, task.name, recovered.startedAt), this);
      this.scheduleRun(Math.max(0, this.config.runFor - (clock.now() - recovered.startedAt)));
    }
  }

  async prepare(): Promise<void> {
    this.calls.push('prepare');
    if (this.phase !== 'new') return;
    this.config = parseMockConfig(this.task.config);
    if (this.config.stdoutString !== undefined || this.config.stderrString !== undefined) validateLogConfig(this.logConfig);
    // start reads its signal only to cut a start_block_for short: without one it never looks at it.
    if (this.config.startBlockFor === 0) signalFreeCalls(this, { start: MockController.prototype.start });
    this.phase = 'prepared';
  }

  async start(signal: AbortSignal): Promise<void> {
    this.calls.push('start');
    if (this.phase === 'running' || this.phase === 'exited') return;
    if (this.phase === 'new') await this.prepare();
    const cfg = this.config!;
    if (cfg.startBlockFor > 0) await sleep(this.clock, cfg.startBlockFor, signal);
    if (cfg.startError) throw new MockStartError(cfg.startError, cfg.startErrorRecoverable);
    this.phase = 'running';
    this.startedAt = this.clock.now();
    this.table().set(workloadKey(this.allocId, this.task.name, this.startedAt), this);
    this.scheduleRun(cfg.runFor);
    this.scheduleOutput('stdout', cfg.stdoutString, cfg.stdoutRepeat, cfg.stdoutRepeatDuration);
    this.scheduleOutput('stderr', cfg.stderrString, cfg.stderrRepeat, cfg.stderrRepeatDuration);
  }

  wait(signal: AbortSignal): Promise<ExitResult> {
    this.calls.push('wait');
    if (this.phase === 'new' || this.phase === 'prepared') return Promise.reject(new TaskNotStartedError(this.task.name));
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      void this.exited.then((r) => {
        signal.removeEventListener('abort', onAbort);
        resolve(r);
      });
    });
  }

  async shutdown(opts: ShutdownOptions): Promise<void> {
    this.calls.push('shutdown');
    // Already stopped or never started: nothing to stop, which is success.
    if (this.phase !== 'running') return;
    const killAfter = this.config!.killAfter ?? 0;
    const graceful = killedBy(opts.signal);
    if (killAfter <= opts.timeout) {
      this.later(killAfter, () => this.finish(graceful));
    } else {
      // The task ignores the signal past the timeout: force-kill it then, like a real driver.
      this.later(opts.timeout, () => this.finish(killedBy('SIGKILL')));
    }
  }

  async terminate(): Promise<void> {
    this.calls.push('terminate');
    if (this.phase === 'running') this.finish(killedBy('SIGKILL'));
  }

  async remove(): Promise<void> {
    this.calls.push('remove');
  }

  async close(): Promise<void> {
    this.calls.push('close');
    this.ended();
  }

  async signal(sig: string): Promise<void> {
    this.calls.push(`signal:${sig}`);
    if (this.phase !== 'running') throw new TaskNotStartedError(this.task.name);
    killedBy(sig); // validates the name
    if (this.config!.signalError) throw new Error(this.config!.signalError);
  }

  network(): DriverNetwork | undefined {
    const cfg = this.config;
    if (this.phase !== 'running' || !cfg || (cfg.driverIp === undefined && cfg.driverPortMap === undefined)) return undefined;
    return {
      ...(cfg.driverIp !== undefined && { ip: cfg.driverIp }),
      ...(cfg.driverPortMap && { portMap: { ...cfg.driverPortMap } }),
      autoAdvertise: cfg.driverAdvertise,
    };
  }

  /** Nomad's mock ExecTask: `exec_command`'s output and exit code after its run_for, on the clock. */
  async exec(command: string, args: string[], opts: { timeout: number }, signal: AbortSignal): Promise<ExecResult> {
    this.calls.push(`exec:${[command, ...args].join(' ')}`);
    if (this.phase !== 'running') throw new TaskNotStartedError(this.task.name);
    const result = this.config!.execCommand ?? { runFor: 0, exitCode: 0, stdoutString: '' };
    if (result.runFor > opts.timeout) {
      await sleep(this.clock, opts.timeout, signal);
      throw new Error(`exec ${JSON.stringify(command)} in task ${JSON.stringify(this.task.name)} timed out after ${opts.timeout} ms`);
    }
    await sleep(this.clock, result.runFor, signal);
    return { output: result.stdoutString, exitCode: result.exitCode };
  }

  /** Nomad's mock ExecTaskStreaming (mock-exec-streaming.ts): `exec_command` played on the clock, or `showinput`. */
  execStreaming(command: string, args: string[], signal: AbortSignal): ExecSession {
    this.calls.push(`execStreaming:${[command, ...args].join(' ')}`);
    if (this.phase !== 'running') throw new TaskNotStartedError(this.task.name);
    return mockExecSession([command, ...args], this.config!.execCommand, this.clock, signal);
  }

  handle(): DriverHandle | undefined {
    if (this.startedAt === undefined) return undefined;
    return { driver: 'mock', taskName: this.task.name, state: { startedAt: this.startedAt } };
  }

  /**
   * The task's output across its attempts: what is kept (or its `tail`), then with `follow` new lines until
   * the workload exits or this controller is closed. A controller built only to read (Nomad's `alloc logs`)
   * gets what the running one wrote: from the task's log files when the allocation has a log dir (so after
   * an agent restart too), else from memory beside the clock.
   */
  logs(opts: LogOptions = {}): Observable<LogLine> {
    if (!hasLogDir(this.logDir)) return mockTaskOutput(this.clock, this.allocId, this.task.name).read(opts, this.whenEnded);
    return readLogs({ dir: this.logDir, task: this.task.name, ...opts, clock: this.clock, isActive: () => !this.isEnded });
  }

  private scheduleRun(runFor: number): void {
    const cfg = this.config!;
    this.later(runFor, () => this.finish({ exitCode: cfg.exitCode, signal: cfg.exitSignal, ...(cfg.exitErrMsg ? { err: cfg.exitErrMsg } : {}) }));
  }

  private scheduleOutput(stream: 'stdout' | 'stderr', text: string | undefined, repeat: number, every: number): void {
    if (text === undefined) return;
    for (let i = 0; i <= repeat; i++) {
      this.later(i * every, () => this.phase === 'running' && this.sink().write({ stream, line: text, time: this.clock.now() }));
    }
  }

  /** Chosen at the first line, when the alloc_dir hook (if it runs) has made the log dir. */
  private sink(): MockLogFiles | MockTaskOutput {
    return (this.output ??= hasLogDir(this.logDir) ? new MockLogFiles(this.logDir, this.task.name, this.logConfig) : mockTaskOutput(this.clock, this.allocId, this.task.name));
  }

  /** Worked out only when output is written or read: most mock tasks (the benches') have none. */
  private get logDir(): string {
    return allocLogDir(this.allocDir);
  }

  private later(ms: number, fn: () => void): void {
    this.timers.push(this.clock.setTimeout(fn, ms));
  }

  private table(): Map<string, MockController> {
    let t = workloads.get(this.clock);
    if (!t) workloads.set(this.clock, (t = new Map()));
    return t;
  }

  private finish(result: ExitResult): void {
    if (this.phase === 'exited') return;
    this.phase = 'exited';
    if (this.startedAt !== undefined) this.table().delete(workloadKey(this.allocId, this.task.name, this.startedAt));
    for (const t of this.timers) this.clock.clearTimeout(t);
    this.timers = [];
    if (this.output instanceof MockLogFiles) this.output.close();
    this.ended();
    this.resolveExit(result);
  }
}

/**
 * Controllers a mock driver lists (the newest). Each runner has its own driver and a task that keeps
 * failing gets a new controller per run: an unbounded list grew with every restart of a long-flapping task.
 */
export const MOCK_CONTROLLERS_KEPT = 100;

/** Nomad's mock driver, registered as `mock` (and `mock_driver`, Nomad's own name). */
export function createMockDriver(opts: { name?: string } = {}): Driver & { controllers: MockController[] } {
  const controllers: MockController[] = [];
  const remember = (c: MockController) => {
    controllers.push(c);
    if (controllers.length > MOCK_CONTROLLERS_KEPT) controllers.shift();
  };
  return {
    name: opts.name ?? 'mock',
    controllers,
    controller(task: TaskSpec, ctx: DriverContext): Controller {
      const c = new MockController(task, ctx.clock, ctx.allocId, ctx);
      remember(c);
      return c;
    },
    recover(handle: DriverHandle, task: TaskSpec, ctx: DriverContext): Controller {
      const startedAt = handle.state?.startedAt;
      if (typeof startedAt !== 'number') throw new Error(`cannot recover mock task ${JSON.stringify(task.name)}: the handle has no start time`);
      const live = workloads.get(ctx.clock)?.get(workloadKey(ctx.allocId, task.name, startedAt));
      if (live) {
        remember(live);
        return live;
      }
      const c = new MockController(task, ctx.clock, ctx.allocId, ctx, { startedAt });
      remember(c);
      return c;
    },
  };
}

export type { MockController };
