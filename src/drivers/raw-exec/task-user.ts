/**
 * Running a raw_exec task as its job's `user` (Nomad's task-level `user`), or as the agent's default
 * (`allocrun agent --task-user NAME`). Only an agent running as root can switch users; one that cannot
 * refuses a job naming a user at validation (src/drivers/config-checks.ts), never runs it as itself.
 *
 * The switch is util-linux's `setpriv --reuid --regid --init-groups`, exec'd by the supervisor's inner
 * shell after it has recorded the workload's pid and opened its output: the supervisor stays root (it
 * writes the status files in the task's `private/` dir, 0700, root's), `setpriv` execs the command in the
 * same process, so the pid, its start time and its process group are the ones the supervisor recorded and
 * adoption after an agent crash works as for any task.
 *
 * Whether this process can switch users, and who a name is, are asked through one process-wide
 * `UserSwitching` (like the spawner helper, one per agent): the agent's validation (job files, the API's
 * register and validate, `allocrun validate`) and the driver ask the same one, and a test or an embedder
 * replaces it with `useUserSwitching`.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, lchownSync, lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { lookupBin } from './process.ts';

/** An account a task can run as. */
export interface TaskUser {
  name: string;
  uid: number;
  gid: number;
}

/** Whether this process can run tasks as other users, and who a user name is. */
export interface UserSwitching {
  /** Why a task cannot be run as another user here (`the agent runs as uid 1000, not root`), or undefined when it can. */
  cannotSwitch(): string | undefined;
  /** The account named `name` (a user name, or a numeric uid), or undefined when there is none. */
  lookup(name: string): TaskUser | undefined;
  /** Absolute path of `setpriv`, which performs the switch; undefined when it is not installed. */
  setpriv(): string | undefined;
}

/** Where `setpriv` is looked for. */
const TOOLS_PATH = ['/usr/bin', '/bin', '/usr/sbin', '/sbin', process.env.PATH ?? ''].join(':');

/** A passwd(5) line's account, or undefined when it is not one. */
export function parsePasswd(line: string): TaskUser | undefined {
  const f = line.split(':');
  if (f.length < 4 || f[0] === '') return undefined;
  const uid = Number(f[2]);
  const gid = Number(f[3]);
  if (!/^\d+$/.test(f[2]!) || !/^\d+$/.test(f[3]!)) return undefined;
  return { name: f[0]!, uid, gid };
}

/**
 * The account `name` names, asked of the system the way `id` would: `getent passwd` (NSS: files, LDAP,
 * systemd's dynamic users), or `/etc/passwd` itself where there is no getent.
 */
function systemLookup(name: string): TaskUser | undefined {
  // Never handed to getent as an option, nor as anything a passwd line could not hold.
  if (name === '' || name.startsWith('-') || /[:\s\0/]/.test(name)) return undefined;
  try {
    const out = execFileSync('getent', ['passwd', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5_000 });
    return parsePasswd(out.split('\n')[0] ?? '');
  } catch (err) {
    // getent exits 2 for "no such key": the answer, not a failure to ask.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return undefined;
  }
  let passwd: string;
  try {
    passwd = readFileSync('/etc/passwd', 'utf8');
  } catch {
    return undefined;
  }
  const numeric = /^\d+$/.test(name);
  for (const line of passwd.split('\n')) {
    const user = parsePasswd(line);
    if (user && (user.name === name || (numeric && user.uid === Number(name)))) return user;
  }
  return undefined;
}

let setprivPath: string | null | undefined;

/** This machine: root can switch (with setpriv installed), nobody else can. */
export const systemUserSwitching: UserSwitching = {
  cannotSwitch() {
    const euid = process.geteuid?.();
    if (euid === undefined) return 'this platform has no user ids to switch between';
    if (euid !== 0) return `allocrun runs as uid ${euid}, not root, so it cannot run a task as another user`;
    if (!this.setpriv()) return 'setpriv (util-linux) is not installed, and the agent switches users with it';
    return undefined;
  },
  lookup: systemLookup,
  setpriv() {
    if (setprivPath === undefined) setprivPath = lookupBin('setpriv', '/', TOOLS_PATH) ?? null;
    return setprivPath ?? undefined;
  },
};

let current: UserSwitching = systemUserSwitching;

/** The UserSwitching validation and the raw_exec driver ask. */
export function userSwitching(): UserSwitching {
  return current;
}

/**
 * Replaces the process-wide UserSwitching (a test faking an agent that is not root, an embedder with its
 * own directory of users); returns a function that puts the previous one back.
 */
export function useUserSwitching(switching: UserSwitching): () => void {
  const previous = current;
  current = switching;
  return () => {
    current = previous;
  };
}

/** A task's `user` the agent cannot honour; `problem` says why without naming the field. */
export class TaskUserError extends Error {
  readonly code = 'ErrTaskUser';
  constructor(
    readonly task: string,
    readonly user: string,
    /** What is wrong (`no user "x" on this machine`), without the task's name. */
    readonly problem: string,
  ) {
    super(`task ${JSON.stringify(task)}: user ${JSON.stringify(user)}: ${problem}`);
    this.name = 'TaskUserError';
  }
}

/** What a job can do about an agent that cannot switch users. */
const TASK_REMEDY = 'remove "user" from the task, or run the agent as root';

/**
 * Why a task cannot run as `name` (the message after `…task.z.user: `), or undefined when it can; `remedy`
 * says what to do when the agent cannot switch users at all.
 */
export function taskUserProblem(name: string, remedy = TASK_REMEDY, switching: UserSwitching = current): string | undefined {
  if (name === '') return 'must not be empty (leave "user" out to run as the agent\'s user)';
  const cannot = switching.cannotSwitch();
  if (cannot) return `cannot run the task as ${JSON.stringify(name)}: ${cannot}; ${remedy}`;
  if (!switching.lookup(name)) return `no user ${JSON.stringify(name)} on this machine (getent passwd ${name} finds none)`;
  return undefined;
}

/** The account `name`, or a TaskUserError saying why the task cannot run as it. */
export function resolveTaskUser(task: string, name: string, switching: UserSwitching = current): TaskUser {
  const problem = taskUserProblem(name, TASK_REMEDY, switching);
  if (problem) throw new TaskUserError(task, name, problem);
  return switching.lookup(name)!;
}

/** The task dir's subdirectories the task writes; `private/` (the supervisor's files) stays the agent's. */
const TASK_OWNED = ['local', 'secrets', 'tmp'];

/**
 * Makes the task dir the task user's to write: `local/`, `secrets/` and `tmp/` are chowned to it; the
 * task dir itself stays the agent's, group-writable by the user's group with the sticky bit (01770), so the
 * task creates and removes its own files there but cannot rename or replace `private/`, where the
 * supervisor (root) writes the status files a restored agent trusts. Symlinks are never followed.
 */
export function shareTaskDir(taskDir: string, user: TaskUser): void {
  const own = lstatSync(taskDir);
  if (!own.isDirectory()) throw new Error(`task dir ${taskDir} is not a directory`);
  chownSync(taskDir, own.uid, user.gid);
  chmodSync(taskDir, 0o1770);
  for (const name of TASK_OWNED) {
    const dir = join(taskDir, name);
    let st;
    try {
      st = lstatSync(dir);
    } catch {
      continue; // not built (no task_dir hook): nothing to hand over
    }
    if (!st.isDirectory()) continue;
    // lchown: should the task have swapped it for a symlink since the lstat, the link changes hands, not its target.
    if (st.uid !== user.uid || st.gid !== user.gid) lchownSync(dir, user.uid, user.gid);
  }
}
