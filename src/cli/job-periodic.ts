/**
 * Periodic jobs in the job commands, as Nomad's CLI shows them: `job periodic force`, what `job run` says of a
 * periodic job (its approximate next launch, no monitor: nothing is placed), and what `job status` shows of
 * one (Next Periodic Launch, its children's summary, the jobs it launched).
 */
import { nextLaunch, type PeriodicConfig } from '../jobspec/periodic.ts';
import { parseCommand, type Command } from './args.ts';
import { agentClient, ApiError, AGENT_FLAGS, AGENT_FLAGS_HELP, type AgentClient } from './api-client.ts';
import { columns, formatTime, timeAgo } from './format.ts';
import { UsageError } from './errors.ts';

/** `(4m from now)`: how far ahead `ms` is. */
const fromNow = (ms: number, now: number): string => timeAgo(now - (ms - now), now).replace(/ ago$/, ' from now').replace(/^just now$/, 'now');

/** Nomad's `Approximate next launch time` line (or none: no launch to come). */
export function nextLaunchLine(periodic: PeriodicConfig, now = Date.now()): string {
  const next = nextLaunch(periodic, now);
  return next === undefined ? 'Approximate next launch time: none (no launch is to come)' : `Approximate next launch time: ${formatTime(next)} (${fromNow(next, now)})`;
}

/** What `job status` adds to a periodic job's header (Nomad's `Next Periodic Launch`). */
export function periodicHeader(periodic: PeriodicConfig, stopped: boolean, now = Date.now()): [string, string][] {
  if (stopped || periodic.Enabled === false) return [['Next Periodic Launch', `none (job ${stopped ? 'stopped' : 'disabled'})`]];
  const next = nextLaunch(periodic, now);
  return [['Next Periodic Launch', next === undefined ? 'none' : `${formatTime(next)} (${fromNow(next, now)})`]];
}

/** The rest of `job status` for a periodic job: its children's summary and the jobs it launched, newest first. */
export function periodicSections(client: AgentClient, id: string, children: ChildCounts): Promise<string[]> {
  return childJobSections(client, id, children, { summary: 'Children Job Summary', list: 'Previously Launched Jobs', none: 'No instances of periodic job found' });
}

/** A job's children by status (Nomad's JobChildrenSummary). */
export type ChildCounts = { Pending?: number; Running?: number; Dead?: number };

/** What `job status` shows of a job that launches children (periodic, parameterized): their summary and list, newest first. */
export async function childJobSections(client: AgentClient, id: string, children: ChildCounts, titles: { summary: string; list: string; none: string }): Promise<string[]> {
  const { body: jobs } = await client.get<{ ID: string; ParentID?: string; Status: string; SubmitTime: number }[]>('/v1/jobs');
  const launched = jobs.filter((j) => j.ParentID === id).sort((a, b) => b.SubmitTime - a.SubmitTime);
  const out = ['', titles.summary, ...columns([['Pending', 'Running', 'Dead'], [String(children.Pending ?? 0), String(children.Running ?? 0), String(children.Dead ?? 0)]])];
  out.push('', titles.list);
  out.push(...(launched.length === 0 ? [titles.none] : columns([['ID', 'Status'], ...launched.map((j) => [j.ID, j.Status])])));
  return out;
}

/** `allocrun job periodic force <job>`: Nomad's `nomad job periodic force`. */
export function jobPeriodic(monitor: (client: AgentClient, jobId: string, version: number) => Promise<number>): Command {
  return {
    name: 'job periodic',
    usage: 'job periodic force <job> [--detach] [--data-dir D | --address URL [--token-file F | --token T]]',
    details: `
Force the launch of a periodic job: a child job is launched now, even if the job's prohibit_overlap
would skip it. Waits until the child's allocations run (or finish), unless --detach.

Flags:
  --detach          return once the child is launched, printing its evaluation
${AGENT_FLAGS_HELP}`,
    async run(argv) {
      const [sub, ...rest] = argv;
      if (sub !== 'force' && sub !== '--help' && sub !== '-h') {
        throw new UsageError(`job periodic: ${sub === undefined ? 'missing subcommand' : `unknown subcommand ${JSON.stringify(sub)}`}; the subcommand is: force`, 'job periodic');
      }
      const parsed = parseCommand(this, sub === 'force' ? rest : [sub], { ...AGENT_FLAGS, detach: { type: 'boolean' } }, { min: 1, max: 1, names: 'the job ID' });
      if (!parsed) return 0;
      const client = agentClient('job periodic force', parsed.values);
      const id = parsed.positionals[0]!;
      const res = await client.send<{ EvalID: string }>('PUT', `/v1/job/${encodeURIComponent(id)}/periodic/force`).catch((err: unknown): never => {
        if (err instanceof ApiError && err.status === 404) throw new ApiError(404, `No periodic job(s) with prefix or ID ${JSON.stringify(id)} found on the agent at ${client.label}`);
        if (err instanceof ApiError) throw new ApiError(err.status, `Error forcing periodic job ${JSON.stringify(id)}: ${err.message}`);
        throw err;
      });
      process.stdout.write(`Force periodic successful\nEvaluation ID: ${res.EvalID}\n`);
      if (parsed.values.detach) return 0;
      const { body: evaluation } = await client.get<{ JobID: string }>(`/v1/evaluation/${encodeURIComponent(res.EvalID)}`);
      process.stdout.write(`==> Launched job "${evaluation.JobID}"\n`);
      return monitor(client, evaluation.JobID, 0);
    },
  };
}
