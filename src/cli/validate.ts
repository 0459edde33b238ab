/** `allocrun validate <jobfile>`: parses and checks a job file without running it. */
import { parseCommand, type Command } from './args.ts';
import { formatProblem, loadJob, specProblemsOf, warningLines } from './job-file.ts';
import { VAR_FLAGS, VAR_FLAGS_HELP, variableInputsOf } from './var-flags.ts';

/**
 * Checks `file` with the `-var`/`-var-file` values given (warnings to stderr) and reports the outcome in the
 * caller's words: `valid` with the allocation count, or `invalid` with each problem formatted. Exit 0 or 1.
 */
export async function checkJobFile(file: string, values: Parameters<typeof variableInputsOf>[0], words: { valid(allocs: number): string; invalid(problems: string[]): string }): Promise<number> {
  const variables = await variableInputsOf(values);
  try {
    const { allocs, warnings } = await loadJob(file, variables);
    process.stderr.write(warningLines(warnings));
    process.stdout.write(words.valid(allocs.length));
    return 0;
  } catch (err) {
    const problems = specProblemsOf(err);
    if (!problems) throw err;
    process.stderr.write(words.invalid(problems.map((p) => formatProblem({ file, ...p }))));
    return 1;
  }
}

/** The `validate` command: "valid: N allocation(s)" and exit 0, or every problem with its place and exit 1. */
export const validateCommand: Command = {
  name: 'validate',
  usage: 'validate <jobfile> [-var NAME=VALUE]... [-var-file F]...',
  details: `
Check a job file (HCL, JSON or YAML) and report every problem.

Prints "valid: N allocation(s)" (one per group instance) and exits 0, or prints every
problem as "file:line:col: path: message" and exits 1.

Flags:
${VAR_FLAGS_HELP}
  -h, --help          show this help

Example:
  allocrun validate examples/demo.nomad`,
  async run(argv) {
    const parsed = parseCommand(this, argv, VAR_FLAGS, { min: 1, max: 1, names: 'the job file' });
    if (!parsed) return 0;
    const file = parsed.positionals[0]!;
    return checkJobFile(file, parsed.values, {
      valid: (allocs) => `valid: ${allocs} allocation(s)\n`,
      invalid: (problems) => `invalid: ${problems.length} problem(s) in ${file}\n${problems.map((p) => `${p}\n`).join('')}`,
    });
  },
};
