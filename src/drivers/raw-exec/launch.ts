/**
 * Starting a raw_exec workload under its supervisor, and finding one an earlier agent started: a start that
 * runs again after a crash (the task was still `starting` when the agent died) adopts the process the
 * first start spawned instead of spawning a second one.
 */
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Clock } from '../clock.ts';
import { SpawnError } from './errors.ts';
import { isLive, readProcStat } from './proc-stat.ts';
import {
  CLAIM_LOST,
  NO_FIFOS,
  OUTPUT_FDS,
  outputFifos,
  SUPERVISOR_SCRIPT,
  attemptPrefix,
  ensurePrivateDir,
  goVariable,
  pruneAttempts,
  readIntent,
  readSupervisorRecord,
  readWorkloadPid,
  supervisorLive,
  voidClaim,
  writeIntent,
  type SupervisorRef,
} from './supervisor.ts';
import { openPipesOfThread, passedEnd, pipesFromHelper, type PipeOpener, type ReadEnd } from './output-pipes.ts';
import { spawnViaHelper, type SpawnedChild, type SpawnerError } from './spawner.ts';
import { AdoptedWorkload, SpawnedWorkload } from './workload.ts';

/** What a launch needs from the controller. */
export interface LaunchRequest {
  task: string;
  bin: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  taskDir: string;
  attempt: number | undefined;
  setsid: string;
  mkfifo: string;
  clock: Clock;
  pollMs: number;
  /** How often an adopted workload whose output pipes are read is polled (see AdoptedWorkload). */
  watchedPollMs?: number;
  /** The account the workload runs as, switched to by `setpriv` (task-user.ts); absent: the agent's own. */
  runAs?: RunAs;
}

/** A user switch: the ids, and the `setpriv` that performs it. */
export interface RunAs {
  uid: number;
  gid: number;
  setpriv: string;
}

/**
 * The command the supervisor execs: the task's own, or `setpriv` switching to the task's user and exec'ing it
 * in the same process (so the pid the supervisor recorded stays the workload's). Real and effective ids
 * both change, supplementary groups are the user's (initgroups), and capabilities go with uid 0.
 */
export function workloadCommand(bin: string, args: readonly string[], runAs: RunAs | undefined): string[] {
  if (!runAs) return [bin, ...args];
  return [runAs.setpriv, `--reuid=${runAs.uid}`, `--regid=${runAs.gid}`, '--init-groups', '--', bin, ...args];
}

/** What finding an earlier start of an attempt needs: where its records are, and how to poll what it finds. */
export type EarlierSpawnQuery = Pick<LaunchRequest, 'task' | 'taskDir' | 'attempt' | 'clock' | 'pollMs' | 'watchedPollMs'>;

/** How long a restoring agent waits for a supervisor that has claimed its token to record the pid. */
const CLAIMED_WAIT_MS = 5_000;

function sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clock.clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = clock.setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The workload an earlier start of this attempt spawned, if one did. Undefined when none did, or when its
 * token was cancelled here (a supervisor that appears later finds the token void and runs nothing).
 */
export async function findEarlierSpawn(req: EarlierSpawnQuery, signal: AbortSignal): Promise<AdoptedWorkload | undefined> {
  if (req.attempt === undefined) return undefined;
  const token = readIntent(req.taskDir, req.attempt);
  if (!token) return undefined;
  const prefix = attemptPrefix(req.taskDir, req.attempt, token);
  const deadline = Date.now() + CLAIMED_WAIT_MS;
  for (;;) {
    const { claim, workloadPid: pid, exit } = readSupervisorRecord(prefix);
    if (claim.kind === 'void') return undefined;
    if (claim.kind === 'none') {
      if (voidClaim(prefix)) return undefined;
      continue; // a supervisor claimed it between the read and the cancel
    }
    if (pid !== undefined || exit) return adopt(req, prefix, claim.pid, pid);
    // Claimed but no pid yet: the supervisor is between its claim and the exec, or died there.
    const supervisorUp = claim.pid < 0 || isLive(readProcStat(claim.pid));
    if (!supervisorUp) {
      const late = readWorkloadPid(prefix);
      // The pid is written before the exec: without it nothing ran, so a fresh spawn is safe.
      return late === undefined ? undefined : adopt(req, prefix, claim.pid, late);
    }
    if (Date.now() > deadline) {
      throw new SpawnError(req.task, `the supervisor ${claim.pid} of an earlier start (${prefix}) neither started the task nor exited`);
    }
    await sleep(req.clock, 2, signal);
  }
}

