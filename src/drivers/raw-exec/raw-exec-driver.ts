/**
 * Nomad's `raw_exec` driver as a SwarmKit Controller: runs `config.command` with `config.args` (no shell)
 * in the task dir with exactly the task env, in its own process group, logs to rotated files, and can be
 * recovered by pid + start time after the agent restarts. A task with a `user` (or the agent's default
 * `taskUser`) runs as that user, which needs a root agent (task-user.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { EMPTY, Observable, Subject, takeUntil, throwError } from 'rxjs';
import type { ExitResult, LogConfig, TaskSpec } from '../../jobspec/types.ts';
import type { Clock } from '../clock.ts';
import type {
  Controller,
  Driver,
  DriverContext,
  DriverHandle,
  ExecResult,
  LogLine,
  LogOptions,
  ResourceUsage,
  ShutdownOptions,
  ExecSession,
} from '../controller.ts';
import { parseRawExecConfig, type RawExecConfig } from './config.ts';
import { CommandNotFoundError, RecoverError, SpawnError, TaskNotRunningError } from './errors.ts';
import { readLogs } from './log-reader.ts';
import { DEFAULT_CLOCK_TICKS, isLive, readProcStat } from './proc-stat.ts';
import { lookupBin, toSignalNumber } from './process.ts';
import { allocLogDir, DEFAULT_LOG_CONFIG, RotatingLogWriter, taskLogWriters, validateLogConfig } from './rotating-log.ts';
import { processGroupStats } from './stats.ts';
import type { Readable } from 'node:stream';
import { findEarlierSpawn, openOutput, spawnSupervised, type LaunchRequest, type TaskOutput } from './launch.ts';
import { warmSpawner } from './spawner.ts';
import { markStopping, stoppingReason, supervisorLive, type SupervisorRef } from './supervisor.ts';
import { AdoptedWorkload, SpawnedWorkload, type Workload } from './workload.ts';
import { execInTask } from './exec-in-task.ts';
import { execStreamingInTask } from './exec-streaming.ts';
import { resolveTaskUser, shareTaskDir, TaskUserError, userSwitching, type TaskUser } from './task-user.ts';

/** The driver's name in job files. */
export const RAW_EXEC = 'raw_exec';

/** Agent-level settings (Nomad's client config for the driver). */
export interface RawExecDriverOptions {
  /** Upper bound on any task's kill timeout (Nomad's `max_kill_timeout`); default 30 s. */
  maxKillTimeout?: number;
  /** How often a recovered process is checked for exit; default 100 ms. */
  pollIntervalMs?: number;
  /**
   * How often a recovered process is checked while its output pipes are read again; default 5 s. Their end
   * says the process exited, so this check only backs that up (a daemon the task left can hold them open).
   */
  watchedPollIntervalMs?: number;
  /** How often `logs({ follow: true })` looks for new output; default 250 ms. */
  logPollIntervalMs?: number;
  /** `/proc` time unit (USER_HZ); default 100. */
  clockTicksPerSecond?: number;
  /**
   * Run each workload under a supervisor that records its exit status, so it is known after an agent
   * crash (see supervisor.ts). Default true; needs `/bin/sh`, `setsid` (util-linux) and `mkfifo`, else off.
   */
  supervise?: boolean;
  /**
   * The user tasks run as when they name none (`allocrun agent --task-user`); a task's own `user` wins. The
   * agent must be root to switch users (task-user.ts); a task whose user it cannot switch to fails to start.
   */
  taskUser?: string;
}

/** The raw_exec driver; `recover`, `findStarted` and `stopBegun` are always present, and all return the concrete controller. */
export interface RawExecDriver extends Driver {
  controller(task: TaskSpec, ctx: DriverContext): RawExecController;
  recover(handle: DriverHandle, task: TaskSpec, ctx: DriverContext): RawExecController;
  findStarted(task: TaskSpec, ctx: DriverContext, signal: AbortSignal): Promise<RawExecController | undefined>;
  stopBegun(handle: DriverHandle): 'kill' | 'restart' | undefined;
  marksStop(handle: DriverHandle): boolean;
}

