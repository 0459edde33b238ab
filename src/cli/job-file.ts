/**
 * The CLI's one door to job files (src/jobspec/): loading with warnings, turning read errors into messages
 * that name the file, and printing SpecError problems as `file:line:col: path: message`.
 */
import { BUILTIN_DRIVER_CHECKS } from '../drivers/config-checks.ts';
import { formatProblem, isSpecError, loadJob as loadJobWithWarnings, type LoadedJob, type SpecProblem, type VariableInputs } from '../jobspec/index.ts';
import { CliError } from './errors.ts';

/** src/jobspec's problem formatter and type, so commands import job-file things from one place. */
export { formatProblem, type SpecProblem };

/**
 * A job file's allocations (one per group instance), the checked job, and the Nomad features it uses that
 * allocrun ignores. Drivers and their configs are checked against the built-in drivers the CLI runs;
 * `variables` are the values of an HCL file's input variables (var-flags.ts).
 */
export async function loadJob(path: string, variables?: VariableInputs): Promise<LoadedJob> {
  try {
    return await loadJobWithWarnings(path, { drivers: BUILTIN_DRIVER_CHECKS, ...(variables && { variables }) });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    // A missing or unreadable file is the user's typo, not a crash: say which file.
    if (e.code === 'ENOENT') throw new CliError(`cannot read job file ${path}: no such file`, 'ErrJobFile');
    if (e.code === 'EISDIR') throw new CliError(`cannot read job file ${path}: it is a directory`, 'ErrJobFile');
    if (e.code === 'EACCES') throw new CliError(`cannot read job file ${path}: permission denied`, 'ErrJobFile');
    throw err;
  }
}

/** The problems of a SpecError, or undefined for any other error. */
export function specProblemsOf(err: unknown): SpecProblem[] | undefined {
  return isSpecError(err) ? err.problems : undefined;
}

/** Warnings as `warning: file:line:col: path: message` lines, for stderr. */
export function warningLines(warnings: readonly SpecProblem[]): string {
  return warnings.map((w) => `warning: ${formatProblem(w)}\n`).join('');
}

/**
 * The agent's registration `Warnings` (`path: message` lines) that the file's own warnings did not already
 * say: the CLI prints those with their line and column first, and the agent, checking the same job, finds
 * the same ones again without positions; only what the agent adds is worth a second line.
 */
export function agentWarningLines(agentWarnings: string | undefined, own: readonly SpecProblem[]): string {
  const said = new Set(own.map((w) => `${w.path}: ${w.message}`));
  return (agentWarnings ?? '').split('\n').filter((w) => w !== '' && !said.has(w)).map((w) => `warning: ${w}\n`).join('');
}
