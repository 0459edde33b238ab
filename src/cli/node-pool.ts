/**
 * `allocrun node pool list|info|jobs|nodes`: Nomad's `nomad node pool` reads (command/node_pool_*.go) against the
 * agent's `/v1/node/pool*` (src/api/routes/node-pools.ts), in Nomad's output. `apply` and `delete` are not here:
 * the agent's pools are the built-ins and its node's own (`allocrun agent --node-pool`), and its API refuses writes.
 */
import { parseCommand, type Command } from './args.ts';
import { agentClient, AGENT_FLAGS, AGENT_FLAGS_HELP, type AgentClient } from './api-client.ts';
import { CliError } from './errors.ts';
import { columns, formatTime, keyValues, shortId } from './format.ts';

/** Nomad's api.NodePool, the parts printed. */
interface NodePoolBody {
  Name: string;
  Description: string;
  Meta: Record<string, string> | null;
  SchedulerConfiguration: { SchedulerAlgorithm?: string; MemoryOversubscriptionEnabled?: boolean | null } | null;
}

/** Nomad's JobListStub, the parts `node pool jobs` prints. */
interface JobStubBody {
  ID: string;
  Type: string;
  Priority: number;
  Status: string;
  SubmitTime: number;
  Periodic?: boolean;
  ParameterizedJob?: boolean;
}

/** Nomad's NodeListStub, the parts `node pool nodes` prints. */
interface NodeStubBody {
  ID: string;
  Datacenter: string;
  Name: string;
  NodeClass: string;
  Drain: boolean;
  SchedulingEligibility: string;
  Status: string;
}

const print = (lines: string[]) => void process.stdout.write(`${lines.join('\n')}\n`);
const json = (value: unknown) => void process.stdout.write(`${JSON.stringify(value, null, 4)}\n`);

/** Nomad's formatNodePoolList. */
export function nodePoolListLines(pools: readonly NodePoolBody[]): string[] {
  return columns([['Name', 'Description'], ...pools.map((p) => [p.Name, p.Description])]);
}

/** Nomad's `node pool info` text: name and description, metadata, scheduler configuration. */
export function nodePoolInfoLines(pool: NodePoolBody): string[] {
  const meta = Object.entries(pool.Meta ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const sched = pool.SchedulerConfiguration;
  const schedPairs: [string, string][] = sched ? [['Scheduler Algorithm', sched.SchedulerAlgorithm ?? '']] : [];
  if (sched && typeof sched.MemoryOversubscriptionEnabled === 'boolean') schedPairs.push(['Memory Oversubscription Enabled', String(sched.MemoryOversubscriptionEnabled)]);
  return [
    ...keyValues([['Name', pool.Name], ['Description', pool.Description]]).map((l) => l.trimEnd()),
    '', 'Metadata', ...(meta.length > 0 ? keyValues(meta) : ['No metadata']),
    '', 'Scheduler Configuration', ...(schedPairs.length > 0 ? keyValues(schedPairs) : ['No scheduler configuration']),
  ];
}

/** Nomad's createStatusListOutput for one namespace: the columns `job status` lists jobs in. */
export function poolJobLines(jobs: readonly JobStubBody[]): string[] {
  const kind = (j: JobStubBody) => `${j.Type}${j.Periodic ? '/periodic' : ''}${j.ParameterizedJob ? '/parameterized' : ''}`;
  return columns([['ID', 'Type', 'Priority', 'Status', 'Submit Date'], ...jobs.map((j) => [j.ID, kind(j), String(j.Priority), j.Status, formatTime(j.SubmitTime / 1e6)])]);
}

/** Nomad's formatNodeStubList: short IDs unless verbose. */
export function poolNodeLines(nodes: readonly NodeStubBody[], verbose: boolean): string[] {
  return columns([['ID', 'DC', 'Name', 'Class', 'Drain', 'Eligibility', 'Status'], ...nodes.map((n) => [verbose ? n.ID : shortId(n.ID), n.Datacenter, n.Name, n.NodeClass, String(n.Drain), n.SchedulingEligibility, n.Status])]);
}

/** Nomad's nodePoolByPrefix: the one pool the prefix names (an exact name wins over longer ones), else an error saying why. */
async function poolByPrefix(client: AgentClient, prefix: string): Promise<NodePoolBody> {
  const { body: pools } = await client.get<NodePoolBody[]>('/v1/node/pools', { prefix });
  if (pools.length === 0) throw new CliError(`Error retrieving node pool: No node pool with prefix ${JSON.stringify(prefix)} found`, 'ErrNotFound');
  const pool = pools.length === 1 ? pools[0] : pools.find((p) => p.Name === prefix);
  if (!pool) throw new CliError(`Prefix matched multiple node pools\n\n${nodePoolListLines(pools).join('\n')}`, 'ErrAmbiguous');
  return pool;
}

const listCommand: Command = {
  name: 'node pool list',
  usage: 'node pool list [--json] [--filter EXPR] [--data-dir D | --address URL [--token-file F]]',
  details: `
List the node pools, as 'nomad node pool list' does: the built-in 'all' and 'default', and the
pool the agent's node is in (allocrun agent --node-pool).

Flags:
  --filter EXPR   only the pools the expression matches (Nomad's filter syntax)
  --json          print the pools as JSON
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, json: { type: 'boolean' }, filter: { type: 'string' } }, { min: 0, max: 0, names: '' });
    if (!parsed) return 0;
    const { body } = await agentClient('node pool list', parsed.values).get<NodePoolBody[]>('/v1/node/pools', { filter: parsed.values.filter });
    if (parsed.values.json) json(body);
    else print(nodePoolListLines(body));
    return 0;
  },
};

const infoCommand: Command = {
  name: 'node pool info',
  usage: 'node pool info [--json] POOL [--data-dir D | --address URL [--token-file F]]',
  details: `
Show a node pool, as 'nomad node pool info' does: its name, description, metadata and scheduler
configuration. POOL may be a prefix of the name when it names one pool.

Flags:
  --json          print the pool as JSON
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, json: { type: 'boolean' } }, { min: 1, max: 1, names: 'a node pool' });
    if (!parsed) return 0;
    const pool = await poolByPrefix(agentClient('node pool info', parsed.values), parsed.positionals[0]!);
    if (parsed.values.json) json(pool);
    else print(nodePoolInfoLines(pool));
    return 0;
  },
};