interface Settings {
  /** Absolute path of `setsid`; without it (or `mkfifo`) workloads run unsupervised (exit status not recoverable). */
  setsid: string | undefined;
  mkfifo: string | undefined;
  maxKillTimeout: number;
  pollIntervalMs: number;
  watchedPollIntervalMs: number;
  logPollIntervalMs: number;
  ticks: number;
  /** RawExecDriverOptions.taskUser. */
  taskUser: string | undefined;
}

const SIGKILL = constants.signals.SIGKILL;
/**
 * How long a task's exit waits for its output pipes to close. They close within a few milliseconds of the
 * exit, unless a process the task started outside its group still holds them.
 */
const OUTPUT_DRAIN_MS = 1_000;
/** Where `setsid` and `mkfifo` are looked for: the usual system dirs, then the agent's PATH. */
const TOOLS_PATH = ['/usr/bin', '/bin', '/usr/sbin', '/sbin', process.env.PATH ?? ''].join(':');

export { allocLogDir };

/**
 * Resolves after `ms` on the clock with false, or earlier with true when `p` settles; aborts reject. `p` is
 * always handled: it may reject with the very abort that ends the race, and a rejection nobody handles
 * ends the agent (issue 24).
 */
function exitsWithin(clock: Clock, ms: number, p: Promise<unknown>, signal: AbortSignal): Promise<boolean> {
  return new Promise<boolean>((resolveRace, reject) => {
    let timer: unknown;
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      fn();
    };
    const onAbort = () => finish(() => reject(signal.reason));
    p.then(
      () => finish(() => resolveRace(true)),
      (e: unknown) => finish(() => reject(e)),
    );
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    timer = clock.setTimeout(() => finish(() => resolveRace(false)), Math.max(0, ms));
  });
}

/** One raw_exec task attempt. All methods are idempotent; after close they still work but hold nothing open. */
export class RawExecController implements Controller {
  private config: RawExecConfig | undefined;
  /** The account the task runs as, once prepare has resolved it; undefined: the agent's own. */
  private user: TaskUser | undefined;
  private workload: Workload | undefined;
  private starting: Promise<void> | undefined;
  private writers: RotatingLogWriter[] = [];
  /** The output streams being read, released on close so the agent can exit while the task runs. */
  private readonly sources: Readable[] = [];
  private openStreams = 0;
  /** Resolves when the last output stream being read closes. */
  private outputClosed: Promise<void> = Promise.resolve();
  private resolveOutputClosed: () => void = () => undefined;
  private closed = false;
  private readonly closed$ = new Subject<void>();
  private readonly logDir: string;
  private readonly logConfig: LogConfig;

  constructor(
    private readonly task: TaskSpec,
    private readonly ctx: DriverContext,
    private readonly settings: Settings,
    adopted?: AdoptedWorkload,
  ) {
    this.logDir = allocLogDir(ctx.allocDir);
    this.logConfig = ctx.logs ?? task.logs ?? DEFAULT_LOG_CONFIG;
    this.workload = adopted;
  }

  /** The main process's pid once started (or recovered). */
  get pid(): number | undefined {
    return this.workload?.pid;
  }

  async prepare(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    this.config ??= parseRawExecConfig(this.task);
    validateLogConfig(this.logConfig);
    // Asked on every prepare: the account may have gone, or the agent may no longer be root, since the last.
    const userName = this.task.user ?? this.settings.taskUser;
    this.user = userName === undefined ? undefined : resolveTaskUser(this.task.name, userName);
    mkdirSync(this.logDir, { recursive: true });
    mkdirSync(this.ctx.taskDir, { recursive: true });
    if (this.user) shareTaskDir(this.ctx.taskDir, this.user);
  }

  start(signal: AbortSignal): Promise<void> {
    if (this.workload) return Promise.resolve();
    // Concurrent starts share one spawn: a second process would be untracked.
    this.starting ??= this.spawn(signal).finally(() => (this.starting = undefined));
    return this.starting;
  }

