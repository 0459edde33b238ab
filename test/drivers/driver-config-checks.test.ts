/**
 * The built-in drivers' config checks, as the job loader runs them (src/drivers/config-checks.ts): each
 * problem is named by its path in the task (config fields under `config`, the task user under `user`),
 * raw_exec's config problem and its user problem are both reported, and a sound config has none.
 */
import { describe, expect, it } from 'vitest';
import { BUILTIN_DRIVER_CHECKS } from '../../src/drivers/config-checks.ts';

const USER_PROBLEM = 'no user "no-such-user-zz" on this machine (getent passwd no-such-user-zz finds none)';
type Check = (config: Record<string, unknown>, task: string, fields?: { user?: string }) => { path: (string | number)[]; message: string }[];
const rawExec = BUILTIN_DRIVER_CHECKS.raw_exec as Check;
const mock = BUILTIN_DRIVER_CHECKS.mock as Check;

describe('raw_exec config checks', () => {
  it.each<[string, Record<string, unknown>, { user?: string }, { path: (string | number)[]; message: string }[]]>([
    ['a sound config', { command: '/bin/true' }, {}, []],
    ['an empty command, at config.command', { command: '' }, {}, [{ path: ['config', 'command'], message: 'must be a non-empty string (got "")' }]],
    ['an argument that is not a string, at its index', { command: '/bin/true', args: [{}] }, {}, [{ path: ['config', 'args', 0], message: 'must be a string (got object)' }]],
    ['a user that does not exist, at user', { command: '/bin/true' }, { user: 'no-such-user-zz' }, [{ path: ['user'], message: USER_PROBLEM }]],
    ['a config problem and a user problem, both', {}, { user: 'no-such-user-zz' }, [{ path: ['config', 'command'], message: 'must be a non-empty string (got nothing)' }, { path: ['user'], message: USER_PROBLEM }]],
  ])('%s', (_what, config, fields, problems) => {
    expect(rawExec(config, 't', fields)).toEqual(problems);
  });
});

describe('mock config checks', () => {
  it.each<[string, Record<string, unknown>, { path: (string | number)[]; message: string }[]]>([
    ['a sound config', { run_for: '1s' }, []],
    ['every bad field, each at its path', { run_for: 'x', exit_code: 'y' }, [
      { path: ['config', 'run_for'], message: '"x" is not a duration: use a number of milliseconds or a Go duration like "15s", "1m30s", "250ms"' },
      { path: ['config', 'exit_code'], message: 'expected an integer, got "y"' },
    ]],
    ['an unknown option', { nope: 1 }, [{ path: ['config', 'nope'], message: 'unknown mock driver option' }]],
  ])('%s', (_what, config, problems) => {
    expect(mock(config, 't')).toEqual(problems);
  });

  it('covers exactly the built-in drivers, and cannot be changed', () => {
    expect(Object.keys(BUILTIN_DRIVER_CHECKS)).toEqual(['raw_exec', 'mock']);
    expect(Object.isFrozen(BUILTIN_DRIVER_CHECKS)).toBe(true);
  });
});
