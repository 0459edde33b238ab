/**
 * The raw_exec supervisor: a few lines of POSIX sh that sit between the agent and the workload, so the
 * workload's exit status outlives the agent (the role of Nomad's executor process). The agent spawns the
 * supervisor; the supervisor runs the workload in a session of its own (so the workload's pid and process
 * group are the task's, and no signal meant for the task reaches the supervisor), waits for it and writes
 * its exit status to a file. An agent that died meanwhile reads that file when it comes back.
 *
 * Files, per task attempt, in `<task dir>/private/` (0700), all named `exec-<attempt>-<token>.*`:
 *   `.claim`   created with O_EXCL by the supervisor before anything runs, or by a restoring agent to cancel
 *              a token whose supervisor never appeared ("void"): exactly one of them wins. The supervisor's
 *              claim then grows by a line per step, each one short `echo >>` (a single write), so a reader
 *              takes a line only with its newline:
 *                `<supervisor pid>`   the claim;
 *                `pid <n>`            the workload's pid, written just before the workload is exec'd;
 *                `status <n>`         the workload's exit status (`$?`: a code, or 128 + signal number).
 *              One file where there were three (`.claim`, `.pid`, `.status`): a new inode is the dearest file
 *              call on this project's disks, an append to an existing file a twentieth of it. A supervisor
 *              of the previous scripts wrote `.pid` and `.status` files; a claim without a `pid` line is
 *              read with those (readSupervisorRecord).
 *   `.stop`    made by the agent before its first stop signal: "restart", or anything else for a kill
 *              (a second name of the claim, or an empty file; see markStopping).
 *   `.out`, `.err`  FIFOs carrying the workload's stdout and stderr, when the shell's here-documents are
 *              not pipes (see SUPERVISOR_SCRIPT: the supervisor's fds 5 and 6 carry them either way).
 * `exec-<attempt>.intent` names the token of the attempt's spawn; it is written before the spawn, so a
 * restored agent that finds the task still starting can find (or cancel) the process it started.
 */