  /**
   * Resolves with the exit once the task's output has reached its log files: the exit status can come back
   * before the last bytes in the pipes are read, and a task reported dead must have its whole output logged.
   * A process the task left behind can hold the pipes open; the wait for them is bounded (OUTPUT_DRAIN_MS).
   */
  async wait(signal: AbortSignal): Promise<ExitResult> {
    if (!this.workload) throw new TaskNotRunningError(this.task.name, 'wait needs start() first');
    const result = await this.workload.waitExit(signal);
    if (this.openStreams > 0) await exitsWithin(this.ctx.clock, OUTPUT_DRAIN_MS, this.outputClosed, signal).catch(() => undefined);
    return result;
  }

  async shutdown(opts: ShutdownOptions, signal: AbortSignal): Promise<void> {
    const w = this.workload;
    // Never started or already exited: nothing to stop, which is success.
    if (!w || w.result) return;
    const signo = toSignalNumber(opts.signal);
    const timeout = Math.min(Math.max(0, opts.timeout), this.settings.maxKillTimeout);
    if (w.supervisor) await markStopping(w.supervisor.prefix, opts.reason);
    // The marker is written off the thread: meanwhile the task may have exited on its own (nothing left to
    // stop), or the caller given up (the task runner aborts this call once the exit is known).
    if (w.result) return;
    signal.throwIfAborted();
    w.signalAll(signo);
    if (await exitsWithin(this.ctx.clock, timeout, w.waitExit(signal), signal)) return;
    w.signalAll(SIGKILL);
    await w.waitExit(signal);
  }

  async terminate(signal: AbortSignal): Promise<void> {
    const w = this.workload;
    if (!w || w.result) return;
    if (w.supervisor) await markStopping(w.supervisor.prefix);
    // As in shutdown: an exit or an abort may have come while the marker was written.
    if (w.result) return;
    signal.throwIfAborted();
    w.signalAll(SIGKILL);
    await w.waitExit(signal);
  }

  async remove(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    // The process owns no other resource; closing the files lets the log dir be deleted or archived.
    this.closeWriters();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closed$.next();
    this.closed$.complete();
    this.releaseHeld();
  }

  /** Lets the agent exit while the task runs: unrefs the workload and the output streams being read. */
  private releaseHeld(): void {
    this.workload?.release();
    // A stream already closed holds nothing; unref on a socket without its handle would only add a
    // 'connect' listener to it (Node's Socket.unref), one per task exit.
    for (const s of this.sources) if (!s.destroyed) (s as Readable & { unref?: () => void }).unref?.();
  }

  /** Sends `sig` to the main process only, as Nomad's SignalTask does (children are the main process's business). */
  async signal(sig: string, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    const signo = toSignalNumber(sig);
    const w = this.workload;
    if (!w || w.result || !w.signalMain(signo)) throw new TaskNotRunningError(this.task.name, `cannot send ${sig}`);
  }

  /**
   * Nomad's ExecTask for raw_exec: the command runs beside the task, in its directory, with its environment
   * and as its user (a template's change_script). Only while the task runs, as Nomad's needs its handle.
   */
  async exec(command: string, args: string[], opts: { timeout: number }, signal: AbortSignal): Promise<ExecResult> {
    const w = this.workload;
    if (!w || w.result) throw new TaskNotRunningError(this.task.name, `cannot run ${JSON.stringify(command)} in it`);
    const userName = this.task.user ?? this.settings.taskUser;
    const user = this.user ?? (userName === undefined ? undefined : resolveTaskUser(this.task.name, userName));
    return execInTask({ task: this.task.name, command, args, taskDir: this.ctx.taskDir, env: this.ctx.env, ...(user && { user }), timeoutMs: opts.timeout, signal });
  }

