/**
 * `allocrun scaling policy list|info`: Nomad's `nomad scaling policy` commands (command/scaling_policy_list.go and
 * _info.go), over GET /v1/scaling/policies and /v1/scaling/policy/:id, in Nomad's columns and words.
 */
import { parseCommand, type Command } from './args.ts';
import { agentClient, AGENT_FLAGS, AGENT_FLAGS_HELP } from './api-client.ts';
import { commandGroup } from './command-group.ts';
import { CliError } from './errors.ts';
import { columns, keyValues } from './format.ts';

interface PolicyStub {
  ID: string;
  Enabled: boolean;
  Type: string;
  Target: Record<string, string>;
}

interface Policy extends PolicyStub {
  Min: number;
  Max: number;
  Policy: Record<string, unknown> | null;
}

/** Nomad's formatScalingPolicyTarget: Namespace, Job and Group first, then any other key in order. */
export function targetText(target: Record<string, string>): string {
  const first = ['Namespace', 'Job', 'Group'].filter((k) => k in target);
  const rest = Object.keys(target).filter((k) => !first.includes(k)).sort();
  return [...first, ...rest].map((k) => `${k}:${target[k]}`).join(',');
}

/** Nomad's policy table, sorted by target, IDs cut to 8 characters unless `full`. */
export function policyLines(policies: readonly PolicyStub[], full: boolean): string[] {
  if (policies.length === 0) return ['No policies found'];
  const sorted = [...policies].sort((a, b) => targetText(a.Target).localeCompare(targetText(b.Target)));
  return columns([['ID', 'Enabled', 'Type', 'Target'], ...sorted.map((p) => [full ? p.ID : p.ID.slice(0, 8), String(p.Enabled), p.Type, targetText(p.Target)])]);
}

const policyList: Command = {
  name: 'scaling policy list',
  usage: 'scaling policy list [--job J] [--type T] [--verbose] [--json] [--data-dir D | --address URL [--token-file F | --token T]]',
  details: `
List the scaling policies of a running agent's jobs, as 'nomad scaling policy list' does: one per
group with a scaling block, with its target (namespace, job, group).

Flags:
  --job J           only the policies of job J
  --type T          only policies whose type starts with T (a group's is "horizontal")
  --verbose         full IDs
  --json            the policies as the agent answers them
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, job: { type: 'string' }, type: { type: 'string' }, verbose: { type: 'boolean' }, json: { type: 'boolean' } }, { min: 0, max: 0, names: '' });
    if (!parsed) return 0;
    const client = agentClient('scaling policy list', parsed.values);
    const { body } = await client.get<PolicyStub[]>('/v1/scaling/policies', { job: parsed.values.job, type: parsed.values.type });
    process.stdout.write(parsed.values.json ? `${JSON.stringify(body, null, 4)}\n` : `${policyLines(body, parsed.values.verbose === true).join('\n')}\n`);
    return 0;
  },
};

const policyInfo: Command = {
  name: 'scaling policy info',
  usage: 'scaling policy info <policy ID or prefix> [--verbose] [--json] [--data-dir D | --address URL [--token-file F | --token T]]',
  details: `
Show one scaling policy, as 'nomad scaling policy info' does: its target, bounds and the policy
block an autoscaler reads. The ID may be a unique prefix of two characters or more.

Flags:
  --verbose         the full ID
  --json            the policy as the agent answers it
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, verbose: { type: 'boolean' }, json: { type: 'boolean' } }, { min: 1, max: 1, names: 'the policy ID' });
    if (!parsed) return 0;
    const prefix = parsed.positionals[0]!;
    if (prefix.length === 1) throw new CliError('Identifier must contain at least two characters.', 'ErrUsage');
    const client = agentClient('scaling policy info', parsed.values);
    const { body: found } = await client.get<PolicyStub[]>('/v1/scaling/policies', { prefix });
    if (found.length === 0) throw new CliError(`No scaling policies with prefix or id ${JSON.stringify(prefix)} found on the agent at ${client.label}`, 'ErrNotFound');
    if (found.length > 1) throw new CliError(`Prefix matched multiple scaling policies\n\n${policyLines(found, parsed.values.verbose === true).join('\n')}`, 'ErrUsage');
    const { body: policy } = await client.get<Policy>(`/v1/scaling/policy/${encodeURIComponent(found[0]!.ID)}`);
    if (parsed.values.json) {
      process.stdout.write(`${JSON.stringify(policy, null, 4)}\n`);
      return 0;
    }
    const info = keyValues([
      ['ID', parsed.values.verbose ? policy.ID : policy.ID.slice(0, 8)], ['Enabled', String(policy.Enabled)], ['Target', targetText(policy.Target)],
      ['Min', String(policy.Min)], ['Max', String(policy.Max)],
    ]);
    const doc = policy.Policy && Object.keys(policy.Policy).length > 0 ? JSON.stringify(policy.Policy, null, 4) : '<empty>';
    process.stdout.write(`${info.join('\n')}\n\nPolicy:\n${doc}\n`);
    return 0;
  },
};

const scalingPolicy: Command = commandGroup('scaling policy', "List and show the agent's scaling policies (scaling policy list|info).", [policyList, policyInfo]);

export const scalingCommand: Command = commandGroup('scaling', "The agent's scaling policies (scaling policy list|info).", [scalingPolicy]);