import { chmodSync, close, existsSync, link, lstat, lstatSync, mkdirSync, open, openSync, closeSync, readdirSync, readFileSync, rename, renameSync, rmSync, writeFile, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { isLive, readProcStat } from './proc-stat.ts';

/**
 * The supervisor script. `$1` is the file prefix, `$2` the task's own PWD (`=value`, or `-` for none: sh sets
 * PWD, and the workload must see exactly the task env), `$3` the path of `mkfifo`, `$4` a variable name the
 * task env does not use, `$5` the path of `setsid`; the rest is the command and its arguments (never
 * interpreted by a shell: they are passed as "$@"). Exit 125: the claim was lost, nothing ran (126: the pid
 * could not be read from /proc, nothing ran either). The claim's later lines (`pid`, `status`) are appended:
 * `>>` never makes a file here, since the claim exists from the script's second line on. Paths are absolute:
 * the task's PATH need not hold `sh` or `setsid`. Nothing is assigned before the exec but the variable `$4`
 * names and PWD: the shell exports every variable of the task env it starts with, so an assignment to one of
 * those names would change what the task sees.
 *
 * The task's output goes through two pipes the supervisor holds open read-write on fds 5 and 6: a write made
 * while no agent reads blocks (once 64 KiB wait) instead of killing the task with SIGPIPE, and the next agent
 * reads on from the same pipes, opened through `/proc/<supervisor>/fd/5` and `6`. A shell whose empty
 * here-document is a pipe (dash, busybox) makes them with no process, reopened read-write through /proc; any
 * other makes two FIFOs, `$1.out` and `$1.err`, with `mkfifo` (exit 124 if it cannot). The workload opens them
 * write-only through the supervisor's fds (the same pipe or FIFO either way).
 *
 * Two execs before the workload's own: the supervisor's sh, and `setsid`. The workload is a subshell, a fork
 * of the supervisor with no exec of its own, that becomes the task's command by exec'ing `setsid`, which does
 * not fork when its caller leads no process group (the subshell is in the supervisor's), so the pid the
 * subshell reports is the workload's. POSIX sh has no `$BASHPID`: the subshell reads its pid from
 * /proc/self/stat with the `read` builtin (no process), into `$4`, then puts it before the other arguments
 * (`eval` only builds the reference to the variable `$4` names, one the agent chose). It records the pid (a
 * `pid` line of the claim), reports it on fd 3 with SIGPIPE ignored (the agent may be gone), restores
 * SIGPIPE's default so the workload does not inherit an ignored signal, and waits for the agent's go on stdin
 * (sent once the agent reads the pipes, so a task that exits at once loses no output; a dead agent's closed
 * pipe is a go too). Until `setsid` runs, after the go, the workload is in the supervisor's group: the agent
 * signals its pid alone then (workload.ts `signalGroupOf`). A foreground subshell, not `&`: a background one
 * would start with SIGINT and SIGQUIT ignored for good, and its stdin on /dev/null. The supervisor's own
 * messages go nowhere.
 */
export const SUPERVISOR_SCRIPT = [
  'set -C',
  '{ echo $$ > "$1.claim"; } 2>/dev/null || exit 125',
  'set +C',
  'exec 5<<E',
  'E',
  'exec 6<<E',
  'E',
  '{ [ -p /proc/self/fd/5 ] && [ -p /proc/self/fd/6 ] && exec 5<>/proc/self/fd/5 6<>/proc/self/fd/6; } ||',
  '  { "$3" -m 600 "$1.out" "$1.err" && exec 5<>"$1.out" 6<>"$1.err"; } || exit 124',
  '(',
  '  case $2 in =*) export PWD="${2#=}";; *) unset PWD;; esac',
  '  read -r "$4" </proc/self/stat || exit 126',
  '  eval "set -- \\"\\${$4%% *}\\" \\"\\$@\\""',
  '  echo "pid $1" >> "$2.claim"',
  '  trap "" PIPE; echo "$1" >&3 2>/dev/null; trap - PIPE',
  '  read -r "$5" || :',
  '  shift 5',
  '  exec "$@" 3>&- </dev/null >/proc/self/fd/5 2>/proc/self/fd/6 5<&- 6<&-',
  ')',
  'set -- "$1" $?',
  'echo "status $2" >> "$1.claim"',
  'exit $2',
].join('\n');

/** The supervisor's fds holding the task's stdout and stderr open (SUPERVISOR_SCRIPT). */
export const OUTPUT_FDS = { stdout: 5, stderr: 6 } as const;

/** A name for the variable the inner sh reads the go into, one that `env` does not hold. */
export function goVariable(env: Readonly<Record<string, string>>): string {
  let name = 'allocrun_go';
  while (name in env) name += '_';
  return name;
}

/** Exit status of a supervisor that lost its claim: it ran nothing. */
export const CLAIM_LOST = 125;

/** Older attempts' files are pruned when a new attempt starts, keeping this many behind it. */
const KEEP_ATTEMPTS = 8;

/** The supervisor's record of one spawn, kept in the driver handle so a later agent can find the files. */
export interface SupervisorRef {
  /** Path prefix of the attempt's files (`…/private/exec-<attempt>-<token>`). */
  prefix: string;
  pid: number;
  /** `/proc` start time of the supervisor, so a reused pid is not mistaken for it. */
  startTime: number | undefined;
}

/** Where a task's supervisor files live. */
export function privateDir(taskDir: string): string {
  return join(taskDir, 'private');
}

/**
 * Creates the private dir, readable by the agent's user only, and checks that what is there is that: a task
 * running as another user writes in its task dir (task-user.ts), and a `private` it made (or a symlink in
 * its place) would let it forge the exit status a restored agent reads, or point root's writes elsewhere.
 */
export function ensurePrivateDir(taskDir: string): string {
  const dir = privateDir(taskDir);
  try {
    // Made here, now: the agent's own, 0700 or tighter (umask), nothing to check (one call per start, not two).
    mkdirSync(dir, { mode: 0o700 });
    return dir;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') mkdirSync(dir, { recursive: true, mode: 0o700 });
    else if (code !== 'EEXIST') throw err;
  }
  const st = lstatSync(dir);
  const uid = process.geteuid?.();
  if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) {
    const what = st.isSymbolicLink() ? 'a symbolic link' : !st.isDirectory() ? 'not a directory' : `owned by uid ${st.uid}`;
    throw new Error(`the supervisor's dir ${dir} is ${what}; it must be a directory of the agent's user (uid ${uid}): remove it and start the task again`);
  }
  // The agent's own, made by an older version or by hand with a looser mode: only the agent could write it.
  if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
  return dir;
}

