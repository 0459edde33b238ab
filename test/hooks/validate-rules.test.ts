/**
 * The validate hook's rules, row by row (Nomad's validate_hook): each problem a spec can have is named in
 * one message, the task fails with `Failed Validation` and is never retried (not recoverable); a task
 * without problems is marked done so later starts skip the check.
 */
import { describe, expect, it } from 'vitest';
import { HookError, type TaskPrestartResponse } from '../../src/hooks/types.ts';
import { validateHook } from '../../src/hooks/validate-hook.ts';
import type { TaskSpec } from '../../src/jobspec/types.ts';

const ok: TaskSpec = { name: 'web', driver: 'mock', config: {} };

async function validate(task: Partial<TaskSpec> | Record<string, unknown>): Promise<{ err?: HookError; res: TaskPrestartResponse }> {
  const res: TaskPrestartResponse = {};
  const spec = { ...ok, ...task } as TaskSpec;
  const err = await validateHook(['mock', 'raw_exec'])
    .prestart!({ task: spec, taskDir: '/t', env: {} as never, resources: {} }, res, new AbortController().signal)
    .then(() => undefined, (e: HookError) => e);
  return { err, res };
}

describe('the validate hook', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['an unknown driver, naming the known ones sorted', { driver: 'docker' }, 'task "web": driver "docker" is not available (known: mock, raw_exec)'],
    ['a negative kill_timeout', { killTimeout: -1 }, 'task "web": kill_timeout must not be negative'],
    ['a kill_timeout that is not a number', { killTimeout: Number.NaN }, 'task "web": kill_timeout must not be negative'],
    ['a negative shutdown_delay', { shutdownDelay: -5 }, 'task "web": shutdown_delay must not be negative'],
    ['a config that is not an object', { config: null }, 'task "web": config must be an object'],
    ['a name that names a directory', { name: '..' }, 'task "..": task name ".." must not be ".." (it names a directory)'],
    ['every problem at once, in one message', { driver: 'x', killTimeout: -1, config: 'c' }, 'task "web": driver "x" is not available (known: mock, raw_exec); kill_timeout must not be negative; config must be an object'],
  ])('fails %s as Failed Validation, not recoverable', async (_rule, task, message) => {
    const { err, res } = await validate(task);
    expect(err).toBeInstanceOf(HookError);
    expect({ message: err!.message, recoverable: err!.recoverable, eventType: err!.eventType }).toEqual({ message, recoverable: false, eventType: 'Failed Validation' });
    expect(res.done).toBeUndefined();
  });

  it.each<[string, Record<string, unknown>]>([
    ['a plain task', {}],
    ['a zero kill_timeout and shutdown_delay', { killTimeout: 0, shutdownDelay: 0 }],
    ['a name of letters, digits, - _ and .', { name: 'web-1.a_b' }],
  ])('passes %s and marks itself done', async (_rule, task) => {
    const { err, res } = await validate(task);
    expect(err).toBeUndefined();
    expect(res.done).toBe(true);
  });
});
