/**
 * `allocrun node meta apply|read`: Nomad's `nomad node meta apply` and `node meta read`, the agent's dynamic node
 * metadata (`/v1/client/metadata`, src/api/node-meta.ts): keys set or unset on the running node, kept across
 * restarts, read by placement and by allocations placed after.
 */
import { parseCommand, type Command } from './args.ts';
import { agentClient, AGENT_FLAGS, AGENT_FLAGS_HELP } from './api-client.ts';
import { commandGroup } from './command-group.ts';
import { UsageError } from './errors.ts';
import { keyValues } from './format.ts';
import { NODE_POOL_COMMANDS, NODE_POOL_MISSING } from './node-pool.ts';

interface NodeMetaResponse {
  Meta: Record<string, string>;
  Dynamic: Record<string, string | null>;
  Static: Record<string, string>;
}

/** `k=v` pairs (a bare `k` sets it empty, as Nomad's parseMapFromArgs), then each `--unset` key as null. */
export function metaChanges(pairs: readonly string[], unset: string | undefined): Record<string, string | null> {
  const meta: Record<string, string | null> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    meta[at < 0 ? pair : pair.slice(0, at)] = at < 0 ? '' : pair.slice(at + 1);
  }
  for (const k of (unset ?? '').split(',')) if (k !== '') meta[k] = null;
  return meta;
}

/** `key = value` lines, sorted by key, as Nomad's formatNodeMeta; a dynamic key unset shows `<unset>`. */
function metaLines(meta: Record<string, string | null>): string[] {
  const keys = Object.keys(meta).sort();
  return keys.length === 0 ? [''] : keyValues(keys.map((k) => [k, meta[k] ?? '<unset>']));
}

const nodeMetaApply: Command = {
  name: 'node meta apply',
  usage: 'node meta apply [--unset k1,k2] [--node-id ID] key1=value1 ... [--data-dir D | --address URL [--token-file F]]',
  details: `
Set or unset keys of the node's metadata, as 'nomad node meta apply' does. The change is
durable once the command returns, survives agent restarts, and is what constraints (\${meta.KEY})
and allocations placed from now on see; a key unset here is unset even if --meta gave it.
Needs the agent's own token over TCP (Nomad's node:write).

Flags:
  --unset K1,K2   unset these keys
  --node-id ID    the node (this agent's is the only one; default: it)
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, unset: { type: 'string' }, 'node-id': { type: 'string' } }, { min: 0, max: Infinity, names: 'key=value pairs' });
    if (!parsed) return 0;
    if (parsed.values.unset === undefined && parsed.positionals.length === 0) throw new UsageError('node meta apply: Must specify -unset or at least 1 key=value pair', 'node meta apply');
    const meta = metaChanges(parsed.positionals, parsed.values.unset);
    await agentClient('node meta apply', parsed.values).send('POST', '/v1/client/metadata', { NodeID: parsed.values['node-id'] ?? '', Meta: meta });
    return 0;
  },
};

const nodeMetaRead: Command = {
  name: 'node meta read',
  usage: 'node meta read [--json] [--node-id ID] [--data-dir D | --address URL [--token-file F]]',
  details: `
Print the node's metadata, as 'nomad node meta read' does: all of it, the keys set or unset
with 'node meta apply' (Dynamic Meta), and those the agent was started with (--meta).

Flags:
  --json          print the agent's answer as JSON
  --node-id ID    the node (this agent's is the only one; default: it)
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, json: { type: 'boolean' }, 'node-id': { type: 'string' } }, { min: 0, max: 0, names: '' });
    if (!parsed) return 0;
    const nodeId = parsed.values['node-id'];
    const { body } = await agentClient('node meta read', parsed.values).get<NodeMetaResponse>('/v1/client/metadata', nodeId ? { node_id: nodeId } : undefined);
    if (parsed.values.json) {
      process.stdout.write(`${JSON.stringify(body, null, 4)}\n`);
      return 0;
    }
    const out = ['All Meta', ...metaLines(body.Meta), '', 'Dynamic Meta', ...metaLines(body.Dynamic), '', 'Static Meta', ...metaLines(body.Static)];
    process.stdout.write(`${out.join('\n')}\n`);
    return 0;
  },
};

/** `allocrun node meta <apply|read>`. */
const nodeMeta: Command = commandGroup('node meta', "Set, unset and read the node's metadata (node meta apply|read).", [nodeMetaApply, nodeMetaRead]);

/** `allocrun node pool <list|info|jobs|nodes>` (node-pool.ts). */
const nodePool: Command = commandGroup('node pool', "List and read the node pools and their jobs and nodes (node pool list|info|jobs|nodes).", [...NODE_POOL_COMMANDS], NODE_POOL_MISSING);

/** `allocrun node <meta|pool>`. */
export const nodeCommand: Command = commandGroup('node', "The agent's node (node meta apply|read, node pool list|info|jobs|nodes).", [nodeMeta, nodePool]);