  /** Nomad's ExecTaskStreaming for raw_exec (`alloc exec`): as exec(), with the command's streams open and no timeout. */
  execStreaming(command: string, args: string[], signal: AbortSignal): ExecSession {
    const w = this.workload;
    if (!w || w.result) throw new TaskNotRunningError(this.task.name, `cannot run ${JSON.stringify(command)} in it`);
    const userName = this.task.user ?? this.settings.taskUser;
    const user = this.user ?? (userName === undefined ? undefined : resolveTaskUser(this.task.name, userName));
    return execStreamingInTask({ task: this.task.name, command, args, taskDir: this.ctx.taskDir, env: this.ctx.env, ...(user && { user }), signal });
  }

  handle(): DriverHandle | undefined {
    const w = this.workload;
    if (!w) return undefined;
    return {
      driver: RAW_EXEC,
      taskName: this.task.name,
      pid: w.pid,
      ...(w.startTime !== undefined ? { startTime: w.startTime } : {}),
      state: { pgid: w.pgid ?? null, ...(w.supervisor ? { supervisor: { ...w.supervisor } } : {}) },
    };
  }

  stats(intervalMs: number): Observable<ResourceUsage> {
    const w = this.workload;
    if (!w) return throwError(() => new TaskNotRunningError(this.task.name, 'stats need start() first'));
    // A closed controller holds no timers; closed$ has already fired, so takeUntil alone would not stop it.
    if (this.closed) return EMPTY;
    return processGroupStats({
      pid: w.pid,
      pgid: w.pgid ?? -1,
      intervalMs,
      clock: this.ctx.clock,
      ticksPerSecond: this.settings.ticks,
    }).pipe(takeUntil(this.closed$));
  }

  logs(opts: LogOptions): Observable<LogLine> {
    return readLogs({
      dir: this.logDir,
      task: this.task.name,
      ...opts,
      clock: this.ctx.clock,
      pollMs: this.settings.logPollIntervalMs,
      isActive: () => this.logsActive(),
    });
  }

  /** Whether more output may still arrive, for followers of `logs()`. */
  private logsActive(): boolean {
    if (this.closed) return false;
    const w = this.workload;
    if (!w) return true; // not started yet: output is still to come
    if (w instanceof SpawnedWorkload) return this.openStreams > 0;
    // Recovered: this agent never held the pipes, so it can only report what is already in the files.
    return w.result === undefined && isLive(readProcStat(w.pid));
  }

