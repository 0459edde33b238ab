/**
 * The two ways raw_exec holds a live process: one it spawned (it is the parent, so the kernel hands it the
 * exit status) and one it adopted after an agent restart (not its parent: exit is found by polling `/proc`,
 * and the status is only known if the zombie is seen before its reaper collects it).
 */
import type { ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import type { Clock } from '../clock.ts';
import type { ChildExit } from './spawner.ts';
import type { ExitResult } from '../controller.ts';
import { WorkloadLostError } from './errors.ts';
import { decodeWaitStatus, isLive, readProcStat } from './proc-stat.ts';
import { backstopRound } from './backstop.ts';
import { signalGroup, signalPid } from './process.ts';
import { decodeShellStatus, readExitStatus, supervisorLive, stoppingReason, type SupervisorRef } from './supervisor.ts';

const SIGKILL = constants.signals.SIGKILL;

/** A process raw_exec can signal and wait on, whichever way it got hold of it. */
export interface Workload {
  readonly pid: number;
  /** The process group to signal; undefined when the process does not lead its own group. */
  readonly pgid: number | undefined;
  readonly startTime: number | undefined;
  /** The supervisor recording the exit status, when the workload runs under one. */
  readonly supervisor?: SupervisorRef;
  /** Set once the exit is known. */
  readonly result: ExitResult | undefined;
  /** Resolves with the exit; rejects with the signal's reason if it aborts first (the process is untouched). */
  waitExit(signal?: AbortSignal): Promise<ExitResult>;
  /** Sends a signal to the whole group (or the pid alone when it has no group of its own); false if gone. */
  signalAll(signo: number): boolean;
  /** Sends a signal to the main process only. */
  signalMain(signo: number): boolean;
  /** Lets the agent exit while the process keeps running. */
  release(): void;
}

/** Kills whatever is left of a group once its leader is gone, so a task cannot leak daemons. */
function reapGroup(pgid: number | undefined, leaderStartTime: number | undefined): void {
  if (pgid === undefined) return;
  try {
    // Most tasks leave nothing behind: an empty group answers signal 0 with ESRCH, a system call of
    // microseconds, where the /proc read below is a file open and read on the agent's thread at every exit.
    if (!signalGroup(pgid, 0)) return;
    // The leader's pid now held by another process means the group id may be reused too: leave it be.
    const holder = readProcStat(pgid);
    if (holder && holder.startTime !== leaderStartTime) return;
    signalGroup(pgid, SIGKILL);
  } catch {
    // EPERM and friends: nothing more we can do for a process we may not signal.
  }
}

/**
 * Signals the group a workload leads or, while it leads none yet, the workload alone: a supervised workload
 * reports its pid before `setsid` makes it a session and group leader (SUPERVISOR_SCRIPT), so a signal sent
 * just after its start can find no group. The pid alone only while it is the same process (its start time).
 */
export function signalGroupOf(pgid: number, startTime: number | undefined, signo: number): boolean {
  if (signalGroup(pgid, signo)) return true;
  const stat = readProcStat(pgid);
  return isLive(stat) && stat.startTime === startTime && signalPid(pgid, signo);
}

function raceAbort<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/**
 * A process this agent spawned. With a supervisor (see supervisor.ts) the agent's child is the supervisor,
 * the workload is its child in a session of its own, and the exit status is the one the supervisor
 * recorded; without one, the agent's child is the workload itself (started with `detached: true`).
 */
export class SpawnedWorkload implements Workload {
  readonly pgid: number;
  result: ExitResult | undefined;
  private readonly exited: Promise<ExitResult>;

  constructor(
    /** Unrefs the agent's child and its pipes. */
    private readonly releaseChild: () => void,
    readonly pid: number,
    readonly startTime: number | undefined,
    exited: Promise<ExitResult>,
    readonly supervisor?: SupervisorRef,
  ) {
    this.pgid = pid;
    this.exited = exited.then((result) => {
      this.result = result;
      reapGroup(this.pgid, this.startTime);
      return result;
    });
    // Waiters get their own view of it (raceAbort); this one must not be left unhandled should it fail.
    this.exited.catch(() => undefined);
  }

  /** Resolves with the exit of an unsupervised workload `child`. */
  static exitOf(child: ChildProcess): Promise<ExitResult> {
    return new Promise((resolve) => {
      child.once('exit', (code, signalName) => {
        const signo = signalName ? (constants.signals[signalName] ?? 0) : 0;
        resolve(code !== null ? { exitCode: code, signal: 0 } : { exitCode: 128 + signo, signal: signo });
      });
    });
  }

  /**
   * Resolves with the status the supervisor at `prefix` recorded. It exits with that status
   * (SUPERVISOR_SCRIPT), so its exit code is the status without reading the file back: the file is for an
   * agent that was not there to see the exit. Only a supervisor killed by a signal sends us to the file.
   */
  static supervisedExit(exit: Promise<ChildExit>, prefix: string): Promise<ExitResult> {
    return exit.then(({ code, signal, lost }) => {
      if (lost) return { exitCode: -1, signal: 0, err: lost };
      if (code !== null) return decodeShellStatus(code);
      return readExitStatus(prefix) ?? { exitCode: -1, signal: 0, err: `the task supervisor was killed (${signal}) without recording the exit status` };
    });
  }

  /** Unrefs `child` and its pipes still open. */
  static releaseOf(child: ChildProcess): () => void {
    return () => {
      child.unref();
      // A closed pipe holds nothing; unref on a socket without its handle would only add a 'connect'
      // listener to it (Node's Socket.unref), one per task exit.
      for (const s of child.stdio) if (s && !s.destroyed) (s as unknown as { unref?: () => void }).unref?.();
    };
  }

  waitExit(signal?: AbortSignal): Promise<ExitResult> {
    return raceAbort(this.exited, signal);
  }

  signalAll(signo: number): boolean {
    if (this.result) return false;
    return signalGroupOf(this.pgid, this.startTime, signo);
  }

  signalMain(signo: number): boolean {
    if (this.result) return false;
    return signalPid(this.pid, signo);
  }

  release(): void {
    this.releaseChild();
  }
}

/**
 * A process found again by pid and start time. Exit is detected by polling on the clock, only while
 * someone waits. With a supervisor the exit status is the one it recorded; without one it is read from the
 * zombie if seen in time, else inferred (see `exitFrom`).
 *
 * An agent that reads a supervised workload's output pipes again is told of the exit without polling: the
 * pipes end once the supervisor and the workload are both gone (`outputEnded`). Polling then only backs
 * that up, at `watchedPollMs`, in a round shared by every such workload (backstop.ts): an agent restarted
 * under 10,000 running tasks would otherwise read /proc 100,000 times a second to learn of exits that the
 * pipes announce anyway.
 */
export class AdoptedWorkload implements Workload {
  result: ExitResult | undefined;
  private lost: WorkloadLostError | undefined;
  private settled = false;
  private readonly waiters = new Set<{ resolve: (r: ExitResult) => void; reject: (e: unknown) => void }>();
  private timer: unknown;
  /** Set while the workload waits in the shared backstop round: how to leave it. */
  private backstop: (() => void) | undefined;
  /** The last signal we sent: the best evidence of how the process died when its status is lost. */
  private lastSignal: number | undefined;
  /** Set while the supervisor's output pipes are read: their end will say the workload is gone. */
  private outputWatched = false;

  constructor(
    readonly pid: number,
    readonly pgid: number | undefined,
    readonly startTime: number,
    private readonly clock: Clock,
    private readonly pollMs: number,
    readonly supervisor?: SupervisorRef,
    private readonly taskName = '',
    /** How often a live workload is looked at while its output pipes are watched (a backstop). */
    private readonly watchedPollMs = pollMs,
  ) {}

  /** The supervisor's output pipes are read from now on: a live workload is polled only as a backstop. */
  watchOutput(): void {
    if (!this.supervisor) return;
    this.outputWatched = true;
    // A wait begun before the pipes came (they come from the spawner helper) polls every pollMs: look now,
    // and from then on as a watched one.
    if (this.timer === undefined) return;
    this.stopPolling();
    this.poll();
  }

  /** The output pipes ended: the supervisor is gone, so the exit status is on file. Waiters learn it now. */
  outputEnded(): void {
    this.outputWatched = false;
    if (this.settled || this.waiters.size === 0) return;
    this.stopPolling();
    this.poll();
  }

  waitExit(signal?: AbortSignal): Promise<ExitResult> {
    if (this.result) return Promise.resolve(this.result);
    if (this.lost) return Promise.reject(this.lost);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<ExitResult>((resolve, reject) => {
      const waiter = {
        resolve: (r: ExitResult) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(r);
        },
        reject: (e: unknown) => {
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
      };
      const onAbort = () => {
        this.waiters.delete(waiter);
        if (this.waiters.size === 0) this.stopPolling();
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(waiter);
      if (this.timer === undefined && this.backstop === undefined) this.poll();
    });
  }

  signalAll(signo: number): boolean {
    if (this.result || this.lost || !this.stillOurs()) return false;
    const sent = this.pgid !== undefined ? signalGroupOf(this.pgid, this.startTime, signo) : signalPid(this.pid, signo);
    if (sent) this.lastSignal = signo;
    return sent;
  }

  signalMain(signo: number): boolean {
    if (this.result || this.lost || !this.stillOurs()) return false;
    return signalPid(this.pid, signo);
  }

  release(): void {
    // Waiters keep polling (they asked to); nothing else is held.
  }

  /** Guards every signal: after exit the pid may belong to an unrelated process. */
  private stillOurs(): boolean {
    const stat = readProcStat(this.pid);
    return isLive(stat) && stat.startTime === this.startTime;
  }

  private poll = (): void => {
    this.timer = undefined;
    this.backstop = undefined;
    const stat = readProcStat(this.pid);
    const ours = stat !== undefined && stat.startTime === this.startTime;
    if (ours && isLive(stat)) {
      if (!this.outputWatched) return this.pollAgain();
      if (this.waiters.size > 0) this.backstop = backstopRound(this.clock, this.watchedPollMs).add(this.pid, this.poll);
      return;
    }
    if (!this.supervisor) return this.finish(this.exitFrom(ours ? stat.exitStatus : undefined));
    const recorded = this.recordedExit();
    if (recorded) return this.finish(recorded);
    // The workload is gone and its supervisor is about to write the status: look again shortly.
    if (supervisorLive(this.supervisor)) return this.pollAgain();
    // Read once more: the supervisor may have written it and exited between the two reads.
    const late = this.recordedExit();
    if (late) return this.finish(late);
    this.fail(
      new WorkloadLostError(
        this.taskName,
        `process ${this.pid} and its supervisor ${this.supervisor.pid} are gone and no exit status was recorded (${this.supervisor.prefix}.claim)`,
      ),
    );
  };

  /** The status the supervisor recorded, marked when an agent (maybe a dead one) had begun the stop. */
  private recordedExit(): ExitResult | undefined {
    const prefix = this.supervisor!.prefix;
    const recorded = readExitStatus(prefix);
    if (!recorded) return undefined;
    const reason = stoppingReason(prefix);
    if (!reason) return recorded;
    return { ...recorded, stoppedByAgent: true, ...(reason === 'restart' && { stoppedFor: 'restart' as const }) };
  }

  private pollAgain(ms = this.pollMs): void {
    if (this.waiters.size > 0) this.timer = this.clock.setTimeout(this.poll, ms);
  }

  private exitFrom(zombieStatus: number | undefined): ExitResult {
    // A zombie still carries its waitpid status (proc(5) field 52): exact, as if we were the parent.
    if (zombieStatus !== undefined) return decodeWaitStatus(zombieStatus);
    // SIGKILL cannot be caught, so a process we SIGKILLed died of it.
    if (this.lastSignal === SIGKILL) return { exitCode: 128 + SIGKILL, signal: SIGKILL };
    // Otherwise the reaper took the status. After our kill signal the likely end is that signal (inferred).
    if (this.lastSignal !== undefined) return { exitCode: 128 + this.lastSignal, signal: this.lastSignal };
    return {
      exitCode: -1,
      signal: 0,
      err: 'exit status unknown: the process was recovered after an agent restart and its parent reaped it',
    };
  }

  private finish(result: ExitResult): void {
    if (!this.result) this.result = result;
    this.settle((w) => w.resolve(result));
  }

  private fail(err: WorkloadLostError): void {
    this.lost = err;
    this.settle((w) => w.reject(err));
  }

  /** The end, known or lost: clean up what is left of the group, stop polling, answer every waiter. */
  private settle(answer: (w: { resolve: (r: ExitResult) => void; reject: (e: unknown) => void }) => void): void {
    if (!this.settled) {
      this.settled = true;
      reapGroup(this.pgid, this.startTime);
    }
    this.stopPolling();
    const waiters = [...this.waiters];
    this.waiters.clear();
    waiters.forEach(answer);
  }

  private stopPolling(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.backstop?.();
    this.backstop = undefined;
  }
}
