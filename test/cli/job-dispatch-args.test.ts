/** `job dispatch`'s own refusals, before any agent is asked: Nomad's words, exit 1 (rows, in process). */
import { describe, expect, it } from 'vitest';
import { CliError } from '../../src/cli/errors.ts';
import { jobCommand } from '../../src/cli/job.ts';

describe('job dispatch refuses before asking the agent', () => {
  it.each([
    [['-meta', 'novalue', 'batch'], 'Error parsing meta value: novalue'],
    [['batch', '/nonexistent/payload.bin'], 'Error reading input data: ENOENT'],
  ])('%j: %s', async (argv, message) => {
    const err = await jobCommand.run(['dispatch', ...argv]).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(1);
    expect((err as Error).message).toContain(message);
  });

  it('takes the job and at most one payload source', async () => {
    const err = await jobCommand.run(['dispatch', 'batch', 'a', 'b']).then(() => undefined, (e: unknown) => e);
    expect((err as Error).message).toContain('job dispatch: unexpected argument "b"');
  });
});
