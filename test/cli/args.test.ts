import { describe, expect, it, vi } from 'vitest';
import { parseCommand } from '../../src/cli/args.ts';

const cmd = { name: 'alloc logs', usage: 'alloc logs', details: '' };
const options = { follow: { type: 'boolean', short: 'f' }, stderr: { type: 'boolean' }, 'data-dir': { type: 'string', short: 'd' }, n: { type: 'string' } } as const;
const parse = (argv: string[]) => parseCommand(cmd, argv, options, { min: 0, max: 2, names: 'x' });

describe('parseCommand', () => {
  it("reads Nomad's single-dash long flags as long flags", () => {
    const parsed = parse(['-stderr', '-data-dir=/tmp/d', '-f', 'abc', '-n', '3']);
    expect(parsed?.values).toMatchObject({ stderr: true, 'data-dir': '/tmp/d', follow: true, n: '3' });
    expect(parsed?.positionals).toEqual(['abc']);
  });

  it('leaves arguments after -- alone', () => {
    expect(parse(['--', '-stderr'])?.positionals).toEqual(['-stderr']);
  });

  it.each([
    [['--nope'], 'alloc logs: unknown flag --nope'],
    [['-stdrr'], 'alloc logs: unknown flag -stdrr'],
    // Nomad's own flags allocrun does not have are named whole, not as the cluster -v -a -r.
    [['-var', 'x=1'], 'alloc logs: unknown flag -var'],
    [['-var-file=prod.hcl'], 'alloc logs: unknown flag -var-file'],
    [['--data-dir'], 'alloc logs: flag --data-dir needs a value'],
    [['-d'], 'alloc logs: flag -d needs a value'],
    [['--stderr=yes'], 'alloc logs: flag --stderr takes no value'],
  ])('names the flag of a bad command line %j, found from the error code', (argv, message) => {
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    expect(() => parse(argv)).toThrow(message);
  });
});
