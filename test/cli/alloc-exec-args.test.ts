/** How `alloc exec` splits its arguments: its flags, then the allocation ID, then the command whole. */
import { describe, expect, it } from 'vitest';
import { splitExecArgs } from '../../src/cli/alloc-exec.ts';

describe('alloc exec argument split', () => {
  it.each([
    ['the command keeps its own flags', ['abc', 'sh', '-c', 'exit 3'], { flags: [], interactive: true, tty: 'auto', rest: ['abc', 'sh', '-c', 'exit 3'] }],
    ['flags with values before the ID are stepped over', ['-task', 'web', '--data-dir', '/d', 'abc', 'ls', '-l'], { flags: ['-task', 'web', '--data-dir', '/d'], interactive: true, tty: 'auto', rest: ['abc', 'ls', '-l'] }],
    ["-d's value is stepped over too, not taken for the ID", ['-d', '/d', '-task', 'web', 'abc', 'sh', '-c', 'echo'], { flags: ['-d', '/d', '-task', 'web'], interactive: true, tty: 'auto', rest: ['abc', 'sh', '-c', 'echo'] }],
    ["Nomad's -i=false and -t=false", ['-i=false', '-t=false', 'abc', 'cat'], { flags: [], interactive: false, tty: 'false', rest: ['abc', 'cat'] }],
    ['a bare -t asks for a tty', ['-t', 'abc', 'sh'], { flags: [], interactive: true, tty: 'true', rest: ['abc', 'sh'] }],
    ['-- ends the flags', ['-i', '--', '-odd-id', 'true'], { flags: [], interactive: true, tty: 'auto', rest: ['-odd-id', 'true'] }],
  ])('%s', (_name, argv, expected) => {
    expect(splitExecArgs(argv)).toEqual(expected);
  });

  it('names a bad -i or -t value', () => {
    expect(() => splitExecArgs(['-i=maybe', 'abc', 'true'])).toThrow('alloc exec: -i takes true or false (got "maybe")');
    expect(() => splitExecArgs(['-t=yes', 'abc', 'true'])).toThrow('alloc exec: -t takes true, false or auto (got "yes")');
  });
});