  private async spawn(signal: AbortSignal): Promise<void> {
    if (!this.config) await this.prepare(signal);
    signal.throwIfAborted();
    const cfg = this.config!;
    const cwd = cfg.workDir ? resolve(this.ctx.taskDir, cfg.workDir) : this.ctx.taskDir;
    try {
      if (!statSync(cwd).isDirectory()) throw new Error('not a directory');
    } catch {
      throw new SpawnError(this.task.name, `working directory ${cwd} does not exist or is not a directory`);
    }
    // The task's PATH first, then the agent's: Nomad resolves binaries with the agent's PATH.
    const searchPath = [this.ctx.env.PATH, process.env.PATH].filter(Boolean).join(':');
    const bin = lookupBin(cfg.command, this.ctx.taskDir, searchPath);
    if (!bin) {
      throw new CommandNotFoundError(
        this.task.name,
        cfg.command,
        `no executable file found (looked in ${this.ctx.taskDir}/local, ${this.ctx.taskDir} and PATH)`,
      );
    }
    // Open the log files first: failing after the spawn would leave a process nobody tracks.
    const writers = taskLogWriters(this.logDir, this.task.name, this.logConfig);
    const closeWriters = () => {
      for (const [, w] of writers) w.close();
    };
    const setsid = this.settings.setsid;
    const user = this.user;
    // The task user cannot pass through the data dir (0700, the agent's): it reaches its task dir through its
    // working directory, so a command found there is exec'd by a path relative to it.
    const execPath = user ? pathFromCwd(bin, cwd, this.ctx.taskDir) : bin;
    if (setsid) {
      const setpriv = user ? userSwitching().setpriv() : undefined;
      if (user && !setpriv) {
        closeWriters();
        throw new TaskUserError(this.task.name, user.name, 'setpriv (util-linux) is not installed, and the agent switches users with it');
      }
      const req: LaunchRequest = {
        task: this.task.name,
        bin: execPath,
        args: cfg.args,
        ...(user && setpriv ? { runAs: { uid: user.uid, gid: user.gid, setpriv } } : {}),
        cwd,
        env: { ...this.ctx.env },
        taskDir: this.ctx.taskDir,
        attempt: this.ctx.attempt,
        setsid,
        mkfifo: this.settings.mkfifo!,
        clock: this.ctx.clock,
        pollMs: this.settings.pollIntervalMs,
        watchedPollMs: this.settings.watchedPollIntervalMs,
      };
      try {
        const earlier = await findEarlierSpawn(req, signal);
        if (earlier) {
          // An earlier agent started this attempt and died before saying so: carry on with that process.
          closeWriters();
          this.workload = earlier;
          await this.reattachOutput();
          if (this.closed) this.releaseHeld();
          return;
        }
        this.workload = await spawnSupervised(req, (out) => this.pipeLogs(out, writers));
      } catch (err) {
        closeWriters();
        throw err;
      }
      if (this.closed) this.releaseHeld();
      return;
    }
    let child: ChildProcess;
    try {
      child = spawn(execPath, cfg.args, {
        cwd,
        env: { ...this.ctx.env },
        argv0: cfg.command,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        // libuv drops the supplementary groups when it switches (setgroups(0)): the user's own gid remains.
        ...(user ? { uid: user.uid, gid: user.gid } : {}),
      });
    } catch (err) {
      // Node throws synchronously for invalid arguments, e.g. a NUL byte in an arg or env value.
      closeWriters();
      throw new SpawnError(this.task.name, `cannot spawn ${bin}: ${(err as Error).message}`, err);
    }
    if (child.pid === undefined) {
      closeWriters();
      // Spawn failed synchronously; the reason arrives as an 'error' event.
      const err = await new Promise<NodeJS.ErrnoException>((r) => child.once('error', r));
      if (err.code === 'ENOENT' || err.code === 'EACCES') throw new CommandNotFoundError(this.task.name, cfg.command, err.message);
      throw new SpawnError(this.task.name, `spawning ${bin} failed: ${err.message}`, err);
    }
    // Errors after spawn (e.g. EPIPE on a closed pipe) must not crash the agent; exit is what matters.
    child.on('error', () => {});
    // Track the process before yielding to the loop, so no exit can slip past; read its start time at
    // once, since pid + start time is what makes the handle unambiguous across pid reuse.
    this.workload = new SpawnedWorkload(SpawnedWorkload.releaseOf(child), child.pid, readProcStat(child.pid)?.startTime, SpawnedWorkload.exitOf(child));
    this.pipeLogs({ stdout: child.stdout, stderr: child.stderr }, writers);
    if (this.closed) this.releaseHeld();
  }

  /**
   * Reads on from the output pipes of a supervised workload another agent started: what it wrote while no
   * agent ran is still in them. Called once the workload is adopted. The pipes end when the supervisor and
   * the workload are both gone, which tells the workload its exit status is on file. In a worker thread they
   * come from the spawner helper (output-pipes.ts): until they do they count as open, so a wait that learns
   * of the exit first still drains them. Resolves once they are read, or known to be gone.
   */
  async reattachOutput(): Promise<void> {
    const w = this.workload;
    if (!w?.supervisor || !supervisorLive(w.supervisor)) return;
    this.streamOpened();
    try {
      const out = await openOutput(w.supervisor);
      if (out) this.readAdopted(w, out);
    } finally {
      this.streamClosed();
    }
  }

  private readAdopted(w: Workload, out: TaskOutput): void {
    this.pipeLogs(out, taskLogWriters(this.logDir, this.task.name, this.logConfig));
    // Closed while they were being opened: they must not hold the agent either.
    if (this.closed) this.releaseHeld();
    if (!(w instanceof AdoptedWorkload)) return;
    w.watchOutput();
    let open = 2;
    const ended = () => {
      open -= 1;
      if (open === 0) w.outputEnded();
    };
    out.stdout.once('close', ended);
    out.stderr.once('close', ended);
  }

