import { describe, expect, it } from 'vitest';
import { SpecError, validateAllocSpec, type AllocSpec } from '../../src/jobspec/index.ts';

const valid = (): AllocSpec => ({
  id: 'web-api-0',
  job: 'web',
  group: 'api',
  type: 'service',
  restart: { attempts: 2, interval: 1_800_000, delay: 15_000, mode: 'fail' },
  tasks: [
    { name: 'init', driver: 'mock', config: {}, lifecycle: { hook: 'prestart' } },
    { name: 'app', driver: 'mock', config: { run_for: '1s' }, leader: true, killTimeout: 5_000, logs: { maxFiles: 2, maxFileSize: 1024 } },
  ],
});

/** The problems validateAllocSpec reports for `value`, as `path: message` lines. */
function problemsOf(value: unknown): string[] {
  try {
    validateAllocSpec(value);
  } catch (err) {
    expect(err).toBeInstanceOf(SpecError);
    return (err as SpecError).problems.map((p) => `${p.path}: ${p.message}`);
  }
  return [];
}

describe('validateAllocSpec', () => {
  it('returns a valid spec as it is', () => {
    const spec = valid();
    expect(validateAllocSpec(spec)).toBe(spec);
  });

  it("accepts a periodic job's child as its job: Nomad's <parent>/periodic-<unix seconds> names no file", () => {
    expect(problemsOf({ ...valid(), job: 'report/periodic-1767225600' })).toEqual([]);
  });

  it('reports every problem at once, each with its path', () => {
    const spec = valid() as unknown as Record<string, unknown> & { tasks: Record<string, unknown>[] };
    spec['type'] = 'cron';
    spec.tasks[0]!['driver'] = '';
    spec.tasks[1]!['killTimeout'] = -1;
    spec.tasks[1]!['lifecycle'] = { hook: 'prerun' };
    expect(problemsOf(spec)).toEqual([
      'type: must be one of "service", "batch", "system", "sysbatch"; got "cron"',
      'tasks[0].driver: must not be empty; got ""',
      'tasks[1].lifecycle.hook: must be one of "prestart", "poststart", "poststop"; got "prerun"',
      'tasks[1].killTimeout: must not be negative; got -1',
    ]);
  });

  it('requires at least one task', () => {
    expect(problemsOf({ ...valid(), tasks: [] })).toEqual(['tasks: an allocation needs at least one task']);
  });

  it('requires unique, non-empty task names', () => {
    const spec = valid();
    spec.tasks[1]!.name = 'init';
    spec.tasks.push({ name: '', driver: 'mock', config: {} });
    expect(problemsOf(spec)).toEqual(['tasks[2].name: must not be empty; got ""', 'tasks[1].name: task name "init" is already used by tasks[0]']);
  });

  it('allows at most one leader', () => {
    const spec = valid();
    spec.tasks[0]!.leader = true;
    expect(problemsOf(spec)).toEqual(['tasks[1].leader: only one task can be the leader; tasks[0] already is']);
  });

  it('checks restart policies at alloc and task level', () => {
    const spec = valid();
    spec.restart = { attempts: -1, interval: 1000, delay: Number.NaN, mode: 'never' as 'fail' };
    spec.tasks[0]!.restart = { attempts: 1.5, interval: 0, delay: 0, mode: 'delay' };
    expect(problemsOf(spec)).toEqual([
      'restart.attempts: must be at least 0; got -1',
      'restart.delay: expected a number, got NaN',
      'restart.mode: must be one of "fail", "delay"; got "never"',
      'tasks[0].restart.attempts: expected an integer, got 1.5',
    ]);
  });

  it('names unknown keys, with a suggestion', () => {
    expect(problemsOf({ ...valid(), shutdowndelay: 5 })).toEqual(['shutdowndelay: unknown key "shutdowndelay"; did you mean "shutdownDelay"?']);
  });

  it('refuses ids and task names that are not path-safe', () => {
    const spec = valid();
    spec.id = '../escape';
    spec.tasks[0]!.name = 'a/b';
    expect(problemsOf(spec).map((p) => p.split(':')[0])).toEqual(['id', 'tasks[0].name']);
  });

  it.each([
    ['id', 'a/b', 'id: alloc id "a/b" must not contain "/"'],
    ['id', '..', 'id: alloc id ".." must not be ".." (it names a directory)'],
    ['job', 'web\\x', 'job: job "web\\\\x" must not contain "\\"'],
    ['job', 'a\0b', 'job: job "a\\u0000b" must not contain a NUL character'],
    ['job', 'my job', 'job: job "my job" must not contain whitespace'],
    ['group', '.', 'group: group "." must not be "." (it names a directory)'],
    ['group', 'x/y', 'group: group "x/y" must not contain "/"'],
    ['group', 'a\nb', 'group: group "a\\nb" must not contain a control character (a newline, a tab, ...)'],
    ['job', 'j'.repeat(133), `job: job ${JSON.stringify('j'.repeat(40)).slice(0, -1)}…" (133 characters) is 133 bytes long; it may have at most 132`],
    ['group', 'é'.repeat(51), `group: group ${JSON.stringify('é'.repeat(40)).slice(0, -1)}…" (51 characters) is 102 bytes long; it becomes a directory name, so it may have at most 100`],
    ['id', 'i'.repeat(211), `id: alloc id ${JSON.stringify('i'.repeat(40)).slice(0, -1)}…" (211 characters) is 211 bytes long; it becomes a directory name, so it may have at most 210`],
  ] as const)('refuses %s %j, naming the field', (field, name, problem) => {
    expect(problemsOf({ ...valid(), [field]: name })).toEqual([problem]);
  });

  it('refuses task names with a backslash, a NUL or a dot-dot', () => {
    const spec = valid();
    spec.tasks[0]!.name = 'a\\b';
    spec.tasks[1]!.name = '..';
    spec.tasks.push({ name: 'x\0', driver: 'mock', config: {} });
    expect(problemsOf(spec)).toEqual([
      'tasks[0].name: task "a\\\\b" must not contain "\\"',
      'tasks[1].name: task ".." must not be ".." (it names a directory)',
      'tasks[2].name: task "x\\u0000" must not contain a NUL character',
    ]);
  });

  it('accepts names with dots, dashes and unicode that are not "." or ".."', () => {
    expect(() => validateAllocSpec({ ...valid(), id: 'web.api-0', job: 'wéb', group: '...' })).not.toThrow();
  });

  it.each([
    ['web server', 'may only use ASCII letters, digits, "_", "-" and "." (it names the task\'s directory and log files)'],
    ['wëb', 'may only use ASCII letters, digits, "_", "-" and "."'],
    ['a=b', 'may only use ASCII letters, digits, "_", "-" and "."'],
    ['a\tb', 'must not contain a control character (a newline, a tab, ...)'],
    ['t'.repeat(101), 'is 101 bytes long; it becomes a directory name, so it may have at most 100'],
  ])('refuses the task name %j as the runtime does (its directory, its log files)', (name, why) => {
    const spec = valid();
    spec.tasks[0]!.name = name;
    expect(problemsOf(spec)).toEqual([expect.stringMatching(/^tasks\[0\]\.name: task "/)]);
    expect(problemsOf(spec)[0]).toContain(why);
  });

  it('accepts a task name of 100 letters, digits, "_", "-" and "."', () => {
    const spec = valid();
    spec.tasks[0]!.name = `a_b-c.${'d'.repeat(94)}`;
    expect(() => validateAllocSpec(spec)).not.toThrow();
  });

  it('says a wrong type in the words of code', () => {
    expect(problemsOf({ ...valid(), tasks: {} })).toEqual(['tasks: expected an array, got an object']);
  });

  it('checks kill signals, logs and string maps', () => {
    const spec = valid();
    spec.tasks[1]!.killSignal = 'SIGFOO';
    spec.tasks[1]!.logs = { maxFiles: 0, maxFileSize: 1 };
    spec.tasks[1]!.env = { A: 1 as unknown as string };
    expect(problemsOf(spec).map((p) => p.split(':')[0])).toEqual(['tasks[1].env.A', 'tasks[1].killSignal', 'tasks[1].logs.maxFiles']);
  });

  it('says what it got when the value is not an object at all', () => {
    expect(problemsOf(null)).toEqual([': expected an AllocSpec object, got null']);
    expect(problemsOf(['spec'])).toEqual([': expected an AllocSpec object, got an array']);
  });
});
