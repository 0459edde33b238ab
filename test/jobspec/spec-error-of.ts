/** Test helper: the SpecError a promise rejects with (failing the test for a resolve or any other error). */
import { expect } from 'vitest';
import { SpecError } from '../../src/jobspec/index.ts';

/** The SpecError `p` rejects with. */
export async function specError(p: Promise<unknown>): Promise<SpecError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SpecError);
  return err as SpecError;
}
