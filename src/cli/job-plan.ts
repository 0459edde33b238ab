/**
 * `allocrun job plan <file>`: Nomad's `job plan` against a running agent. The agent plans the job exactly as
 * registering it would (`PUT /v1/job/:id/plan`), writes nothing, and answers the diff against the job it has,
 * what each group's allocations would undergo, and the placements that would fail. Exit status as Nomad's:
 * 0 when no allocation would be created or destroyed, 1 when some would, 255 on any error (a bad file, a bad
 * flag, no agent), so a script can tell "changes" from "failed".
 */
import { parseCommand, type Command } from './args.ts';
import { agentClient, AGENT_FLAGS, AGENT_FLAGS_HELP } from './api-client.ts';
import { apiJobOf } from './api-job-file.ts';
import { VAR_FLAGS, VAR_FLAGS_HELP, variableInputsOf } from './var-flags.ts';
import { CliError, UsageError } from './errors.ts';
import { formatDryRun, formatJobDiff, jobModifyIndexLines, planExitCode, type PlanResponseBody } from './job-plan-format.ts';

/** Nomad's exit status for a plan that could not be made. */
export const PLAN_ERROR_EXIT = 255;

/** A usage error that exits 255, as every failure of `job plan` does. */
class PlanUsageError extends UsageError {
  override readonly exitCode = PLAN_ERROR_EXIT;
}

/** Go's boolean flag values (strconv.ParseBool). */
const GO_BOOLS: Record<string, boolean> = { 1: true, t: true, T: true, TRUE: true, true: true, True: true, 0: false, f: false, F: false, FALSE: false, false: false, False: false };

/**
 * Takes Nomad's `-diff=false` (and `--diff=…`, `--no-diff`) out of `argv`: a boolean that defaults to true
 * needs a way to say false, and Nomad's users write it Go's way.
 */
function diffFlag(cmd: Command, argv: readonly string[]): { argv: string[]; diff: boolean } {
  let diff = true;
  const rest: string[] = [];
  const end = argv.indexOf('--');
  argv.forEach((token, i) => {
    const m = (end < 0 || i < end) && /^--?(diff|no-diff)(?:=(.*))?$/.exec(token);
    if (!m) return void rest.push(token);
    if (m[1] === 'no-diff') {
      if (m[2] !== undefined) throw new PlanUsageError(`${cmd.name}: flag --no-diff takes no value`, cmd.name);
      diff = false;
      return;
    }
    if (m[2] === undefined) diff = true;
    else if (m[2] in GO_BOOLS) diff = GO_BOOLS[m[2]]!;
    else throw new PlanUsageError(`${cmd.name}: -diff takes true or false (got ${JSON.stringify(m[2])})`, cmd.name);
  });
  return { argv: rest, diff };
}

/** Every failure as exit 255, its message unchanged (a job file's problems listed as `allocrun validate` lists them). */
function asPlanError(err: unknown): never {
  if (err instanceof PlanUsageError) throw err;
  if (err instanceof UsageError) throw new PlanUsageError(err.message, err.command);
  const spec = err as { code?: unknown; problems?: unknown; message?: unknown } | null;
  if (spec && spec.code === 'ErrSpec' && Array.isArray(spec.problems) && typeof spec.message === 'string') {
    const lines = spec.message.split('\n');
    throw new CliError(`the job file has ${lines.length} problem(s):\n${lines.map((l) => `  ${l}`).join('\n')}`, 'ErrSpec', PLAN_ERROR_EXIT);
  }
  if (err instanceof CliError) throw new CliError(err.message, err.code, PLAN_ERROR_EXIT);
  const e = err as { message?: unknown } | null;
  throw new CliError(e && typeof e.message === 'string' ? e.message : String(err), 'ErrPlan', PLAN_ERROR_EXIT);
}

/** `job plan`. */
export const jobPlan: Command = {
  name: 'job plan',
  usage: 'job plan <jobfile> [-diff=false] [--verbose] [-var NAME=VALUE]... [-var-file F]... [--data-dir D | --address URL [--token-file F | --token T]]',
  details: `
Dry-run the scheduler: what submitting the job file would do on a running agent, changing nothing.

Prints the difference between the job the agent runs and the file (+ added, - deleted, +/- edited),
per group what would happen to its allocations (create, destroy, in-place update, create/destroy
update, ignore), and whether every allocation could be placed (or, per group, why not). Ends with
the job's modify index: 'allocrun job run -check-index N <jobfile>' then registers the job only if
nobody changed it since the plan.

Exit status: 0 no allocations created or destroyed, 1 allocations created or destroyed, 255 error.

Flags:
  -diff=false       leave out the diff (it is shown by default)
  --verbose         also expand added and deleted groups and tasks, and unchanged job fields
${VAR_FLAGS_HELP}
${AGENT_FLAGS_HELP}

Example:
  allocrun job plan examples/demo.nomad --data-dir /tmp/d`,
  async run(argv) {
    try {
      const { argv: args, diff } = diffFlag(this, argv);
      const parsed = parseCommand(this, args, { ...AGENT_FLAGS, ...VAR_FLAGS, verbose: { type: 'boolean' } }, { min: 1, max: 1, names: 'the job file' });
      if (!parsed) return 0;
      const file = parsed.positionals[0]!;
      const client = agentClient('job plan', parsed.values);
      const { job } = await apiJobOf(file, true, await variableInputsOf(parsed.values));
      const id = String(job['ID']);
      // The diff is always asked for: whether anything changed decides the exit status.
      const plan = await client.send<PlanResponseBody>('PUT', `/v1/job/${encodeURIComponent(id)}/plan`, { Job: job, Diff: true });
      const out: string[] = [];
      if (diff && plan.Diff) out.push(formatJobDiff(plan.Diff, parsed.values.verbose === true), '');
      out.push('Scheduler dry-run:', ...formatDryRun(plan, String(job['Type'] ?? 'service')), '');
      if (plan.Warnings) out.push('Job Warnings:', plan.Warnings, '');
      out.push(...jobModifyIndexLines(plan.JobModifyIndex, file));
      process.stdout.write(`${out.join('\n')}\n`);
      return planExitCode(plan);
    } catch (err) {
      return asPlanError(err);
    }
  },
};