  private pipeLogs(
    streams: { stdout: Readable | null; stderr: Readable | null },
    writers: readonly (readonly ['stdout' | 'stderr', RotatingLogWriter])[],
  ): void {
    for (const [stream, writer] of writers) {
      this.writers.push(writer);
      const source = streams[stream];
      if (source) this.sources.push(source);
      if (!source) {
        writer.close();
        continue;
      }
      this.streamOpened();
      source.on('data', (chunk: Buffer) => {
        try {
          writer.write(chunk);
        } catch {
          // A full or vanished disk loses this task's logs, but must not take the agent down.
          writer.close();
        }
      });
      source.once('close', () => {
        writer.close();
        this.streamClosed();
      });
      source.on('error', () => writer.close());
    }
  }

  private streamOpened(): void {
    if (this.openStreams === 0) this.outputClosed = new Promise((resolve) => (this.resolveOutputClosed = resolve));
    this.openStreams += 1;
  }

  private streamClosed(): void {
    this.openStreams -= 1;
    if (this.openStreams === 0) this.resolveOutputClosed();
  }

  private closeWriters(): void {
    for (const w of this.writers) w.close();
  }
}

/**
 * `bin` as the task user can exec it: relative to the working directory when it lies in the task dir (the
 * user cannot resolve the data dir's absolute paths, but can those below its working directory), else as is.
 */
function pathFromCwd(bin: string, cwd: string, taskDir: string): string {
  const inTaskDir = relative(taskDir, bin);
  if (inTaskDir.startsWith('..') || isAbsolute(inTaskDir)) return bin;
  const fromCwd = relative(cwd, bin);
  return fromCwd.startsWith('/') ? bin : `./${fromCwd}`;
}

/** The supervisor a handle names, if it was started under one and the record is well-formed. */
function supervisorOf(handle: DriverHandle): SupervisorRef | undefined {
  const sup = (handle.state as { supervisor?: Partial<SupervisorRef> } | undefined)?.supervisor;
  if (!sup || typeof sup.prefix !== 'string' || typeof sup.pid !== 'number') return undefined;
  return { prefix: sup.prefix, pid: sup.pid, startTime: typeof sup.startTime === 'number' ? sup.startTime : undefined };
}

let supervisorTools: { setsid: string; mkfifo: string } | null | undefined;

/**
 * Where `setsid` and `mkfifo` are, or null when either is missing (both or neither: a supervisor needs the
 * two). Looked up once per process: a runner builds its own driver, and four file checks per allocation
 * add up at agent scale, while the tools do not come and go under a running agent.
 */
function findSupervisorTools(): { setsid: string; mkfifo: string } | null {
  if (supervisorTools === undefined) {
    const setsid = lookupBin('setsid', '/', TOOLS_PATH);
    const mkfifo = lookupBin('mkfifo', '/', TOOLS_PATH);
    supervisorTools = setsid && mkfifo ? { setsid, mkfifo } : null;
  }
  return supervisorTools;
}

