/**
 * `allocrun job history` and `job revert`: Nomad's `nomad job history` (the versions the agent keeps of a job,
 * newest first) and `nomad job revert` (a kept version registered again as the next, PUT /v1/job/:id/revert).
 */
import { parseCommand, type Command } from './args.ts';
import { agentClient, ApiError, AGENT_FLAGS, AGENT_FLAGS_HELP, type AgentClient } from './api-client.ts';
import { UsageError } from './errors.ts';
import { formatTime, keyValues } from './format.ts';

interface ApiJobVersion {
  Version: number;
  Stable?: boolean;
  SubmitTime: number;
}

/** A version as Nomad's `formatJobVersion` prints it. */
export function versionLines(v: ApiJobVersion): string[] {
  return keyValues([['Version', String(v.Version)], ['Stable', String(v.Stable ?? false)], ['Submit Date', formatTime(v.SubmitTime / 1e6)]]);
}

/** A whole number from the command line, or a UsageError naming it. */
function versionArg(command: string, what: string, value: string): number {
  if (!/^\d+$/.test(value.trim())) throw new UsageError(`${command}: ${what} ${JSON.stringify(value)}: expected a job version, a whole number`, command);
  return Number(value);
}

export const jobHistory: Command = {
  name: 'job history',
  usage: 'job history <job> [--version N] [--json] [--data-dir D | --address URL [--token-file F | --token T]]',
  details: `
List the versions the agent keeps of a job, newest first, as 'nomad job history' does: the newest
--job-tracked-versions (6) and any older one an allocation still runs.

Flags:
  --version N       only that version
  --json            the versions as the agent answers them
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, version: { type: 'string' }, json: { type: 'boolean' } }, { min: 1, max: 1, names: 'the job ID' });
    if (!parsed) return 0;
    const id = parsed.positionals[0]!;
    const only = parsed.values.version === undefined ? undefined : versionArg('job history', '--version', parsed.values.version);
    const client = agentClient('job history', parsed.values);
    const { body } = await client.get<{ Versions: ApiJobVersion[] }>(`/v1/job/${encodeURIComponent(id)}/versions`).catch(noSuchJob(id, client));
    const versions = only === undefined ? body.Versions : body.Versions.filter((v) => v.Version === only);
    if (only !== undefined && versions.length === 0) throw new ApiError(404, `job "${id}" has no version ${only} on the agent at ${client.label} (kept: ${body.Versions.map((v) => v.Version).join(', ')})`);
    if (parsed.values.json) {
      process.stdout.write(`${JSON.stringify(only === undefined ? versions : versions[0], null, 4)}\n`);
      return 0;
    }
    process.stdout.write(`${versions.map((v) => versionLines(v).join('\n')).join('\n\n')}\n`);
    return 0;
  },
};

/** `job revert`, monitoring the reverted version's allocations as `job run` does unless --detach. */
export function jobRevert(monitor: (client: AgentClient, jobId: string, version: number) => Promise<number>): Command {
  return {
    name: 'job revert',
    usage: 'job revert <job> <version> [--detach] [--data-dir D | --address URL [--token-file F | --token T]]',
    details: `
Revert a job to one of the versions the agent keeps ('allocrun job history'), as 'nomad job revert'
does: that version is registered again as the job's next one. Waits until its allocations run (or
finish), unless --detach.

Flags:
  --detach          return once the revert is registered, printing its evaluation
${AGENT_FLAGS_HELP}`,
    async run(argv) {
      const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, detach: { type: 'boolean' } }, { min: 2, max: 2, names: 'the job ID and the version' });
      if (!parsed) return 0;
      const [id, versionText] = parsed.positionals as [string, string];
      const version = versionArg('job revert', 'version', versionText);
      const client = agentClient('job revert', parsed.values);
      const res = await client.send<{ EvalID: string }>('PUT', `/v1/job/${encodeURIComponent(id)}/revert`, { JobID: id, JobVersion: version }).catch((err: unknown): never => {
        if (err instanceof ApiError) throw new ApiError(err.status, `Error retrieving job version: ${err.message}`);
        throw err;
      });
      if (parsed.values.detach || !res.EvalID) {
        process.stdout.write(res.EvalID ? `Evaluation ID: ${res.EvalID}\n` : `Job "${id}" is already as version ${version} left it: nothing to do\n`);
        return 0;
      }
      const { body: job } = await client.get<{ Version: number }>(`/v1/job/${encodeURIComponent(id)}`);
      process.stdout.write(`==> Job "${id}" reverted to version ${version} (now version ${job.Version})\n`);
      return monitor(client, id, job.Version);
    },
  };
}

function noSuchJob(id: string, client: AgentClient) {
  return (err: unknown): never => {
    if (err instanceof ApiError && err.status === 404) throw new ApiError(404, `No job(s) with prefix or id ${JSON.stringify(id)} found on the agent at ${client.label}`);
    throw err;
  };
}
