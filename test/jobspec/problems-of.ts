/** The problems a job file is refused with, as `path: message` lines; fails the test when it is accepted. */
import { parseJob, SpecError, type JobFileFormat } from '../../src/jobspec/index.ts';

export async function problemsOf(text: string, format: JobFileFormat = 'hcl'): Promise<string[]> {
  try {
    await parseJob(text, { format });
  } catch (err) {
    if (err instanceof SpecError) return err.problems.map((p) => `${p.path}: ${p.message}`);
    throw err;
  }
  throw new Error('expected the job to be refused');
}
