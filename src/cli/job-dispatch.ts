/**
 * Parameterized jobs in the job commands, as Nomad's CLI shows them: `job dispatch` (command/job_dispatch.go)
 * and what `job status` shows of a parameterized job (its payload and meta rules, its dispatched children).
 */
import { readFile } from 'node:fs/promises';
import type { ParameterizedConfig } from '../jobspec/parameterized.ts';
import { parseCommand, type Command } from './args.ts';
import { agentClient, ApiError, AGENT_FLAGS, AGENT_FLAGS_HELP, type AgentClient } from './api-client.ts';
import { CliError } from './errors.ts';
import { keyValues } from './format.ts';
import { childJobSections, type ChildCounts } from './job-periodic.ts';

/** What `job status` shows of a parameterized job: its rules, its children's summary, the jobs dispatched. */
export async function parameterizedSections(client: AgentClient, id: string, config: ParameterizedConfig, children: ChildCounts): Promise<string[]> {
  const rules = keyValues([
    ['Payload', config.Payload],
    ['Required Metadata', (config.MetaRequired ?? []).join(', ')],
    ['Optional Metadata', (config.MetaOptional ?? []).join(', ')],
  ]);
  const sections = await childJobSections(client, id, children, { summary: 'Parameterized Job Summary', list: 'Dispatched Jobs', none: 'No dispatched instances of parameterized job found' });
  return ['', 'Parameterized Job', ...rules, ...sections];
}

/** The payload argument: a file's bytes, or stdin's for `-` (Nomad's input source). */
async function readPayload(source: string | undefined): Promise<Buffer> {
  if (source === undefined) return Buffer.alloc(0);
  try {
    if (source !== '-') return await readFile(source);
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  } catch (err) {
    throw new CliError(`Error reading input data: ${(err as Error).message}`, 'ErrDispatch');
  }
}

/** `-meta k=v` flags as a map (a later key wins, as Nomad's map does). */
function metaOf(flags: string[]): Record<string, string> {
  const meta: Record<string, string> = {};
  for (const m of flags) {
    const eq = m.indexOf('=');
    if (eq < 0) throw new CliError(`Error parsing meta value: ${m}`, 'ErrDispatch');
    meta[m.slice(0, eq)] = m.slice(eq + 1);
  }
  return meta;
}

/** The parameterized job `prefix` names: an exact ID, else the one parameterized job whose ID starts with it. */
async function parameterizedJobId(client: AgentClient, prefix: string): Promise<string> {
  const { body: jobs } = await client.get<{ ID: string; ParameterizedJob?: boolean }[]>('/v1/jobs', { prefix });
  const candidates = jobs.filter((j) => j.ParameterizedJob);
  const exact = candidates.find((j) => j.ID === prefix);
  if (exact) return exact.ID;
  if (candidates.length === 1) return candidates[0]!.ID;
  if (candidates.length === 0) throw new CliError(`No parameterized job(s) with prefix or ID ${JSON.stringify(prefix)} found on the agent at ${client.label}`, 'ErrNotFound');
  throw new CliError(`Prefix ${JSON.stringify(prefix)} matched multiple parameterized jobs: ${candidates.map((j) => j.ID).join(', ')}`, 'ErrDispatch');
}

/** `allocrun job dispatch`: Nomad's `nomad job dispatch`. */
export function jobDispatch(monitor: (client: AgentClient, jobId: string, version: number) => Promise<number>): Command {
  return {
    name: 'job dispatch',
    usage: 'job dispatch [-meta K=V]... [-id-prefix-template T] [-idempotency-token T] [-detach] [-verbose] <parameterized job> [<payload file> | -] [--data-dir D | --address URL [--token-file F | --token T]]',
    details: `
Dispatch an instance of a parameterized job: a child job with the given meta and payload (a file, or
stdin for "-") is registered and run. Waits until its allocations run (or finish), unless -detach.

Flags:
  -meta K=V                merged into the job's meta (repeatable); only keys the job's
                           meta_required or meta_optional names are allowed
  -id-prefix-template T    put T in the dispatched job's ID: <job>/dispatch-T-<time>-<id>
  -idempotency-token T     dispatch at most one child with this token: a repeat answers with it
  -detach                  return once the child is registered
  -verbose                 show the full evaluation ID
${AGENT_FLAGS_HELP}`,
    async run(argv) {
      const parsed = parseCommand(this, argv, {
        ...AGENT_FLAGS,
        meta: { type: 'string', multiple: true },
        'id-prefix-template': { type: 'string' },
        'idempotency-token': { type: 'string' },
        detach: { type: 'boolean' },
        verbose: { type: 'boolean' },
      }, { min: 1, max: 2, names: 'the parameterized job and an optional payload source' });
      if (!parsed) return 0;
      const [prefix, source] = parsed.positionals as [string, string | undefined];
      const payload = await readPayload(source);
      const meta = metaOf((parsed.values.meta as string[] | undefined) ?? []);
      const client = agentClient('job dispatch', parsed.values);
      const id = await parameterizedJobId(client, prefix.trim());
      const token = parsed.values['idempotency-token'] as string | undefined;
      const res = await client
        .send<{ DispatchedJobID: string; EvalID: string }>('PUT', `/v1/job/${encodeURIComponent(id)}/dispatch`, {
          JobID: id,
          Meta: meta,
          Payload: payload.length > 0 ? payload.toString('base64') : undefined,
          IdPrefixTemplate: parsed.values['id-prefix-template'],
        }, { idempotency_token: token || undefined })
        .catch((err: unknown): never => {
          if (err instanceof ApiError) throw new CliError(`Failed to dispatch job: ${err.message}`, err.code);
          throw err;
        });
      const evalId = parsed.values.verbose ? res.EvalID : res.EvalID.slice(0, 8);
      process.stdout.write(`${keyValues([['Dispatched Job ID', res.DispatchedJobID], ...(res.EvalID ? [['Evaluation ID', evalId] as [string, string]] : [])]).join('\n')}\n`);
      // No evaluation: the child already existed (an idempotency token seen before), or it is periodic.
      if (parsed.values.detach || !res.EvalID) return 0;
      process.stdout.write('\n');
      return monitor(client, res.DispatchedJobID, 0);
    },
  };
}