const jobsCommand: Command = {
  name: 'node pool jobs',
  usage: 'node pool jobs [--json] [--filter EXPR] POOL [--data-dir D | --address URL [--token-file F]]',
  details: `
List the jobs in a node pool, as 'nomad node pool jobs' does (a job that names no node_pool is in
'default'). POOL may be a prefix of the name when it names one pool.

Flags:
  --filter EXPR   only the jobs the expression matches (Nomad's filter syntax)
  --json          print the jobs as JSON
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, json: { type: 'boolean' }, filter: { type: 'string' } }, { min: 1, max: 1, names: 'a node pool' });
    if (!parsed) return 0;
    const client = agentClient('node pool jobs', parsed.values);
    const pool = await poolByPrefix(client, parsed.positionals[0]!);
    const { body } = await client.get<JobStubBody[]>(`/v1/node/pool/${encodeURIComponent(pool.Name)}/jobs`, { filter: parsed.values.filter });
    if (body.length === 0) print(['No jobs']);
    else if (parsed.values.json) json(body);
    else print(poolJobLines(body));
    return 0;
  },
};

const nodesCommand: Command = {
  name: 'node pool nodes',
  usage: 'node pool nodes [--json] [--verbose] [--filter EXPR] POOL [--data-dir D | --address URL [--token-file F]]',
  details: `
List the nodes in a node pool, as 'nomad node pool nodes' does: this agent's node when it is in
POOL ('all' holds it). POOL may be a prefix of the name when it names one pool.

Flags:
  --filter EXPR   only the nodes the expression matches (Nomad's filter syntax)
  --json          print the nodes as JSON
  --verbose       full node IDs
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, json: { type: 'boolean' }, verbose: { type: 'boolean' }, filter: { type: 'string' } }, { min: 1, max: 1, names: 'a node pool' });
    if (!parsed) return 0;
    const client = agentClient('node pool nodes', parsed.values);
    const pool = await poolByPrefix(client, parsed.positionals[0]!);
    const { body } = await client.get<NodeStubBody[]>(`/v1/node/pool/${encodeURIComponent(pool.Name)}/nodes`, { filter: parsed.values.filter });
    if (body.length === 0) print(['No nodes']);
    else if (parsed.values.json) json(body);
    else print(poolNodeLines(body, parsed.values.verbose === true));
    return 0;
  },
};

/** The `node pool` subcommands, for `allocrun node`'s group. */
export const NODE_POOL_COMMANDS: readonly Command[] = [listCommand, infoCommand, jobsCommand, nodesCommand];

/** Nomad's `node pool` writes allocrun does not have, with what to do instead. */
export const NODE_POOL_MISSING: Readonly<Record<string, string>> = {
  apply: "the agent's pools are the built-in 'all' and 'default' and its node's own: start the agent with --node-pool NAME",
  delete: "the agent's pools are the built-in 'all' and 'default' and its node's own, which are never deleted",
};
