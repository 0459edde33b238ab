/** Nomad subcommands allocrun does not have are named with what to do instead, not as unknown (rows, in process). */
import { describe, expect, it } from 'vitest';
import { allocCommand } from '../../src/cli/alloc.ts';
import { UsageError } from '../../src/cli/errors.ts';
import { jobCommand } from '../../src/cli/job.ts';

describe('a Nomad subcommand allocrun does not have', () => {
  it.each([
    // alloc exec is one now: what it refuses is named as its own usage errors.
    [allocCommand, ['exec', '5b1e'], 'alloc exec: missing the command to run (after the allocation ID)'],
    [allocCommand, ['exec', '-t', '5b1e', 'ls'], 'alloc exec: -t: allocrun cannot give the command a terminal'],
    [allocCommand, ['fs'], 'alloc fs: missing the allocation ID and a path'],
    [jobCommand, ['validate'], 'job validate: missing the job file'],
    [jobCommand, ['histroy', 'web'], 'job: unknown subcommand "histroy"; subcommands: run, plan, stop, status, history, revert, inspect, validate, periodic, dispatch'],
  ] as const)('%#: %j', async (cmd, argv, message) => {
    const err = await cmd.run([...argv]).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toContain(message);
  });
});
