/**
 * `allocrun job inspect` and `job validate`: Nomad's `nomad job inspect` (a registered job as the agent holds
 * it, `{ "Job": … }`, at its current or a kept version) and `nomad job validate` (a job file checked with the
 * rules the agent applies, without registering it).
 */
import { parseCommand, type Command } from './args.ts';
import { agentClient, ApiError, AGENT_FLAGS, AGENT_FLAGS_HELP } from './api-client.ts';
import { UsageError } from './errors.ts';
import { checkJobFile } from './validate.ts';
import { VAR_FLAGS, VAR_FLAGS_HELP } from './var-flags.ts';
import type { JobSubmission } from '../api/job-submissions.ts';

export const jobInspect: Command = {
  name: 'job inspect',
  usage: 'job inspect <job> [--version N] [--hcl [--with-vars]] [--data-dir D | --address URL [--token-file F | --token T]]',
  details: `
Print a registered job as the agent holds it, { "Job": … } in Nomad's API JSON, as 'nomad job inspect'
does: what 'allocrun job run' takes back (save it as a .json job file).

With --hcl, print instead the job file the version was run from, as written (comments, variables,
locals), as 'nomad job inspect -hcl' does: 'allocrun job run' sends it with the job. A job registered
through the API without its file, from a YAML file, or with a file over 1 MB has none.

Flags:
  --version N       a version the agent keeps ('allocrun job history'), not the current one
  --hcl             the job file the version was run from
  --with-vars       with --hcl: also say, on stderr, the -var flags and var-file values it was run with
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, version: { type: 'string' }, hcl: { type: 'boolean' }, 'with-vars': { type: 'boolean' } }, { min: 1, max: 1, names: 'the job ID' });
    if (!parsed) return 0;
    const id = parsed.positionals[0]!;
    const wanted = parsed.values.version;
    if (wanted !== undefined && !/^\d+$/.test(wanted.trim())) throw new UsageError(`job inspect: --version ${JSON.stringify(wanted)}: expected a job version, a whole number`, 'job inspect');
    if (parsed.values['with-vars'] && !parsed.values.hcl) throw new UsageError('job inspect: can only use --with-vars with --hcl', 'job inspect');
    const client = agentClient('job inspect', parsed.values);
    const notFound = (err: unknown): never => {
      if (err instanceof ApiError && err.status === 404) throw new ApiError(404, `No job(s) with prefix or id ${JSON.stringify(id)} found on the agent at ${client.label}`);
      throw err;
    };
    if (parsed.values.hcl) {
      const version = wanted !== undefined ? Number(wanted) : (await client.get<{ Version: number }>(`/v1/job/${encodeURIComponent(id)}`).catch(notFound)).body.Version;
      const { body } = await client.get<JobSubmission>(`/v1/job/${encodeURIComponent(id)}/submission?version=${version}`).catch((err: unknown) => {
        // Nomad's words, and why a job may have none.
        if (err instanceof ApiError && err.status === 404) {
          throw new ApiError(404, `Error inspecting job: job ${JSON.stringify(id)} with version ${version} couldn't be found: the agent at ${client.label} keeps no job file for it (a version registered through the API without one, from a YAML file, or with one over 1 MB; or not kept)`);
        }
        throw err;
      });
      process.stdout.write(body.Source.endsWith('\n') ? body.Source : `${body.Source}\n`);
      if (parsed.values['with-vars']) process.stderr.write(withVarsLines(id, body));
      return 0;
    }
    let job: unknown;
    if (wanted === undefined) {
      job = (await client.get<unknown>(`/v1/job/${encodeURIComponent(id)}`).catch(notFound)).body;
    } else {
      const { body } = await client.get<{ Versions: { Version: number }[] }>(`/v1/job/${encodeURIComponent(id)}/versions`).catch(notFound);
      job = body.Versions.find((v) => v.Version === Number(wanted));
      if (!job) throw new ApiError(404, `job "${id}" has no version ${Number(wanted)} on the agent at ${client.label} (kept: ${body.Versions.map((v) => v.Version).join(', ')})`);
    }
    process.stdout.write(`${JSON.stringify({ Job: job }, null, 4)}\n`);
    return 0;
  },
};

/**
 * Nomad's `-with-vars` note: how to run the job as it was submitted, each `-var` flag (sorted) and each line of
 * its var files' content as one more `-var`.
 */
export function withVarsLines(id: string, s: Pick<JobSubmission, 'Format' | 'VariableFlags' | 'Variables'>): string {
  const flags = Object.entries(s.VariableFlags ?? {}).map(([k, v]) => `${k}=${v}`).sort();
  const lines = s.Variables.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const args = [...flags, ...lines].map((v) => `-var ${shellQuote(v)}`);
  // Saved under the name its format is read by (allocrun's job run has no -json flag).
  const file = shellQuote(`${id}${s.Format === 'json' ? '.json' : '.nomad.hcl'}`);
  return `\nTo run this job as originally submitted:\n\n$ allocrun job inspect --hcl ${shellQuote(id)} > ${file}\n$ allocrun job run ${[...args, file].join(' ')}\n`;
}

/** `s` as one shell word: as it is when it is plain, else in single quotes. */
const shellQuote = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

export const jobValidate: Command = {
  name: 'job validate',
  usage: 'job validate <jobfile> [-var NAME=VALUE]... [-var-file F]...',
  details: `
Check a job file (HCL, JSON or YAML) with the rules the agent applies, without registering it, as
'nomad job validate' does: "Job validation successful" and exit 0, or every problem with its place
and exit 1. (The same check as 'allocrun validate', in Nomad's words.)

Flags:
${VAR_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, VAR_FLAGS, { min: 1, max: 1, names: 'the job file' });
    if (!parsed) return 0;
    return checkJobFile(parsed.positionals[0]!, parsed.values, {
      valid: () => 'Job validation successful\n',
      invalid: (problems) => `Job validation errors:\n${problems.length} error(s) occurred:\n${problems.map((p) => `\t* ${p}\n`).join('')}`,
    });
  },
};
