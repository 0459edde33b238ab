/**
 * Why `operator snapshot restore` refuses a file, in words about the user's file. The restore checks a
 * temporary copy inside the data dir; the store's own message names that copy and says how to recover a
 * data dir, neither of which is the user's concern, so the message is built from the store's structured
 * problem (StoreDamagedError.problem) instead.
 */
import { StoreDamagedError } from '../state/agent-store.ts';
import { describeStoreProblem } from '../state/store-problem.ts';
import { CliError } from './errors.ts';

/** The CliError for a snapshot `shownAs` whose copy at `copy` the store refused to open with `err`. */
export function snapshotRefusal(shownAs: string, copy: string, err: unknown): CliError {
  const problem = err instanceof StoreDamagedError ? err.problem : undefined;
  if (!problem) {
    // Not the store's verdict (the copy could not be read at all, say): the system's words, about the user's file.
    const text = err instanceof Error ? err.message : String(err);
    return new CliError(`${shownAs} is not an allocrun snapshot: ${text.split(copy).join('the file')}`, 'ErrBadSnapshot');
  }
  switch (problem.kind) {
    case 'missing':
      return new CliError(`${shownAs} does not exist`, 'ErrNoSnapshot');
    case 'value':
      return new CliError(`${shownAs} is damaged: ${problem.table}/${problem.key} is ${problem.why}`, 'ErrBadSnapshot');
    case 'unopenable':
      // LMDB's text may name the path it was given: the copy, which the user never saw.
      return new CliError(`${shownAs} is not an allocrun snapshot: ${describeStoreProblem({ ...problem, detail: problem.detail.split(copy).join('the file') }, 'the file')}`, 'ErrBadSnapshot');
    default:
      return new CliError(`${shownAs} is not an allocrun snapshot: ${describeStoreProblem(problem, 'the file')}`, 'ErrBadSnapshot');
  }
}
