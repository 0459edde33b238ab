/**
 * `allocrun service list|info`: Nomad's service commands against a running agent, reading the Nomad-native
 * service catalog through its API (`/v1/services`, `/v1/service/:name`), with Nomad's tables.
 */
import { parseCommand, type Command } from './args.ts';
import { agentClient, AGENT_FLAGS, AGENT_FLAGS_HELP } from './api-client.ts';
import { commandGroup } from './command-group.ts';
import { columns, keyValues, shortId } from './format.ts';

/** A registration as the agent answers it (Nomad's ServiceRegistration). */
interface ApiServiceRegistration {
  ID: string;
  ServiceName: string;
  Namespace: string;
  NodeID: string;
  Datacenter: string;
  JobID: string;
  AllocID: string;
  Tags: string[] | null;
  Address: string;
  Port: number;
  CreateIndex: number;
  ModifyIndex: number;
}

/** One namespace's services (Nomad's ServiceRegistrationListStub). */
interface ApiServiceList {
  Namespace: string;
  Services: { ServiceName: string; Tags: string[] | null }[];
}

const FLAGS = { ...AGENT_FLAGS, namespace: { type: 'string' }, json: { type: 'boolean' } } as const;
const FLAGS_HELP = `  --namespace NS    the namespace to read (default: default; * for every namespace)
  --json            the API's JSON
${AGENT_FLAGS_HELP}`;

/** Tags as Nomad's CLI prints them: `[a,b]`. */
const tagList = (tags: string[] | null | undefined): string => `[${(tags ?? []).join(',')}]`;

/** `host:port`, with an IPv6 host in brackets. */
const hostPort = (address: string, port: number): string => (address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`);

const serviceList: Command = {
  name: 'service list',
  usage: 'service list [--namespace NS] [--json] [--data-dir D | --address URL [--token-file F | --token T]]',
  details: `
List the services registered with the agent's Nomad-native service catalog, with their tags.

Flags:
${FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, FLAGS, { min: 0, max: 0, names: '' });
    if (!parsed) return 0;
    const namespace = parsed.values.namespace ?? 'default';
    const client = agentClient('service list', parsed.values);
    const { body } = await client.get<ApiServiceList[]>('/v1/services', { namespace });
    if (parsed.values.json) {
      process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
      return 0;
    }
    const rows = body.flatMap((ns) => ns.Services.map((s) => ({ namespace: ns.Namespace, ...s })));
    if (rows.length === 0) {
      process.stdout.write('No service registrations found\n');
      return 0;
    }
    const all = namespace === '*';
    const table = [all ? ['Service Name', 'Namespace', 'Tags'] : ['Service Name', 'Tags'], ...rows.map((r) => (all ? [r.ServiceName, r.namespace, tagList(r.Tags)] : [r.ServiceName, tagList(r.Tags)]))];
    process.stdout.write(`${columns(table).join('\n')}\n`);
    return 0;
  },
};

const serviceInfo: Command = {
  name: 'service info',
  usage: 'service info <service> [--verbose] [--namespace NS] [--json] [--data-dir D | --address URL [--token-file F | --token T]]',
  details: `
Show where a service is registered: each instance's job, address, tags, node and allocation.

Flags:
  --verbose         every field of each registration, and full IDs
${FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...FLAGS, verbose: { type: 'boolean' } }, { min: 1, max: 1, names: 'the service name' });
    if (!parsed) return 0;
    const name = parsed.positionals[0]!;
    const client = agentClient('service info', parsed.values);
    const { body } = await client.get<ApiServiceRegistration[]>(`/v1/service/${encodeURIComponent(name)}`, { namespace: parsed.values.namespace ?? 'default' });
    if (parsed.values.json) {
      process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
      return 0;
    }
    if (body.length === 0) {
      process.stdout.write('No service registrations found\n');
      return 0;
    }
    if (parsed.values.verbose) {
      const blocks = body.map((r) =>
        keyValues([
          ['ID', r.ID],
          ['Service Name', r.ServiceName],
          ['Namespace', r.Namespace],
          ['Job ID', r.JobID],
          ['Alloc ID', r.AllocID],
          ['Node ID', r.NodeID],
          ['Datacenter', r.Datacenter],
          ['Address', hostPort(r.Address, r.Port)],
          ['Tags', tagList(r.Tags)],
          ['Create Index', String(r.CreateIndex)],
          ['Modify Index', String(r.ModifyIndex)],
        ]).join('\n'),
      );
      process.stdout.write(`${blocks.join('\n\n')}\n`);
      return 0;
    }
    const table = [['Job ID', 'Address', 'Tags', 'Node ID', 'Alloc ID'], ...body.map((r) => [r.JobID, hostPort(r.Address, r.Port), tagList(r.Tags), shortId(r.NodeID), shortId(r.AllocID)])];
    process.stdout.write(`${columns(table).join('\n')}\n`);
    return 0;
  },
};

/** `allocrun service <list|info>`. */
export const serviceCommand = commandGroup('service', "Read a running agent's Nomad-native service catalog.", [serviceList, serviceInfo]);
