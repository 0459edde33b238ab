/**
 * The directory hooks are safe to run again (Nomad's alloc_dir and task_dir hooks): task_dir builds over
 * a task dir that is already there when it has no record of building it (a restore that lost its hook
 * state), and trusts only an `is_done` of "true" in its previous state; alloc_dir's destroy of a dir that
 * is already gone succeeds.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { allocDirHook } from '../../src/hooks/alloc-dir-hook.ts';
import { taskDirHook } from '../../src/hooks/task-dir-hook.ts';
import type { TaskPrestartResponse } from '../../src/hooks/types.ts';

const dirs: string[] = [];
const fresh = () => {
  const d = mkdtempSync(join(tmpdir(), 'allocrun-dir-hooks-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function prestart(taskDir: string, previousState: unknown): Promise<TaskPrestartResponse> {
  const res: TaskPrestartResponse = {};
  await taskDirHook().prestart!({ task: { name: 't', driver: 'mock', config: {} }, taskDir, env: {}, resources: {}, previousState }, res, new AbortController().signal);
  return res;
}
const exists = (p: string) => statSync(p, { throwIfNoEntry: false }) !== undefined;

describe('task_dir', () => {
  it('builds over a task dir that is already there when it has no record of building it', async () => {
    const taskDir = join(fresh(), 't');
    await prestart(taskDir, undefined);
    const res = await prestart(taskDir, undefined);
    expect(res.state).toEqual({ is_done: 'true' });
    expect(statSync(join(taskDir, 'secrets')).mode & 0o777).toBe(0o700);
  });

  it('makes secrets 0700 again when a secrets dir was already there with a looser mode', async () => {
    const taskDir = join(fresh(), 't');
    mkdirSync(join(taskDir, 'secrets'), { recursive: true });
    chmodSync(join(taskDir, 'secrets'), 0o755);
    await prestart(taskDir, undefined);
    expect(statSync(join(taskDir, 'secrets')).mode & 0o777).toBe(0o700);
  });

  it('gives the task dir itself the default mode, not the secrets dir\'s 0700', async () => {
    const taskDir = join(fresh(), 't');
    await prestart(taskDir, undefined);
    const mask = process.umask();
    expect(statSync(taskDir).mode & 0o777).toBe(0o777 & ~mask);
    expect(statSync(join(taskDir, 'secrets')).mode & 0o777).toBe(0o700);
    for (const sub of ['local', 'tmp']) expect(exists(join(taskDir, sub))).toBe(true);
  });

  it('makes secrets 0700 under a umask that takes owner bits, for every task dir the hook builds', async () => {
    const root = fresh();
    const hook = taskDirHook();
    // Masks only the owner's read bit: the dirs stay writable and searchable, and mkdir's 0700 becomes 0300.
    const was = process.umask(0o477);
    try {
      for (const name of ['a', 'b']) {
        const taskDir = join(root, name);
        await hook.prestart!({ task: { name, driver: 'mock', config: {} }, taskDir, env: {}, resources: {}, previousState: undefined }, {}, new AbortController().signal);
        expect(statSync(join(taskDir, 'secrets')).mode & 0o777).toBe(0o700);
      }
    } finally {
      process.umask(was);
    }
  });

  it.each<[string, unknown, boolean]>([
    ['no previous state', undefined, false],
    ['a null previous state', null, false],
    ['is_done that is not "true"', { is_done: true }, false],
    ['is_done of "true"', { is_done: 'true' }, true],
  ])('with %s, skips the build: %s', async (_what, previousState, skips) => {
    const taskDir = join(fresh(), 't');
    const res = await prestart(taskDir, previousState);
    expect(exists(join(taskDir, 'local'))).toBe(!skips);
    expect(res.env).toEqual({ NOMAD_TASK_DIR: join(taskDir, 'local'), NOMAD_SECRETS_DIR: join(taskDir, 'secrets') });
  });
});

describe('alloc_dir', () => {
  it('destroying an alloc dir that is already gone succeeds', async () => {
    const allocDir = join(fresh(), 'a1');
    const hook = allocDirHook(allocDir);
    const signal = new AbortController().signal;
    await hook.prerun!({}, signal);
    await hook.destroy!(signal);
    expect(exists(allocDir)).toBe(false);
    await expect(hook.destroy!(signal)).resolves.toBeUndefined();
  });
});