/** Creates the raw_exec driver. */
export function createRawExecDriver(options: RawExecDriverOptions = {}): RawExecDriver {
  const tools = options.supervise !== false ? findSupervisorTools() : null;
  // Supervisors are spawned from a helper process (spawner.ts): have it up before the first start needs it.
  if (tools) warmSpawner();
  const settings: Settings = {
    setsid: tools?.setsid,
    mkfifo: tools?.mkfifo,
    maxKillTimeout: options.maxKillTimeout ?? 30_000,
    pollIntervalMs: options.pollIntervalMs ?? 100,
    watchedPollIntervalMs: options.watchedPollIntervalMs ?? 5_000,
    logPollIntervalMs: options.logPollIntervalMs ?? 250,
    ticks: options.clockTicksPerSecond ?? DEFAULT_CLOCK_TICKS,
    taskUser: options.taskUser,
  };
  return {
    name: RAW_EXEC,
    controller(task: TaskSpec, ctx: DriverContext): RawExecController {
      return new RawExecController(task, ctx, settings);
    },
    /**
     * Adopts a live process from an earlier agent. This agent is not its parent, so exit is detected by
     * polling /proc and the exit code is exact only if the zombie is seen before it is reaped (see workload.ts).
     */
    recover(handle: DriverHandle, task: TaskSpec, ctx: DriverContext): RawExecController {
      if (handle.driver !== RAW_EXEC) throw new RecoverError(task.name, 'invalid-handle', `the handle is for driver ${JSON.stringify(handle.driver)}`);
      const { pid, startTime } = handle;
      const supervisor = supervisorOf(handle);
      if (supervisor && typeof pid === 'number' && pid > 1) {
        // Supervised: a workload that is gone has its exit status on file (or is lost); waiting tells which.
        const stat = readProcStat(pid);
        const live = isLive(stat) && stat.startTime === startTime;
        const adopted = new AdoptedWorkload(pid, pid, live ? stat.startTime : -1, ctx.clock, settings.pollIntervalMs, supervisor, task.name, settings.watchedPollIntervalMs);
        const controller = new RawExecController(task, ctx, settings, adopted);
        // Recovery is synchronous: in a worker thread the pipes come from the spawner helper a moment later.
        void controller.reattachOutput();
        return controller;
      }
      if (typeof pid !== 'number' || !(pid > 1) || typeof startTime !== 'number') {
        throw new RecoverError(task.name, 'invalid-handle', 'the handle lacks a pid and start time');
      }
      const stat = readProcStat(pid);
      if (!isLive(stat)) throw new RecoverError(task.name, 'gone', `process ${pid} has exited`);
      if (stat.startTime !== startTime) {
        throw new RecoverError(task.name, 'pid-reused', `pid ${pid} now belongs to another process (start time ${stat.startTime}, expected ${startTime})`);
      }
      // Only signal a group the process leads; otherwise a kill could hit unrelated processes.
      const pgid = stat.pgrp === pid ? pid : undefined;
      const adopted = new AdoptedWorkload(pid, pgid, startTime, ctx.clock, settings.pollIntervalMs);
      const controller = new RawExecController(task, ctx, settings, adopted);
      return controller;
    },
    /** The stop marker of the handle's attempt (supervisor.ts): only supervised workloads have one. */
    stopBegun(handle: DriverHandle): 'kill' | 'restart' | undefined {
      const supervisor = handle.driver === RAW_EXEC ? supervisorOf(handle) : undefined;
      return supervisor ? stoppingReason(supervisor.prefix) : undefined;
    },
    /** A supervised workload's stop links its marker before the first signal (shutdown, terminate); an adopted bare pid has none. */
    marksStop(handle: DriverHandle): boolean {
      return handle.driver === RAW_EXEC && supervisorOf(handle) !== undefined;
    },
    /**
     * The workload of start `ctx.attempt` if an earlier agent spawned one (its intent file, see
     * supervisor.ts), adopted like a recovered one. A start recorded but never claimed by its supervisor is
     * cancelled here, so a supervisor that comes up late runs nothing. Only supervised starts are recorded.
     */
    async findStarted(task: TaskSpec, ctx: DriverContext, signal: AbortSignal): Promise<RawExecController | undefined> {
      if (!tools || ctx.attempt === undefined) return undefined;
      const query = { task: task.name, taskDir: ctx.taskDir, attempt: ctx.attempt, clock: ctx.clock, pollMs: settings.pollIntervalMs, watchedPollMs: settings.watchedPollIntervalMs };
      const earlier = await findEarlierSpawn(query, signal);
      if (!earlier) return undefined;
      const controller = new RawExecController(task, ctx, settings, earlier);
      await controller.reattachOutput();
      return controller;
    },
  };
}
