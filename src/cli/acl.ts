/**
 * `allocrun acl token create|list|info|delete|self`: Nomad's ACL token commands against a running agent.
 * Only the management identity (the agent's socket, or its token over TCP) may create, list, read or
 * delete tokens; `self` shows whichever token is sent. The secret of a new token is printed once: the
 * agent keeps only its hash.
 */
import { POLICIES } from '../api/acl.ts';
import { parseCommand, type Command } from './args.ts';
import { agentClient, AGENT_FLAGS, AGENT_FLAGS_HELP, ApiError, type AgentClient } from './api-client.ts';
import { columns, keyValues } from './format.ts';
import { UsageError } from './errors.ts';

/** An ACL token as the agent answers it (Nomad's `ACLToken`). */
interface ApiToken {
  AccessorID: string;
  SecretID?: string;
  Name: string;
  Type: string;
  Policies: string[] | null;
  Global: boolean;
  CreateTime: string | null;
  CreateIndex: number;
  ModifyIndex: number;
}

const AGENT_USAGE = '[--data-dir D | --address URL [--token-file F | --token T]]';

/** `Accessor ID = ...` lines, as `nomad acl token create` prints a token. */
function tokenLines(t: ApiToken): string {
  return `${keyValues([
    ['Accessor ID', t.AccessorID],
    ...(t.SecretID !== undefined ? ([['Secret ID', t.SecretID]] as [string, string][]) : []),
    ['Name', t.Name || '<none>'],
    ['Type', t.Type],
    ['Global', String(t.Global)],
    ['Create Time', t.CreateTime ?? '<none>'],
    ['Policies', t.Policies === null ? '<all: management>' : `[${t.Policies.join(' ')}]`],
  ]).join('\n')}\n`;
}

const print = (json: boolean | undefined, body: unknown, text: () => string) => process.stdout.write(json ? `${JSON.stringify(body, null, 2)}\n` : text());

const create: Command = {
  name: 'acl token create',
  usage: `acl token create -type client -policy read|submit|lifecycle [-policy ...] [-name N] [--json] ${AGENT_USAGE}`,
  details: `
Create a client token on a running agent, limited to what its policies allow (a token may carry
several; it may do what any of them allows):
  read       every GET endpoint: jobs, allocations, evaluations, logs, stats, events, agent
  submit     read, plus register, validate, parse, stop and purge jobs
  lifecycle  read, plus restart, signal and stop allocations
Only the agent's own token (or its socket, through --data-dir) may create, list or delete tokens.

The Secret ID is printed once: the agent keeps only its SHA-256 hash. Send it as X-Nomad-Token
(e.g. NOMAD_TOKEN, or a 0600 file given with --token-file).

Flags:
  -type T           client (the only type made here: the agent's token is the management token)
  -policy P         ${POLICIES.join(', ')}; repeat for more than one
  -name N           a name for the token
  --json            the API's JSON
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, type: { type: 'string' }, policy: { type: 'string', multiple: true }, name: { type: 'string' }, json: { type: 'boolean' } }, { min: 0, max: 0, names: '' });
    if (!parsed) return 0;
    const type = parsed.values.type ?? 'client';
    if (type === 'management') throw new UsageError("acl token create: -type management is not made here: the agent's own token (--token-file) is the management token; use -type client", this.name);
    if (type !== 'client') throw new UsageError(`acl token create: -type must be client (got ${JSON.stringify(type)})`, this.name);
    const policies = parsed.values.policy ?? [];
    if (policies.length === 0) throw new UsageError(`acl token create: a client token needs at least one -policy: ${POLICIES.join(', ')}`, this.name);
    for (const p of policies) {
      if (!(POLICIES as readonly string[]).includes(p)) throw new UsageError(`acl token create: unknown policy ${JSON.stringify(p)}; the policies are ${POLICIES.join(', ')}`, this.name);
    }
    const client = agentClient(this.name, parsed.values);
    const token = await client.send<ApiToken>('PUT', '/v1/acl/token', { Name: parsed.values.name ?? '', Type: 'client', Policies: policies });
    print(parsed.values.json, token, () => tokenLines(token));
    if (!parsed.values.json) process.stderr.write('Keep the Secret ID now: the agent keeps only its hash and cannot show it again.\n');
    return 0;
  },
};

const list: Command = {
  name: 'acl token list',
  usage: `acl token list [--json] ${AGENT_USAGE}`,
  details: `
List the client tokens of a running agent (never their secrets).

Flags:
  --json            the API's JSON
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, json: { type: 'boolean' } }, { min: 0, max: 0, names: '' });
    if (!parsed) return 0;
    const { body } = await agentClient(this.name, parsed.values).get<ApiToken[]>('/v1/acl/tokens');
    print(parsed.values.json, body, () =>
      body.length === 0
        ? 'No tokens (besides the agent\'s own management token)\n'
        : `${columns([['Name', 'Type', 'Global', 'Accessor ID', 'Policies'], ...body.map((t) => [t.Name || '<none>', t.Type, String(t.Global), t.AccessorID, (t.Policies ?? []).join(',')])]).join('\n')}\n`,
    );
    return 0;
  },
};

