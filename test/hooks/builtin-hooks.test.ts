import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import type { TaskHook, TaskPrestartResponse } from '../../src/hooks/types.ts';
import { taskDirHook } from '../../src/hooks/task-dir-hook.ts';
import { validateHook } from '../../src/hooks/validate-hook.ts';
import { unsafeNameReason } from '../../src/jobspec/names.ts';
import { tempDir } from '../temp-dirs.ts';

const spec = (tasks: AllocSpec['tasks']): AllocSpec => ({ id: 'b1', job: 'j', group: 'g', type: 'batch', tasks });

async function exists(path: string) {
  return stat(path).then(() => true, () => false);
}

describe('built-in hooks', () => {
  it('builds the alloc dir and task dirs before the task starts, and removes them on destroy', async () => {
    const dataDir = tempDir('allocrun-hooks-');
    const seen: Record<string, string> = {};
    const probe: TaskHook = {
      name: 'probe',
      async prestart(req) {
        Object.assign(seen, req.env);
      },
    };
    const runner = createAllocRunner(spec([{ name: 'app', driver: 'mock', config: { run_for: '20ms' } }]), { dataDir, taskHooks: [probe] }).start();
    const final = await runner.done;
    expect(final.clientStatus).toBe('complete');
    const allocDir = join(dataDir, 'allocs', 'b1');
    for (const d of ['alloc/logs', 'alloc/data', 'alloc/tmp', 'app/local', 'app/tmp']) expect(await exists(join(allocDir, d))).toBe(true);
    expect((await stat(join(allocDir, 'app/secrets'))).mode & 0o777).toBe(0o700);
    expect(seen.NOMAD_TASK_DIR).toBe(join(allocDir, 'app/local'));
    runner.send({ type: 'DESTROY' });
    await new Promise<void>((resolve) => runner.actor.subscribe((s) => s.status === 'done' && resolve()));
    expect(await exists(allocDir)).toBe(false);
  });

  it('fails a task with an unknown driver as Failed Validation, without restarting it', async () => {
    const runner = createAllocRunner(spec([{ name: 'app', driver: 'docker', config: {} }])).start();
    const final = await runner.done;
    expect(final.clientStatus).toBe('failed');
    const types = final.taskStates.app!.events.map((e) => e.type);
    expect(types).toEqual(['Received', 'Task Setup', 'Failed Validation', 'Not Restarting']);
    expect(final.taskStates.app!.events[2]!.displayMessage).toContain('driver "docker" is not available');
  });

  it('validate refuses a task name by the rule the job loader and the API apply (src/jobspec/names.ts)', async () => {
    const hook = validateHook(['mock']);
    for (const name of ['web server', 'wëb', 'a\nb', 'x'.repeat(300)]) {
      const task = { name, driver: 'mock', config: {} };
      const err = await hook.prestart!({ task } as never, {} as TaskPrestartResponse, new AbortController().signal).then(() => undefined, (e: Error) => e);
      expect(err?.message).toContain(unsafeNameReason(name, 'task'));
    }
    const res: TaskPrestartResponse = {};
    await hook.prestart!({ task: { name: 'web-1.a_b', driver: 'mock', config: {} } } as never, res, new AbortController().signal);
    expect(res.done).toBe(true);
  });

  it("task_dir records is_done once built, and a later start (restart, restore) skips the build but still sets the env (Nomad's TaskDirHookIsDoneDataKey)", async () => {
    const taskDir = join(tempDir('allocrun-taskdir-'), 'app');
    const hook = taskDirHook();
    const call = async (previousState: unknown) => {
      const res: TaskPrestartResponse = {};
      await hook.prestart!({ task: { name: 'app', driver: 'mock', config: {} }, taskDir, env: {}, previousState, resources: {} }, res, new AbortController().signal);
      return res;
    };
    const first = await call(undefined);
    expect(await exists(join(taskDir, 'local'))).toBe(true);
    expect(first.state).toEqual({ is_done: 'true' });
    // Gone since: a start that trusts is_done does not build it again.
    await rm(taskDir, { recursive: true });
    const second = await call(first.state);
    expect(await exists(taskDir)).toBe(false);
    expect(second.state).toEqual({ is_done: 'true' });
    expect(second.env).toEqual({ NOMAD_TASK_DIR: join(taskDir, 'local'), NOMAD_SECRETS_DIR: join(taskDir, 'secrets') });
  });
});