/** The file prefix of one attempt's spawn. */
export function attemptPrefix(taskDir: string, attempt: number | string, token: string): string {
  return join(privateDir(taskDir), `exec-${attempt}-${token}`);
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Records, before spawning, which token attempt `attempt` uses (a crash leaves old or new, or for the
 * attempt's first intent possibly a blank or cut one). The private dir must exist (ensurePrivateDir).
 */
export function writeIntent(taskDir: string, attempt: number, token: string): void {
  const path = join(privateDir(taskDir), `exec-${attempt}.intent`);
  try {
    // The attempt's first intent is created in place, one file call fewer per start than a temp file and a
    // rename: a crash while writing it leaves a blank intent (read as none) or a cut token, which names no
    // claim, since no supervisor of this attempt was spawned before it; a restore cancels that token and
    // spawns afresh, as it would with no intent.
    writeFileSync(path, `${token}\n`, { mode: 0o600, flag: 'wx' });
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  // A later intent of the same attempt (it is spawned again after a restore cancelled the first): atomically.
  writeFileSync(`${path}.tmp`, `${token}\n`, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

/** The token attempt `attempt` was spawned with, if an agent got as far as recording it. */
export function readIntent(taskDir: string, attempt: number): string | undefined {
  const text = readText(join(privateDir(taskDir), `exec-${attempt}.intent`))?.trim();
  return text ? text : undefined;
}

/** What a claim file says: a supervisor pid, cancelled by an agent, or not written (yet). */
export type Claim = { kind: 'supervisor'; pid: number } | { kind: 'void' } | { kind: 'none' };

/** The workload's exit as a shell reports it: a code, and the signal when the code is 128 + a signal number. */
export type ShellExit = { exitCode: number; signal: number };

/** What the supervisor of one spawn has recorded so far (SUPERVISOR_SCRIPT, the claim's lines). */
export interface SupervisorRecord {
  claim: Claim;
  /** The workload's pid, once the supervisor wrote it (just before the exec: without it nothing ran). */
  workloadPid: number | undefined;
  /** The workload's exit, once the supervisor wrote it; undefined while it has not (or never will). */
  exit: ShellExit | undefined;
}

/** The first line of a claim: a supervisor pid, or an agent's void. */
function claimOf(firstLine: string): Claim {
  const text = firstLine.trim();
  if (text === 'void') return { kind: 'void' };
  const pid = Number(text);
  // An empty file is a supervisor between its O_EXCL open and its write: it has claimed already.
  return Number.isInteger(pid) && pid > 1 ? { kind: 'supervisor', pid } : { kind: 'supervisor', pid: -1 };
}

function pidOf(text: string | undefined): number | undefined {
  const pid = Number(text?.trim() || NaN);
  return Number.isInteger(pid) && pid > 1 ? pid : undefined;
}

/**
 * Reads the claim file once: the claim is its first line (as the previous scripts wrote it, with or without
 * its newline); the workload's `pid` and `status` are later lines, each taken only whole (with its newline:
 * the supervisor appends each in one write). A claim without a `pid` line may be a supervisor of a previous
 * script, which wrote them to `.pid` and `.status` files of their own: those are read then, and only then
 * (a restore's or an old supervisor's cost; a supervisor of this script that got as far as its exec never
 * sends a reader to a second file).
 */
export function readSupervisorRecord(prefix: string): SupervisorRecord {
  const text = readText(`${prefix}.claim`);
  if (text === undefined) return { claim: { kind: 'none' }, ...olderFiles(prefix, undefined) };
  const lines = text.split('\n');
  const whole = lines.slice(1, -1);
  const claim = claimOf(lines[0]!);
  const pidLine = whole.find((l) => l.startsWith('pid '));
  const statusLine = whole.find((l) => l.startsWith('status '));
  const exit = statusLine !== undefined && /^status \d+$/.test(statusLine) ? decodeShellStatus(Number(statusLine.slice(7))) : undefined;
  if (pidLine === undefined) return { claim, ...olderFiles(prefix, statusLine === undefined ? undefined : exit) };
  return { claim, workloadPid: pidOf(pidLine.slice(4)), exit };
}

/** The `.pid` and `.status` files of a previous script's supervisor (`exit`: what the claim said already). */
function olderFiles(prefix: string, exit: ShellExit | undefined): Omit<SupervisorRecord, 'claim'> {
  const workloadPid = pidOf(readText(`${prefix}.pid`));
  if (exit) return { workloadPid, exit };
  const text = readText(`${prefix}.status`);
  return { workloadPid, exit: text && /^\d+\n$/.test(text) ? decodeShellStatus(Number(text.trim())) : undefined };
}

export function readClaim(prefix: string): Claim {
  const text = readText(`${prefix}.claim`);
  return text === undefined ? { kind: 'none' } : claimOf(text.split('\n', 1)[0]!);
}

/** Cancels a token no supervisor has claimed; false if a supervisor claimed it first. */
export function voidClaim(prefix: string): boolean {
  let fd: number;
  try {
    fd = openSync(`${prefix}.claim`, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    writeSync(fd, 'void\n');
  } finally {
    closeSync(fd);
  }
  return true;
}

/** The workload pid the supervisor recorded, once it has. */
export function readWorkloadPid(prefix: string): number | undefined {
  return readSupervisorRecord(prefix).workloadPid;
}

/** The workload's exit as the supervisor recorded it; undefined while it has not (or never will). */
export function readExitStatus(prefix: string): ShellExit | undefined {
  return readSupervisorRecord(prefix).exit;
}

/**
 * Records that the agent is stopping the workload; the caller sends the first stop signal once it resolves.
 * For a kill the marker's existence is the record (stoppingReason), so it is made without a write: a second
 * name (a hard link) for the supervisor's claim, which exists once the supervisor runs. The claim grows after
 * that (the supervisor appends its `pid` and `status` lines to the inode both names share), so the marker is
 * never written through, and read for one word only: "restart", which no claim's line is. Creating a file is
 * the dearest step of a kill on this project's disks (~0.3-0.6 ms of kernel CPU for a new inode at load, a
 * link a tenth of that); an empty file of its own only when there is no claim.
 * Off the agent's thread: a hundred kills at once wait on the disk together instead of one after another.
 */
export function markStopping(prefix: string, reason: 'kill' | 'restart' = 'kill'): Promise<void> {
  const marker = `${prefix}.stop`;
  return new Promise((resolve) => {
    // Best effort throughout: without a marker a restore judges the exit by its status alone.
    if (reason === 'restart') {
      // A new file, never written through the old name: that may be a kill's second name for the claim. Written
      // under another name and renamed over it: an agent dying between a create and its write would leave an
      // empty marker, which says kill, and a restore takes a kill nothing saved explains for a KILL (restored-kill.ts).
      const written = `${marker}-new`;
      return writeFile(written, 'restart\n', { mode: 0o600 }, (err) => (err ? resolve() : rename(written, marker, () => resolve())));
    }
    // An empty file of the agent's own, truncating a restart marker (a kill overrides a restart).
    const emptyFile = () => open(marker, 'w', 0o600, (err, fd) => (err ? resolve() : close(fd, () => resolve())));
    link(`${prefix}.claim`, marker, (err) => {
      if (!err) return resolve();
      // No claim (the supervisor has not come that far): a file of its own.
      if (err.code !== 'EEXIST') return emptyFile();
      // Marked before: a second name of the claim is a kill already (and must never be written through);
      // anything else is the agent's own file.
      lstat(marker, (statErr, st) => (!statErr && st.nlink > 1 ? resolve() : emptyFile()));
    });
  });
}

/**
 * Whether, and why, an agent had begun to stop the workload: a restart (a marker saying just that) or a kill
 * (anything else: an empty marker, or a second name of the claim, whatever lines the claim has grown since).
 */
export function stoppingReason(prefix: string): 'kill' | 'restart' | undefined {
  const text = readText(`${prefix}.stop`);
  if (text === undefined) return undefined;
  return text.trim() === 'restart' ? 'restart' : 'kill';
}


/**
 * Decodes a shell's `$?`: 128 + n for a death by signal n (Linux has 64 signals), else an exit code.
 * An exit code of 129–192 reads as a signal: the shell reports both the same way.
 */
export function decodeShellStatus(status: number): ShellExit {
  if (status > 128 && status <= 128 + 64) return { exitCode: status, signal: status - 128 };
  return { exitCode: status, signal: 0 };
}

/** Exit status of a supervisor that could not create its output pipes (the FIFOs, where it needs them). */
export const NO_FIFOS = 124;

/** The FIFOs carrying the task's stdout and stderr, where the supervisor makes them. */
export function outputFifos(prefix: string): { stdout: string; stderr: string } {
  return { stdout: `${prefix}.out`, stderr: `${prefix}.err` };
}

/** Whether the supervisor of `ref` is still running (a zombie or a reused pid is not). */
export function supervisorLive(ref: Pick<SupervisorRef, 'pid' | 'startTime'>): boolean {
  const stat = readProcStat(ref.pid);
  return isLive(stat) && (ref.startTime === undefined || stat.startTime === ref.startTime);
}

/** Removes every attempt's files of a task (a new runner for a reused task dir starts from nothing). */
export function clearSupervisorFiles(taskDir: string): void {
  // Almost always a new task dir: a check is far cheaper than the ENOENT error a listing would throw.
  if (!existsSync(privateDir(taskDir))) return;
  let names: string[];
  try {
    names = readdirSync(privateDir(taskDir));
  } catch {
    return;
  }
  for (const name of names) if (/^exec-/.test(name)) rmSync(join(privateDir(taskDir), name), { force: true });
}

/** Removes the files of attempts older than `attempt - KEEP_ATTEMPTS` (a persisted snapshot may lag a little). */
export function pruneAttempts(taskDir: string, attempt: number): void {
  // Attempts count from 0: until there are more than KEEP_ATTEMPTS, none is old enough to list the dir for.
  if (attempt <= KEEP_ATTEMPTS) return;
  let names: string[];
  try {
    names = readdirSync(privateDir(taskDir));
  } catch {
    return;
  }
  for (const name of names) {
    const m = /^exec-(\d+)[.-]/.exec(name);
    if (m && Number(m[1]) < attempt - KEEP_ATTEMPTS) rmSync(join(privateDir(taskDir), name), { force: true });
  }
}
