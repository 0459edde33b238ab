/**
 * What task-user.ts settles once: where `setpriv` is looked for (a search path built when the module loads,
 * searched once per process; never the agent's working directory), which of the task dir's subdirectories the task user is given, and what a job
 * is told to do about an agent that cannot switch users. Each test loads the module afresh
 * (raw-exec-driver-fixtures.ts, `loadedAfresh`), so that code runs under it.
 */
import { chmodSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lookupBin } from '../../src/drivers/raw-exec/process.ts';
// Imported as well as loaded afresh: the suites a mutation run picks for this module are those importing it.
import { systemUserSwitching, type TaskUser, type UserSwitching } from '../../src/drivers/raw-exec/task-user.ts';
import { loadedAfresh, plantedInWorkingDir } from './raw-exec-driver-fixtures.ts';
import { leftoversRemovedAfterEach } from './raw-exec-leftovers.ts';

type TaskUserModule = typeof import('../../src/drivers/raw-exec/task-user.ts');
const TASK_USER = '../../src/drivers/raw-exec/task-user.ts';

const { dirs } = leftoversRemovedAfterEach();
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'allocrun-task-user-load-'));
  dirs.push(dir);
  return dir;
}

/** The first of the system dirs, in their order, that holds `setpriv`. */
const systemSetpriv = ['/usr/bin', '/bin', '/usr/sbin', '/sbin'].map((dir) => join(dir, 'setpriv')).find((bin) => lookupBin(bin, '/', '') !== undefined);

describe.runIf(systemSetpriv)('setpriv is looked for in the system dirs, in order, then on the agent\'s PATH', () => {
  it('the system\'s, though the agent\'s PATH holds one too', async () => {
    const agentDir = tempDir();
    writeFileSync(join(agentDir, 'setpriv'), '#!/bin/sh\nexit 1\n');
    chmodSync(join(agentDir, 'setpriv'), 0o755);
    const fresh = await loadedAfresh<TaskUserModule>(TASK_USER, agentDir);
    expect(fresh.systemUserSwitching.setpriv()).toBe(systemSetpriv);
    expect(systemUserSwitching.setpriv()).toBe(systemSetpriv);
  });

  it('never the agent\'s working directory\'s: one planted there is not taken', async (test) => {
    if (!plantedInWorkingDir(['setpriv'], dirs)) test.skip();
    const fresh = await loadedAfresh<TaskUserModule>(TASK_USER, process.env.PATH);
    expect(fresh.systemUserSwitching.setpriv()).toBe(systemSetpriv);
  });

  it.each([
    ['empty', ''],
    ['unset', undefined],
  ])('the system\'s when the agent\'s PATH is %s', async (_what, agentPath) => {
    const fresh = await loadedAfresh<TaskUserModule>(TASK_USER, agentPath);
    expect(fresh.systemUserSwitching.setpriv()).toBe(systemSetpriv);
  });
});

describe.runIf(process.geteuid?.() === 0)('the task user is given local/, secrets/ and tmp/, never private/', () => {
  it('from a task dir that has all four', async () => {
    const { shareTaskDir } = await loadedAfresh<TaskUserModule>(TASK_USER, process.env.PATH);
    const taskDir = tempDir();
    for (const sub of ['local', 'secrets', 'tmp', 'private']) mkdirSync(join(taskDir, sub));
    const alice: TaskUser = { name: 'alice', uid: 4001, gid: 4002 };
    shareTaskDir(taskDir, alice);
    const owners = Object.fromEntries(['local', 'secrets', 'tmp', 'private'].map((sub) => [sub, [statSync(join(taskDir, sub)).uid, statSync(join(taskDir, sub)).gid]]));
    expect(owners).toEqual({ local: [4001, 4002], secrets: [4001, 4002], tmp: [4001, 4002], private: [0, 0] });
  });
});

describe('a job naming a user an agent cannot switch to is told what to do', () => {
  it('remove the user from the task, or run the agent as root', async () => {
    const { taskUserProblem } = await loadedAfresh<TaskUserModule>(TASK_USER, process.env.PATH);
    const notRoot: UserSwitching = { cannotSwitch: () => 'allocrun runs as uid 1000, not root', lookup: () => undefined, setpriv: () => undefined };
    expect(taskUserProblem('alice', undefined, notRoot)).toBe(
      'cannot run the task as "alice": allocrun runs as uid 1000, not root; remove "user" from the task, or run the agent as root',
    );
  });
});