function adopt(req: EarlierSpawnQuery, prefix: string, supervisorPid: number, pid: number | undefined): AdoptedWorkload {
  const supStat = supervisorPid > 1 ? readProcStat(supervisorPid) : undefined;
  const supervisor: SupervisorRef = { prefix, pid: supervisorPid, startTime: isLive(supStat) ? supStat.startTime : undefined };
  const stat = pid !== undefined ? readProcStat(pid) : undefined;
  // The workload leads its own session, or is about to: between its pid report and `setsid` it is in its
  // supervisor's group (SUPERVISOR_SCRIPT). While its supervisor lives it is the supervisor's child.
  const supervisorUp = isLive(supStat);
  const ours =
    pid !== undefined && isLive(stat) && (stat.pgrp === pid || (supervisorUp && stat.pgrp === supervisorPid)) && (!supervisorUp || stat.ppid === supervisorPid);
  // A workload already gone is adopted all the same: waiting on it reads the status its supervisor wrote.
  return new AdoptedWorkload(pid ?? -1, pid, ours ? stat.startTime : -1, req.clock, req.pollMs, supervisor, req.task, req.watchedPollMs);
}

/** The task's stdout and stderr, as streams to read. */
export interface TaskOutput {
  stdout: Readable;
  stderr: Readable;
}

const bothOpen = (ends: readonly (ReadEnd | undefined)[]): ends is [ReadEnd, ReadEnd] => ends[0] !== undefined && ends[1] !== undefined;

/**
 * Opens the read side of a supervisor's output pipes (non-blocking, so it never waits for a writer):
 * through the supervisor's own fds while it lives (its pipes or FIFOs alike, see SUPERVISOR_SCRIPT), else
 * through its FIFOs if it made them. Undefined when they are gone. They end when the supervisor and the
 * workload have both exited. The supervisor's start time is checked once its fds are open, so a pid
 * reused meanwhile is not read from. `open`: here, or by the spawner helper (output-pipes.ts says when and
 * why); `viaProc`: the supervisor's fds 5 and 6 the helper already passed when the supervisor reported.
 */
export async function openOutput(
  supervisor: SupervisorRef,
  viaProc?: readonly (ReadEnd | undefined)[],
  open: PipeOpener = openPipesOfThread,
): Promise<TaskOutput | undefined> {
  let ends = viaProc ?? (await open((['stdout', 'stderr'] as const).map((stream) => `/proc/${supervisor.pid}/fd/${OUTPUT_FDS[stream]}`)));
  if (!bothOpen(ends) || !supervisorLive(supervisor)) {
    for (const end of ends) end?.close();
    const fifos = outputFifos(supervisor.prefix);
    ends = await open([fifos.stdout, fifos.stderr]);
  }
  if (bothOpen(ends)) return { stdout: ends[0].reader(), stderr: ends[1].reader() };
  for (const end of ends) end?.close();
  return undefined;
}

/** The workload pid the supervisor reports on fd 3 (or, failing that, records in its claim). */
export async function workloadPid(child: Pick<SpawnedChild, 'reported'>, prefix: string): Promise<number | undefined> {
  const line = await child.reported;
  const m = line === undefined ? null : /^(\d+)$/.exec(line);
  return m ? Number(m[1]) : readWorkloadPid(prefix);
}