const info: Command = {
  name: 'acl token info',
  usage: `acl token info <accessor> [--json] ${AGENT_USAGE}`,
  details: `
Show one client token of a running agent by its accessor ID (not its secret, which the agent does
not keep).

Flags:
  --json            the API's JSON
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, json: { type: 'boolean' } }, { min: 1, max: 1, names: 'the token\'s accessor ID' });
    if (!parsed) return 0;
    const accessor = parsed.positionals[0]!;
    const client = agentClient(this.name, parsed.values);
    const { body } = await client.get<ApiToken>(`/v1/acl/token/${encodeURIComponent(accessor)}`).catch(namingTheToken(accessor, client));
    print(parsed.values.json, body, () => tokenLines(body));
    return 0;
  },
};

const self: Command = {
  name: 'acl token self',
  usage: `acl token self [--json] ${AGENT_USAGE}`,
  details: `
Show the token this command sends (with --address), or the management identity of the agent's socket
(with --data-dir alone).

Flags:
  --json            the API's JSON
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, json: { type: 'boolean' } }, { min: 0, max: 0, names: '' });
    if (!parsed) return 0;
    const { body } = await agentClient(this.name, parsed.values).get<ApiToken>('/v1/acl/token/self');
    print(parsed.values.json, body, () => tokenLines(body));
    return 0;
  },
};

const remove: Command = {
  name: 'acl token delete',
  usage: `acl token delete <accessor> ${AGENT_USAGE}`,
  details: `
Revoke a client token: the next request that sends its secret is refused (403).

Flags:
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS }, { min: 1, max: 1, names: 'the token\'s accessor ID' });
    if (!parsed) return 0;
    const accessor = parsed.positionals[0]!;
    const client = agentClient(this.name, parsed.values);
    await client.send('DELETE', `/v1/acl/token/${encodeURIComponent(accessor)}`).catch(namingTheToken(accessor, client));
    process.stdout.write(`Token ${accessor} successfully deleted\n`);
    return 0;
  },
};

/** A 404 for a named token, said with its accessor and the agent (as job and alloc commands name theirs); other errors as they are. */
function namingTheToken(accessor: string, client: AgentClient) {
  return (err: unknown): never => {
    if (err instanceof ApiError && err.status === 404) {
      throw new ApiError(404, `${err.message}: no token with accessor ID ${JSON.stringify(accessor)} on the agent at ${client.label} ('allocrun acl token list' lists them)`);
    }
    throw err;
  };
}

const SUBS = [create, list, info, self, remove];
const tokenUsage = `acl token <${SUBS.map((s) => s.name.split(' ')[2]).join('|')}> [args]`;
const tokenDetails = `
Manage the agent's client tokens (Nomad's ACL tokens, with three built-in policies).

Subcommands:
${SUBS.map((s) => `  allocrun ${s.usage}`).join('\n')}

Run 'allocrun acl token <subcommand> --help' for its flags.`;

/** The `acl` command (Nomad's name): today, `acl token ...`. */
export const aclCommand: Command = {
  name: 'acl',
  usage: tokenUsage,
  details: tokenDetails,
  async run(argv) {
    const [group, sub, ...rest] = argv;
    const help = (to: NodeJS.WriteStream, code: number) => (to.write(`Usage: allocrun ${tokenUsage}\n${tokenDetails}\n`), code);
    if (group === '--help' || group === '-h') return help(process.stdout, 0);
    if (group === undefined) return help(process.stderr, 2);
    if (group !== 'token') throw new UsageError(`acl: unknown subcommand ${JSON.stringify(group)}; subcommands: token`, 'acl');
    if (sub === '--help' || sub === '-h') return help(process.stdout, 0);
    if (sub === undefined) return help(process.stderr, 2);
    const cmd = SUBS.find((s) => s.name === `acl token ${sub}`);
    if (!cmd) throw new UsageError(`acl token: unknown subcommand ${JSON.stringify(sub)}; subcommands: ${SUBS.map((s) => s.name.split(' ')[2]).join(', ')}`, 'acl');
    return cmd.run(rest);
  },
};
