/**
 * A HookError says what it is (code ErrHookFailed, name HookError) and is recoverable unless told
 * otherwise; the validate hook names a task name that is not a string, and never reorders the driver list
 * it was given (the runtime shares it).
 */
import { describe, expect, it } from 'vitest';
import { HookError, type TaskPrestartResponse } from '../../src/hooks/types.ts';
import { validateHook } from '../../src/hooks/validate-hook.ts';
import type { TaskSpec } from '../../src/jobspec/types.ts';

describe('HookError', () => {
  it('carries its code and name, and is recoverable by default', () => {
    const e = new HookError('boom');
    expect([e.code, e.name, e.recoverable, e.eventType, e.message]).toEqual(['ErrHookFailed', 'HookError', true, undefined, 'boom']);
  });
});

describe('validate', () => {
  const run = (drivers: string[], task: Record<string, unknown>) =>
    validateHook(drivers)
      .prestart!({ task: { name: 'web', driver: 'mock', config: {}, ...task } as TaskSpec, taskDir: '/t', env: {}, resources: {} }, {} as TaskPrestartResponse, new AbortController().signal)
      .then(() => undefined, (e: HookError) => e);

  it('names a task name that is not a string', async () => {
    expect((await run(['mock'], { name: 42 }))?.message).toBe('task "42": task name "42" must be a string');
  });

  it('lists the known drivers sorted without reordering the list it was given', async () => {
    const drivers = ['raw_exec', 'mock'];
    expect((await run(drivers, { driver: 'docker' }))?.message).toBe('task "web": driver "docker" is not available (known: mock, raw_exec)');
    expect(drivers).toEqual(['raw_exec', 'mock']);
  });
});
