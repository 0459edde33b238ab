import { describe, expect, it } from 'vitest';
import { SpecError, formatPath, formatProblem, isSpecError } from '../../src/jobspec/index.ts';

describe('SpecError', () => {
  it('lists every problem on its own line as file:line:col: path: message', () => {
    const err = new SpecError([
      { path: 'job.web.group.api.task.app.kill_timeout', message: 'bad', file: 'web.nomad', line: 12, column: 7 },
      { path: 'job.web.type', message: 'worse', file: 'web.nomad', line: 2, column: 3 },
    ]);
    expect(err.code).toBe('ErrSpec');
    expect(err.message).toBe('web.nomad:2:3: job.web.type: worse\nweb.nomad:12:7: job.web.group.api.task.app.kill_timeout: bad');
    expect(err.problems.map((p) => p.line)).toEqual([2, 12]);
  });

  it('leaves out what a problem does not know', () => {
    expect(formatProblem({ path: 'tasks[1].killTimeout', message: 'm' })).toBe('tasks[1].killTimeout: m');
    expect(formatProblem({ path: '', message: 'm', file: 'f.hcl', line: 3 })).toBe('f.hcl:3: m');
    expect(formatProblem({ path: 'a', message: 'm', file: 'f.hcl' })).toBe('f.hcl: a: m');
  });

  it('formats paths with dots for keys and brackets for indices', () => {
    expect(formatPath(['tasks', 1, 'killTimeout'])).toBe('tasks[1].killTimeout');
    expect(formatPath(['job', 'web', 'group', 'api', 'task', 'app', 1])).toBe('job.web.group.api.task.app[1]');
  });

  it('quotes names that would be ambiguous after a dot', () => {
    expect(formatPath(['job', 'my.job', 'group', '', 'task', 'a b'])).toBe('job["my.job"].group[""].task["a b"]');
  });

  it('is recognised by its code', () => {
    expect(isSpecError(new SpecError([{ path: 'a', message: 'b' }]))).toBe(true);
    expect(isSpecError({ code: 'ErrSpec', problems: [] })).toBe(true);
    expect(isSpecError(new Error('x'))).toBe(false);
  });
});
