/**
 * Running a raw_exec task as a user (task-user.ts), rule by rule: why a task cannot run as a name (empty,
 * an agent that cannot switch, no such account), the error naming task and user, the process-wide
 * UserSwitching and its replacement, who a name is on this machine, and how the task dir is shared with
 * the user while `private/` stays the agent's. The sharing rules need root (chown); they are skipped
 * otherwise.
 */
import { lstatSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  resolveTaskUser,
  shareTaskDir,
  systemUserSwitching,
  TaskUserError,
  taskUserProblem,
  userSwitching,
  useUserSwitching,
  type TaskUser,
  type UserSwitching,
} from '../../src/drivers/raw-exec/task-user.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const ALICE: TaskUser = { name: 'alice', uid: 4001, gid: 4002 };

/** A UserSwitching that knows alice only, and can switch unless told why not. */
const fake = (cannot?: string): UserSwitching => ({
  cannotSwitch: () => cannot,
  lookup: (name) => (name === 'alice' || name === '4001' ? ALICE : undefined),
  setpriv: () => '/usr/bin/setpriv',
});

describe('a task runs as a user only when the agent can switch to that account', () => {
  it.each([
    ['', fake(), 'must not be empty (leave "user" out to run as the agent\'s user)'],
    ['', fake('not root'), 'must not be empty (leave "user" out to run as the agent\'s user)'],
    ['alice', fake('the agent runs as uid 1000'), 'cannot run the task as "alice": the agent runs as uid 1000; remove "user" from the task, or run the agent as root'],
    ['bob', fake('not root'), 'cannot run the task as "bob": not root; remove "user" from the task, or run the agent as root'],
    ['bob', fake(), 'no user "bob" on this machine (getent passwd bob finds none)'],
    ['alice', fake(), undefined],
    ['4001', fake(), undefined],
  ])('user %j: %s', (name, switching, problem) => {
    expect(taskUserProblem(name, undefined, switching)).toBe(problem);
  });

  it('says what to do in the words the caller gives', () => {
    expect(taskUserProblem('alice', 'pass --task-user to a root agent', fake('not root'))).toBe('cannot run the task as "alice": not root; pass --task-user to a root agent');
  });

  it('resolves a name to its account', () => {
    expect(resolveTaskUser('web', 'alice', fake())).toEqual(ALICE);
  });

  it('refuses a name it cannot run as with a TaskUserError naming task and user', () => {
    let err: unknown;
    try {
      resolveTaskUser('web', 'bob', fake());
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TaskUserError);
    const e = err as TaskUserError;
    expect([e.code, e.name, e.task, e.user, e.problem]).toEqual(['ErrTaskUser', 'TaskUserError', 'web', 'bob', 'no user "bob" on this machine (getent passwd bob finds none)']);
    expect(e.message).toBe('task "web": user "bob": no user "bob" on this machine (getent passwd bob finds none)');
  });

  it('asks the process-wide UserSwitching unless given one, and a replacement is put back when done', () => {
    expect(userSwitching()).toBe(systemUserSwitching);
    const restore = useUserSwitching(fake());
    try {
      expect(resolveTaskUser('web', 'alice')).toEqual(ALICE);
      expect(taskUserProblem('bob')).toBe('no user "bob" on this machine (getent passwd bob finds none)');
      const inner = useUserSwitching(fake('nested'));
      expect(taskUserProblem('alice')).toMatch(/nested/);
      inner();
      expect(taskUserProblem('alice')).toBeUndefined();
    } finally {
      restore();
    }
    expect(userSwitching()).toBe(systemUserSwitching);
  });
});

describe('who a name is on this machine (getent passwd, as id would)', () => {
  it('finds root by name and by uid', () => {
    expect(systemUserSwitching.lookup('root')).toEqual({ name: 'root', uid: 0, gid: 0 });
    expect(systemUserSwitching.lookup('0')).toEqual({ name: 'root', uid: 0, gid: 0 });
  });

  it.each(['', '-r', '--help', 'ro:ot', 'ro ot', 'ro\tot', 'a/b', 'root\0', 'no-such-user-allocrun'])('finds no one for %j', (name) => {
    expect(systemUserSwitching.lookup(name)).toBeUndefined();
  });

  it('can switch as root with setpriv; says why not otherwise', () => {
    const setpriv = systemUserSwitching.setpriv();
    expect(systemUserSwitching.setpriv()).toBe(setpriv);
    const euid = process.geteuid!();
    if (euid !== 0) expect(systemUserSwitching.cannotSwitch()).toBe(`allocrun runs as uid ${euid}, not root, so it cannot run a task as another user`);
    else if (setpriv) expect(systemUserSwitching.cannotSwitch()).toBeUndefined();
    else expect(systemUserSwitching.cannotSwitch()).toBe('setpriv (util-linux) is not installed, and the agent switches users with it');
    if (setpriv) expect(setpriv).toMatch(/\/setpriv$/);
  });
});

describe('the task dir is shared with the task user; private/ stays the agent\'s', () => {
  const root = process.geteuid?.() === 0;

  function taskDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'allocrun-share-'));
    dirs.push(dir);
    for (const sub of ['local', 'secrets', 'private']) mkdirSync(join(dir, sub));
    return dir;
  }

  it.runIf(root)('gives local/, secrets/ and tmp/ to the user, the task dir to its group (01770), and keeps private/', () => {
    const dir = taskDir();
    mkdirSync(join(dir, 'tmp'));
    shareTaskDir(dir, ALICE);
    const st = statSync(dir);
    expect([st.mode & 0o7777, st.uid, st.gid]).toEqual([0o1770, 0, ALICE.gid]);
    for (const sub of ['local', 'secrets', 'tmp']) {
      const s = statSync(join(dir, sub));
      expect([sub, s.uid, s.gid]).toEqual([sub, ALICE.uid, ALICE.gid]);
    }
    const p = statSync(join(dir, 'private'));
    expect([p.uid, p.gid]).toEqual([0, 0]);
  });

  it.runIf(root)('skips what is missing or not a directory, and hands over a symlink itself, never its target', () => {
    const dir = taskDir();
    rmSync(join(dir, 'secrets'), { recursive: true });
    writeFileSync(join(dir, 'tmp'), '');
    const target = mkdtempSync(join(tmpdir(), 'allocrun-share-target-'));
    dirs.push(target);
    rmSync(join(dir, 'local'), { recursive: true });
    symlinkSync(target, join(dir, 'local'));
    shareTaskDir(dir, ALICE);
    expect(statSync(join(dir, 'tmp')).uid).toBe(0);
    expect(statSync(target).uid).toBe(0);
    const link = lstatSync(join(dir, 'local'));
    // A symlink is not a directory to lstat: it is left alone too.
    expect(link.uid).toBe(0);
  });

  it.runIf(root)('leaves a subdirectory that is already the user\'s as it is', () => {
    const dir = taskDir();
    shareTaskDir(dir, ALICE);
    shareTaskDir(dir, ALICE);
    expect(statSync(join(dir, 'local')).uid).toBe(ALICE.uid);
  });

  it('refuses a task dir that is not a directory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'allocrun-share-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'file'), '');
    expect(() => shareTaskDir(join(dir, 'file'), ALICE)).toThrow(`task dir ${join(dir, 'file')} is not a directory`);
  });
});