/** Why a supervisor that exited with `code` before reporting a workload pid started nothing (SUPERVISOR_SCRIPT). */
export function notStartedBecause(code: number | null, prefix: string): string {
  if (code === CLAIM_LOST) return 'another agent cancelled this start';
  if (code === NO_FIFOS) return `cannot create its output pipes in ${prefix}`;
  return `the supervisor exited with status ${code} before starting it`;
}

/** Random per agent process, so no two agents' tokens meet; a counter tells this agent's spawns apart. */
const TOKEN_BASE = randomBytes(6).toString('hex');
let tokenSeq = 0;

/** A spawn's token: unique per spawn, without a call to the system's random source each time. */
function nextToken(): string {
  tokenSeq += 1;
  return `${TOKEN_BASE}${tokenSeq.toString(16)}`;
}

/** Spawns the supervisor for a fresh start and resolves once the workload's pid is known. */
export async function spawnSupervised(req: LaunchRequest, onOutput: (out: TaskOutput) => void): Promise<SpawnedWorkload> {
  // In this order, each on file before the next step: the private dir, the intent, the spawn (a rule test
  // pauses at the spawn). Synchronous on purpose: through libuv's pool each of these calls queued behind
  // the state saves' file jobs, and 100 starts took longer (docs/benchmarks.md, 2026-11-26 15:16-16:05).
  ensurePrivateDir(req.taskDir);
  const token = nextToken();
  const prefix = attemptPrefix(req.taskDir, req.attempt ?? 'x', token);
  if (req.attempt !== undefined) {
    pruneAttempts(req.taskDir, req.attempt);
    // Before the spawn, so an agent that dies during it leaves a trace of what it was about to start.
    writeIntent(req.taskDir, req.attempt, token);
  }
  const pwdArg = req.env.PWD === undefined ? '-' : `=${req.env.PWD}`;
  const script = [prefix, pwdArg, req.mkfifo, goVariable(req.env), req.setsid, ...workloadCommand(req.bin, req.args, req.runAs)];
  let child: SpawnedChild;
  try {
    // From the spawner helper, so the agent neither forks nor waits for the exec (spawner.ts). Output goes
    // through the supervisor's pipes; fd 3 only reports the workload's pid; fd 0 carries the agent's go
    // (see SUPERVISOR_SCRIPT); the workload's stdin is /dev/null.
    child = await spawnViaHelper('/bin/sh', ['-c', SUPERVISOR_SCRIPT, 'allocrun-supervisor', ...script], {
      cwd: req.cwd,
      env: req.env,
      ...(pipesFromHelper && { passFds: [OUTPUT_FDS.stdout, OUTPUT_FDS.stderr] }),
    });
  } catch (err) {
    // spawn throws at once for invalid arguments, e.g. a NUL byte in an arg or env value.
    if ((err as SpawnerError).sync) throw new SpawnError(req.task, `cannot spawn ${req.bin}: ${(err as Error).message}`, err);
    throw new SpawnError(req.task, `cannot start the raw_exec supervisor (/bin/sh): ${(err as Error).message}`, err);
  }
  const exited = SpawnedWorkload.supervisedExit(child.exited, prefix);
  const supervisor: SupervisorRef = { prefix, pid: child.pid, startTime: readProcStat(child.pid)?.startTime };
  const pid = await workloadPid(child, prefix);
  if (pid === undefined) {
    for (const pipe of child.passed) pipe?.close();
    const { code } = await child.exited;
    throw new SpawnError(req.task, `cannot start ${req.bin}: ${notStartedBecause(code, prefix)}`);
  }
  // The pipes exist now (made before the pid is reported); a crash from here on loses no output.
  // In a worker thread the helper passed them with the report, unless the supervisor had exited (or reported
  // nothing) by then.
  const out = await openOutput(supervisor, child.passed.length > 0 ? child.passed.map((pipe) => pipe && passedEnd(pipe)) : undefined);
  if (out) onOutput(out);
  child.go('go\n');
  return new SpawnedWorkload(() => child.release(), pid, readProcStat(pid)?.startTime, exited, supervisor);
}
