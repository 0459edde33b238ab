/**
 * raw_exec's config block (Nomad's schema: command, args, work_dir and the options Nomad accepts and this
 * driver ignores) and its errors, each by code, name and exact message. Pure: milliseconds.
 */
import { describe, expect, it } from 'vitest';
import type { TaskSpec } from '../../src/jobspec/types.ts';
import { parseRawExecConfig } from '../../src/drivers/raw-exec/config.ts';
import {
  CommandNotFoundError,
  InvalidSignalError,
  RawExecConfigError,
  RecoverError,
  SpawnError,
  TaskNotRunningError,
  WorkloadLostError,
} from '../../src/drivers/raw-exec/errors.ts';

const task = (config: unknown): TaskSpec => ({ name: 'web', driver: 'raw_exec', config }) as unknown as TaskSpec;

/** The error parseRawExecConfig throws for `config`. */
function problemOf(config: unknown): RawExecConfigError {
  try {
    parseRawExecConfig(task(config));
  } catch (err) {
    expect(err).toBeInstanceOf(RawExecConfigError);
    return err as RawExecConfigError;
  }
  throw new Error(`no problem found in ${JSON.stringify(config)}`);
}

const OPTIONS = 'command, args, work_dir, cgroup_v1_override, cgroup_v2_override, oom_score_adj, denied_envvars';

describe('a raw_exec config is an object with a non-empty command', () => {
  it.each([
    [undefined, 'config', 'must be an object with a "command"'],
    [null, 'config', 'must be an object with a "command"'],
    ['sleep', 'config', 'must be an object with a "command"'],
    [['sleep'], 'config', 'must be an object with a "command"'],
    [{}, 'config.command', 'must be a non-empty string (got nothing)'],
    [{ command: '' }, 'config.command', 'must be a non-empty string (got "")'],
    [{ command: '   ' }, 'config.command', 'must be a non-empty string (got "   ")'],
    [{ command: null }, 'config.command', 'must be a non-empty string (got null)'],
    [{ command: ['sleep'] }, 'config.command', 'must be a non-empty string (got a list)'],
    [{ command: 7 }, 'config.command', 'must be a non-empty string (got number)'],
    [{ command: 'x', image: 'y' }, 'config.image', `is not a raw_exec option (expected one of: ${OPTIONS})`],
    [{ command: 'x', args: 'a b' }, 'config.args', 'must be a list of strings (got "a b")'],
    [{ command: 'x', args: null }, 'config.args', 'must be a list of strings (got null)'],
    [{ command: 'x', args: ['a', { b: 1 }] }, 'config.args[1]', 'must be a string (got object)'],
    [{ command: 'x', args: [null] }, 'config.args[0]', 'must be a string (got null)'],
    [{ command: 'x', args: [['a']] }, 'config.args[0]', 'must be a string (got a list)'],
    [{ command: 'x', work_dir: '' }, 'config.work_dir', 'must be a non-empty string (got "")'],
    [{ command: 'x', work_dir: 3 }, 'config.work_dir', 'must be a non-empty string (got number)'],
    [{ command: 'x', work_dir: null }, 'config.work_dir', 'must be a non-empty string (got null)'],
  ])('%j is refused at %s: %s', (config, path, problem) => {
    const err = problemOf(config);
    expect(err.path).toBe(path);
    expect(err.problem).toBe(problem);
    expect(err.task).toBe('web');
    expect(err.message).toBe(`task "web": ${path} ${problem}`);
  });

  it('checks unknown keys before the command', () => {
    expect(problemOf({ comand: 'x' }).path).toBe('config.comand');
  });

  it.each([
    [{ command: 'sleep' }, { command: 'sleep', args: [] }],
    [{ command: 'sleep', args: [] }, { command: 'sleep', args: [] }],
    [{ command: 'sleep', args: ['1', 2, true, false, 0.5] }, { command: 'sleep', args: ['1', '2', 'true', 'false', '0.5'] }],
    [{ command: 'sleep', work_dir: 'local' }, { command: 'sleep', args: [], workDir: 'local' }],
    [{ command: ' sleep ' }, { command: ' sleep ', args: [] }],
  ])('%j reads as %j', (config, parsed) => {
    expect(parseRawExecConfig(task(config))).toStrictEqual(parsed);
  });

  it.each(['cgroup_v1_override', 'cgroup_v2_override', 'oom_score_adj', 'denied_envvars'])('accepts and ignores Nomad\'s %s', (key) => {
    expect(parseRawExecConfig(task({ command: 'x', [key]: 1 }))).toStrictEqual({ command: 'x', args: [] });
  });
});

describe("raw_exec's errors carry a code to branch on, a name and a message naming the task", () => {
  it.each([
    [new RawExecConfigError('t', 'config.args', 'must be x'), 'ErrRawExecConfig', 'RawExecConfigError', 'task "t": config.args must be x'],
    [new CommandNotFoundError('t', 'nope', 'no file'), 'ErrCommandNotFound', 'CommandNotFoundError', 'task "t": cannot run config.command "nope": no file'],
    [new SpawnError('t', 'cannot spawn'), 'ErrSpawnFailed', 'SpawnError', 'task "t": cannot spawn'],
    [new TaskNotRunningError('t', 'wait needs start() first'), 'ErrTaskNotRunning', 'TaskNotRunningError', 'task "t" is not running: wait needs start() first'],
    [new InvalidSignalError('SIGNOPE'), 'ErrInvalidSignal', 'InvalidSignalError', 'unknown signal "SIGNOPE": use a name like SIGTERM, SIGINT or SIGHUP'],
    [new RecoverError('t', 'gone', 'process 5 has exited'), 'ErrRecoverFailed', 'RecoverError', 'cannot recover task "t": process 5 has exited'],
    [new WorkloadLostError('t', 'no status'), 'ErrWorkloadLost', 'WorkloadLostError', 'task "t": the workload was lost: no status'],
  ])('%s', (err, code, name, message) => {
    expect(err).toBeInstanceOf(Error);
    expect((err as { code: string }).code).toBe(code);
    expect(err.name).toBe(name);
    expect(err.message).toBe(message);
  });

  it('keeps the fields a caller reads', () => {
    const notFound = new CommandNotFoundError('t', 'nope', 'x');
    expect([notFound.task, notFound.command]).toEqual(['t', 'nope']);
    expect(new InvalidSignalError('SIGX').signalName).toBe('SIGX');
    const recover = new RecoverError('t', 'pid-reused', 'x');
    expect([recover.task, recover.reason]).toEqual(['t', 'pid-reused']);
    expect(new WorkloadLostError('t', 'x').task).toBe('t');
    expect(new TaskNotRunningError('t', 'x').task).toBe('t');
    const cause = new Error('EINVAL');
    const spawn = new SpawnError('t', 'x', cause);
    expect([spawn.task, spawn.cause]).toEqual(['t', cause]);
  });
});
