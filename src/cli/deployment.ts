/**
 * `allocrun deployment list|status|fail`: Nomad's deployment commands against a running agent, over its API
 * (`/v1/deployments`, `/v1/deployment/:id`, `/v1/deployment/fail/:id`), with Nomad's tables. A deployment is
 * named by its ID or a unique prefix of it, as Nomad's commands take one.
 */
import { parseCommand, type Command } from './args.ts';
import { agentClient, ApiError, AGENT_FLAGS, AGENT_FLAGS_HELP, type AgentClient } from './api-client.ts';
import { commandGroup } from './command-group.ts';
import { CliError } from './errors.ts';
import { columns, shortId } from './format.ts';
import { deploymentBlock, monitorDeployment, type ApiDeployment } from './deployment-monitor.ts';

/** The deployment `idOrPrefix` names, or a clear error: none, or several (listed). */
async function findDeployment(client: AgentClient, command: string, idOrPrefix: string): Promise<ApiDeployment> {
  const { body } = await client.get<ApiDeployment[]>('/v1/deployments');
  const exact = body.find((d) => d.ID === idOrPrefix);
  const found = exact ? [exact] : body.filter((d) => d.ID.startsWith(idOrPrefix));
  if (found.length === 1) return found[0]!;
  if (found.length === 0) throw new CliError(`${command}: no deployment with ID or prefix "${idOrPrefix}" on the agent at ${client.label}`, 'ErrDeploymentNotFound');
  throw new CliError(`${command}: prefix "${idOrPrefix}" matched several deployments:\n${listTable(found).join('\n')}`, 'ErrAmbiguousDeployment');
}

/** Nomad's `deployment list` table. */
function listTable(list: ApiDeployment[]): string[] {
  return columns([['ID', 'Job ID', 'Job Version', 'Status', 'Description'], ...list.map((d) => [shortId(d.ID), d.JobID, String(d.JobVersion), d.Status, d.StatusDescription])]);
}

const JSON_FLAG = { json: { type: 'boolean' } } as const;

const deploymentList: Command = {
  name: 'deployment list',
  usage: 'deployment list [--json] [--data-dir D | --address URL [--token-file F | --token T]]',
  details: `
List the deployments of a running agent, newest first: one per version of a service job whose groups
have an update block.

Flags:
  --json            the API's JSON
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, ...JSON_FLAG }, { min: 0, max: 0, names: '' });
    if (!parsed) return 0;
    const { body } = await agentClient('deployment list', parsed.values).get<ApiDeployment[]>('/v1/deployments');
    if (parsed.values.json) process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    else process.stdout.write(body.length === 0 ? 'No deployments found\n' : `${listTable(body).join('\n')}\n`);
    return 0;
  },
};

const deploymentStatus: Command = {
  name: 'deployment status',
  usage: 'deployment status <deployment> [--monitor] [--json] [--data-dir D | --address URL [--token-file F | --token T]]',
  details: `
Show a deployment (its ID or a unique prefix): its job and version, status, and per group how many
allocations are wanted, placed, healthy and unhealthy.

Flags:
  --monitor         follow it until it ends (exit 1 unless it succeeds)
  --json            the API's JSON
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, ...JSON_FLAG, monitor: { type: 'boolean' } }, { min: 1, max: 1, names: 'the deployment ID' });
    if (!parsed) return 0;
    const client = agentClient('deployment status', parsed.values);
    const d = await findDeployment(client, 'deployment status', parsed.positionals[0]!);
    if (parsed.values.monitor) return monitorDeployment(client, d.ID);
    if (parsed.values.json) process.stdout.write(`${JSON.stringify(d, null, 2)}\n`);
    else process.stdout.write(`${deploymentBlock(d).join('\n')}\n`);
    return 0;
  },
};

const deploymentFail: Command = {
  name: 'deployment fail',
  usage: 'deployment fail <deployment> [--data-dir D | --address URL [--token-file F | --token T]]',
  details: `
Mark a running deployment failed (its ID or a unique prefix): its rollout stops where it is, the
allocations not yet replaced keep their version.
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, AGENT_FLAGS, { min: 1, max: 1, names: 'the deployment ID' });
    if (!parsed) return 0;
    const client = agentClient('deployment fail', parsed.values);
    const d = await findDeployment(client, 'deployment fail', parsed.positionals[0]!);
    try {
      await client.send('PUT', `/v1/deployment/fail/${encodeURIComponent(d.ID)}`, {});
    } catch (err) {
      // Nomad's words for a deployment that has already ended, said with the deployment named.
      if (err instanceof ApiError) throw new CliError(`deployment fail: deployment "${shortId(d.ID)}" (${d.Status}): ${err.message}`, err.code);
      throw err;
    }
    process.stdout.write(`Deployment "${d.ID}" failed\n`);
    return 0;
  },
};

const deploymentPromote: Command = {
  name: 'deployment promote',
  usage: 'deployment promote <deployment> [--detach] [--data-dir D | --address URL [--token-file F | --token T]]',
  details: `
Promote a running deployment's canaries (its ID or a unique prefix) once they are healthy: each takes
the place of the old allocation of its instance, and the rest of the update rolls out max_parallel at
a time. Follows the deployment to its end unless --detach (exit 1 unless it succeeds).

Flags:
  --detach          return once the promotion is registered
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, detach: { type: 'boolean' } }, { min: 1, max: 1, names: 'the deployment ID' });
    if (!parsed) return 0;
    const client = agentClient('deployment promote', parsed.values);
    const d = await findDeployment(client, 'deployment promote', parsed.positionals[0]!);
    let res: { EvalID: string };
    try {
      res = await client.send<{ EvalID: string }>('PUT', `/v1/deployment/promote/${encodeURIComponent(d.ID)}`, { DeploymentID: d.ID, All: true });
    } catch (err) {
      // Nomad's words (no canaries, not yet healthy, ended), said with the deployment named.
      if (err instanceof ApiError) throw new CliError(`deployment promote: deployment "${shortId(d.ID)}" (${d.StatusDescription}): ${err.message}`, err.code);
      throw err;
    }
    process.stdout.write(`Deployment "${d.ID}" promoted\nEvaluation ID: ${res.EvalID}\n`);
    return parsed.values.detach ? 0 : monitorDeployment(client, d.ID);
  },
};

export const deploymentCommand = commandGroup('deployment', "List, show, promote and fail a running agent's deployments (Nomad's deployment commands).", [deploymentList, deploymentStatus, deploymentPromote, deploymentFail]);
