/**
 * Variable paths, namespaces and items as Nomad validates them (nomad/structs/variables.go): each row a
 * path and whether Nomad accepts it, and for a refused one the words of its answer.
 */
import { describe, expect, it } from 'vitest';
import { checkVariable, itemsProblem, namespaceProblem, pathProblem, VariableError } from '../../src/variables/path-rules.ts';

const ACCEPTED = [
  'a',
  'app/config',
  'A-z_0~9/x',
  'nomad/jobs',
  'nomad/jobs/web',
  'nomad/jobs/web/g/t/deeper/still',
  'nomad/job-templates/base',
  'nomadic/anything',
  'x'.repeat(128),
];

const REFUSED: [string, RegExp][] = [
  ['', /variable requires path/],
  ['x'.repeat(129), /invalid path .*129 characters long, the most is 128/],
  ['app.config', /invalid path "app\.config": a path may hold only/],
  ['app@default', /invalid path/],
  ['with space', /invalid path/],
  ['ünïcode', /invalid path/],
  ['nomad', /"nomad" is a reserved top-level directory path/],
  ['nomad/other', /only paths at "nomad\/jobs" or "nomad\/job-templates" and below/],
  ['nomad/job-templates', /"nomad\/job-templates" is a reserved directory path/],
  ['nomad/job-templates/a/b', /"nomad\/job-templates" is a reserved directory path/],
];

describe('variable path rules', () => {
  it.each(ACCEPTED)('accepts %j', (path) => {
    expect(pathProblem(path)).toBeUndefined();
  });

  it.each(REFUSED)('refuses %j', (path, why) => {
    expect(pathProblem(path)).toMatch(why);
  });

  it('refuses the wildcard namespace and names that are not namespace names', () => {
    expect(namespaceProblem('default')).toBeUndefined();
    expect(namespaceProblem('prod-1')).toBeUndefined();
    expect(namespaceProblem('*')).toMatch(/can not target wildcard \("\*"\) namespace/);
    expect(namespaceProblem('a/b')).toMatch(/invalid namespace "a\/b"/);
    expect(namespaceProblem('')).toMatch(/invalid namespace/);
  });

  it('refuses empty items and items over 64 KiB of keys and values, without quoting a value', () => {
    expect(itemsProblem({ k: 'v' })).toBeUndefined();
    expect(itemsProblem({})).toMatch(/empty variables are invalid/);
    expect(itemsProblem({ k: 'v'.repeat(65535) })).toBeUndefined();
    const big = itemsProblem({ k: 'secret-'.repeat(10_000) });
    expect(big).toMatch(/limited to 64KiB in total size \(these items hold 70001 bytes/);
    expect(big).not.toContain('secret');
    // Bytes, not characters: two-byte characters count twice.
    expect(itemsProblem({ k: 'é'.repeat(32_767) })).toBeUndefined();
    expect(itemsProblem({ k: 'é'.repeat(32_768) })).toMatch(/64KiB/);
  });

  it('throws a VariableError with its code for the first problem', () => {
    expect(() => checkVariable('default', 'nomad', { k: 'v' })).toThrow(VariableError);
    try {
      checkVariable('*', 'a', {});
    } catch (err) {
      expect((err as VariableError).code).toBe('ErrInvalidVariable');
      expect((err as Error).message).toMatch(/wildcard/);
    }
  });
});
