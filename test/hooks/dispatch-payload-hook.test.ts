/**
 * The dispatch_payload hook (Nomad's dispatch_hook): a dispatched job's payload in the task's local/ before it
 * starts, with Nomad's mode; nothing without a payload; idempotent; and only in the hook plan of tasks with a
 * dispatch_payload block (no other task gains a hook actor).
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dispatchPayloadHook } from '../../src/hooks/dispatch-payload-hook.ts';
import type { TaskPrestartResponse } from '../../src/hooks/types.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { tempDir } from '../temp-dirs.ts';

const payload = Buffer.from('line one\nline two\n').toString('base64');

async function prestart(hook: ReturnType<typeof dispatchPayloadHook>, taskDir: string): Promise<TaskPrestartResponse> {
  const res: TaskPrestartResponse = {};
  await hook.prestart!({ task: { name: 't', driver: 'mock', config: {} }, taskDir, env: {}, resources: {} }, res, new AbortController().signal);
  return res;
}

describe('dispatch_payload hook', () => {
  it("writes the payload to local/<file> (subdirectories made) with Nomad's 0777 under the umask, and is done", async () => {
    const taskDir = tempDir('allocrun-dispatch-hook-');
    const res = await prestart(dispatchPayloadHook('in/put.txt', payload), taskDir);
    const file = join(taskDir, 'local', 'in', 'put.txt');
    expect(await readFile(file, 'utf8')).toBe('line one\nline two\n');
    expect((await stat(file)).mode & 0o777).toBe(0o777 & ~process.umask());
    expect(res.done).toBe(true);
  });

  it('writes the same bytes again when run again (a restore re-runs it)', async () => {
    const taskDir = tempDir('allocrun-dispatch-hook-');
    const hook = dispatchPayloadHook('input', payload);
    await prestart(hook, taskDir);
    await prestart(hook, taskDir);
    expect(await readFile(join(taskDir, 'local', 'input'), 'utf8')).toBe('line one\nline two\n');
  });

  it('writes no file when the dispatch gave no payload', async () => {
    const taskDir = tempDir('allocrun-dispatch-hook-');
    const res = await prestart(dispatchPayloadHook('input', undefined), taskDir);
    await expect(stat(join(taskDir, 'local', 'input'))).rejects.toThrow(/ENOENT/);
    expect(res.done).toBe(true);
  });

  it('is in the hook plan of the task with dispatch_payload only, and its file is there when the task starts', async () => {
    const dataDir = tempDir('allocrun-dispatch-runner-');
    const spec: AllocSpec = {
      id: 'dispatch-plan', job: 'j/dispatch-1-abcdef01', group: 'g', type: 'batch', payload,
      tasks: [
        { name: 'reader', driver: 'mock', config: { run_for: '10ms' }, dispatchPayload: { file: 'input.txt' } },
        { name: 'other', driver: 'mock', config: { run_for: '10ms' } },
      ],
    };
    const runner = createAllocRunner(spec, { dataDir }).start();
    const plans = (runner.actor.getSnapshot().context as { settings: { taskHooks: Record<string, { prestart?: string[] }> } }).settings.taskHooks;
    expect(plans['reader']!.prestart).toContain('dispatch_payload');
    expect(plans['other']!.prestart).not.toContain('dispatch_payload');
    expect(plans['other']!.prestart).toEqual(plans['reader']!.prestart!.filter((n) => n !== 'dispatch_payload'));
    expect((await runner.done).clientStatus).toBe('complete');
    expect(await readFile(join(dataDir, 'allocs', 'dispatch-plan', 'reader', 'local', 'input.txt'), 'utf8')).toBe('line one\nline two\n');
  });
});
