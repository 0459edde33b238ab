/**
 * `allocrun job scale` and `job scaling-events`: Nomad's `nomad job scale <job> [<group>] <count>` (a group's count
 * set as the job's next version, POST /v1/job/:id/scale, then monitored as `job run` is) and `nomad job
 * scaling-events <job>` (the events GET /v1/job/:id/scale keeps, newest first), in Nomad's words and columns.
 */
import { parseCommand, type Command } from './args.ts';
import { agentClient, ApiError, AGENT_FLAGS, AGENT_FLAGS_HELP, type AgentClient } from './api-client.ts';
import { CliError, UsageError } from './errors.ts';
import { columns, formatTime } from './format.ts';

interface ScalingEvent {
  Time: number;
  Count: number | null;
  PreviousCount: number;
  Message: string;
  Error: boolean;
  EvalID: string | null;
}

interface ScaleStatus {
  TaskGroups: Record<string, { Desired: number; Events: ScalingEvent[] | null }>;
}

/** Nomad's message for the CLI's scaling requests. */
const CLI_MESSAGE = 'submitted using the Nomad CLI';

/** The scale status of job `id`, a 404 said with the job and the agent. */
async function scaleStatusOf(client: AgentClient, id: string, what: string): Promise<ScaleStatus> {
  try {
    return (await client.get<ScaleStatus>(`/v1/job/${encodeURIComponent(id)}/scale`)).body;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) throw new ApiError(404, `${what}: no job ${JSON.stringify(id)} on the agent at ${client.label} ('allocrun job status' lists them)`);
    throw err;
  }
}

/** Nomad's performGroupCheck: the group named, or the job's only one; an error naming what is wrong otherwise. */
export function chosenGroup(groups: readonly string[], named: string | undefined): string {
  if (named === undefined) {
    if (groups.length === 1) return groups[0]!;
    throw new CliError(`Group name required: job has groups ${groups.map((g) => JSON.stringify(g)).join(', ')}`, 'ErrUsage');
  }
  if (!groups.includes(named)) throw new CliError(`Group ${named} not found within job (its groups: ${groups.map((g) => JSON.stringify(g)).join(', ')})`, 'ErrNotFound');
  return named;
}

/** A count argument: a whole number ≥ 0, or a UsageError naming it. */
export function countArg(text: string): number {
  if (!/^\d+$/.test(text.trim())) throw new UsageError(`job scale: count ${JSON.stringify(text)}: expected a whole number (the group's new count)`, 'job scale');
  return Number(text);
}

/** `job scale`, monitoring its evaluation as `job run` does unless --detach. */
export function jobScale(monitorEvaluation: (client: AgentClient, jobId: string, evalId: string, version: number) => Promise<number>): Command {
  return {
    name: 'job scale',
    usage: 'job scale <job> [<group>] <count> [--detach] [--data-dir D | --address URL [--token-file F | --token T]]',
    details: `
Set the count of a job's group, as 'nomad job scale' does: the job is registered again as its next
version with the new count (added allocations placed, extra ones stopped, a deployment followed when
the group has an update block). The group may be left out when the job has only one. A group with a
scaling block keeps its count within its min and max; a job whose deployment is still running is not
scaled ('job scaling blocked due to active deployment'). Each request is kept as a scaling event
('allocrun job scaling-events'). Waits for the allocations (and the deployment) unless --detach.

Flags:
  --detach          return once the new count is registered, printing its evaluation
${AGENT_FLAGS_HELP}`,
    async run(argv) {
      const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, detach: { type: 'boolean' } }, { min: 2, max: 3, names: 'the job, the group (optional) and the count' });
      if (!parsed) return 0;
      const [id, ...rest] = parsed.positionals as [string, ...string[]];
      const count = countArg(rest.at(-1)!);
      const client = agentClient('job scale', parsed.values);
      const status = await scaleStatusOf(client, id, 'Error querying job');
      const group = chosenGroup(Object.keys(status.TaskGroups), rest.length === 2 ? rest[0] : undefined);
      const res = await client.send<{ EvalID: string; Warnings?: string }>('POST', `/v1/job/${encodeURIComponent(id)}/scale`, {
        Count: count, Target: { Group: group }, Message: CLI_MESSAGE,
      }).catch((err: unknown): never => {
        if (err instanceof ApiError) throw new ApiError(err.status, `Error submitting scaling request: ${err.message}`);
        throw err;
      });
      if (res.Warnings) process.stdout.write(`Job Warnings:\n${res.Warnings}\n\n`);
      if (parsed.values.detach) {
        process.stdout.write(`Evaluation ID: ${res.EvalID}\n`);
        return 0;
      }
      const { body: job } = await client.get<{ Version: number }>(`/v1/job/${encodeURIComponent(id)}`);
      process.stdout.write(`==> Job "${id}" group "${group}" scaled from ${status.TaskGroups[group]!.Desired} to ${count} (version ${job.Version})\n`);
      return monitorEvaluation(client, id, res.EvalID, job.Version);
    },
  };
}

/** Nomad's scaling-events table: every group's events, newest first. */
export function scalingEventLines(status: ScaleStatus, verbose: boolean): string[] {
  const events = Object.entries(status.TaskGroups).flatMap(([group, g]) => (g.Events ?? []).map((e) => ({ group, e })));
  if (events.length === 0) return ['No events found'];
  events.sort((a, b) => b.e.Time - a.e.Time);
  const header = ['Task Group', 'Count', 'PrevCount', ...(verbose ? ['Error', 'Message', 'Eval ID'] : []), 'Date'];
  const rows = events.map(({ group, e }) => [
    group, e.Count === null ? '' : String(e.Count), String(e.PreviousCount),
    ...(verbose ? [String(e.Error), e.Message, e.EvalID ?? ''] : []),
    formatTime(e.Time / 1e6),
  ]);
  return columns([header, ...rows]);
}

export const jobScalingEvents: Command = {
  name: 'job scaling-events',
  usage: 'job scaling-events <job> [--verbose] [--data-dir D | --address URL [--token-file F | --token T]]',
  details: `
List a job's recent scaling events, newest first, as 'nomad job scaling-events' does: each
'job scale' (or POST /v1/job/:id/scale, an autoscaler's too) with the count it set and the one before;
with --verbose also whether it reported an error, its message and its evaluation. The agent keeps
the newest 20 per group.

Flags:
  --verbose         the error, message and evaluation columns too
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, verbose: { type: 'boolean' } }, { min: 1, max: 1, names: 'the job ID' });
    if (!parsed) return 0;
    const id = parsed.positionals[0]!;
    const client = agentClient('job scaling-events', parsed.values);
    const status = await scaleStatusOf(client, id, 'Error listing scaling events');
    process.stdout.write(`${scalingEventLines(status, parsed.values.verbose === true).join('\n')}\n`);
    return 0;
  },
};
