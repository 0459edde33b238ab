/**
 * `allocrun job run|plan|stop|status`: Nomad's job commands against a running agent (`allocrun agent`), over its
 * HTTP API. The job file is checked here first, so problems are reported exactly as `allocrun validate`
 * reports them, with file, line and column.
 */
import { parseCommand, type Command } from './args.ts';
import { agentClient, ApiError, AGENT_FLAGS, AGENT_FLAGS_HELP, type AgentClient } from './api-client.ts';
import { recordOfApiAlloc, type ApiAllocation } from './api-records.ts';
import { isTerminalStatus, watchAllocs } from './api-watch.ts';
import { commandGroup } from './command-group.ts';
import { columns, formatTime, keyValues, shortId, timeAgo } from './format.ts';
import { apiJobOf } from './api-job-file.ts';
import { submissionOfFile } from './job-submission.ts';
import { agentWarningLines } from './job-file.ts';
import { checkIndexOf, enforcedRegistration, notUpdated } from './job-check-index.ts';
import { jobPlan } from './job-plan.ts';
import { jobPeriodic, nextLaunchLine, periodicHeader, periodicSections } from './job-periodic.ts';
import { jobHistory, jobRevert } from './job-history.ts';
import { jobInspect, jobValidate } from './job-inspect.ts';
import { jobDispatch, parameterizedSections } from './job-dispatch.ts';
import { jobScale, jobScalingEvents } from './job-scale.ts';
import type { ParameterizedConfig } from '../jobspec/parameterized.ts';
import type { PeriodicConfig } from '../jobspec/periodic.ts';
import { latestDeploymentSection, monitorDeployment, type ApiDeployment } from './deployment-monitor.ts';
import { placementFailureLines, PLACEMENT_FAILED_EXIT, type EvaluationBody } from './placement-failures.ts';
import { VAR_FLAGS, VAR_FLAGS_HELP, variableInputsOf } from './var-flags.ts';

interface RegisterResponse {
  EvalID: string;
  JobModifyIndex: number;
  Warnings?: string;
}

/** Waits until every allocation of the job's current version runs or has finished; exit 1 if one failed. */
export async function monitor(client: AgentClient, jobId: string, version: number): Promise<number> {
  const seen = new Map<string, string>();
  const current = (allocs: ApiAllocation[]) => allocs.filter((a) => a.DesiredStatus === 'run' && a.JobVersion === version);
  const allocs = await watchAllocs(
    client,
    `/v1/job/${encodeURIComponent(jobId)}/allocations`,
    (list) => current(list).every((a) => a.ClientStatus !== 'pending'),
    (list) => {
      for (const a of current(list)) {
        const was = seen.get(a.ID);
        if (was === undefined) process.stdout.write(`    Allocation "${shortId(a.ID)}" created: group "${a.TaskGroup}"\n`);
        if (was !== a.ClientStatus && a.ClientStatus !== 'pending') process.stdout.write(`    Allocation "${shortId(a.ID)}" ${a.ClientStatus}\n`);
        seen.set(a.ID, a.ClientStatus);
      }
    },
  );
  const failed = current(allocs).filter((a) => a.ClientStatus === 'failed');
  process.stdout.write(`==> ${current(allocs).length} allocation(s) of job "${jobId}" version ${version}: ${failed.length > 0 ? `${failed.length} failed` : 'running or complete'}\n`);
  return failed.length > 0 ? 1 : 0;
}

const jobRun: Command = {
  name: 'job run',
  usage: 'job run <jobfile> [-var NAME=VALUE]... [-var-file F]... [--detach] [--check-index N] [--data-dir D | --address URL [--token-file F | --token T]]',
  details: `
Submit a job file (HCL, JSON, YAML or Nomad API JSON) to a running agent.

Registering a job again with changes updates it the way Nomad does: changes that can be applied in
place (restart policy, kill timeout, ...) update the running allocations; others (driver, config,
env, meta, resources, tasks) replace them; a count change adds or stops allocations. An unchanged
job is left as it is. Waits until the allocations run (or finish), unless --detach; a service job
with an update block is then followed through its deployment, which replaces max_parallel
allocations at a time and moves on as each new one is healthy (exit 1 if it fails). Allocations the
scheduler could not place (ports, CPU, memory) are named with the exhausted dimension; exit status 2.

Flags:
  --detach          return once the job is registered
  --check-index N   register only while the job's modify index on the agent is N (0: only if the
                    job does not exist yet); 'allocrun job plan' prints the index to give
${AGENT_FLAGS_HELP}

Example:
  allocrun agent --data-dir /tmp/d &
  allocrun job run examples/demo.nomad --data-dir /tmp/d`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, ...VAR_FLAGS, detach: { type: 'boolean' }, 'check-index': { type: 'string' } }, { min: 1, max: 1, names: 'the job file' });
    if (!parsed) return 0;
    const checkIndex = checkIndexOf(this, parsed.values['check-index']);
    const client = agentClient('job run', parsed.values);
    const file = parsed.positionals[0]!;
    const inputs = await variableInputsOf(parsed.values);
    const { job, warnings } = await apiJobOf(file, false, inputs);
    // The file itself goes with the job, as 'nomad job run' sends it: the agent keeps it ('job inspect -hcl').
    const submission = await submissionOfFile(file, inputs.args ?? [], (inputs.files ?? []).map((f) => f.text));
    const res = await client.send<RegisterResponse>('PUT', '/v1/jobs', { Job: job, ...(submission && { Submission: submission }), ...enforcedRegistration(checkIndex) }).catch(notUpdated);
    process.stderr.write(agentWarningLines(res.Warnings, warnings));
    const id = String(job['ID']);
    // Nomad: a parameterized job is not evaluated (each dispatch places a child of its own).
    if (job['ParameterizedJob']) {
      process.stdout.write('Job registration successful\n');
      return 0;
    }
    // Nomad: a periodic job is not evaluated (its launcher places children); the next launch is said instead.
    const periodic = job['Periodic'] as PeriodicConfig | undefined;
    if (periodic) {
      process.stdout.write(`Job registration successful\n${periodic.Enabled === false ? 'Periodic launches are disabled (periodic.enabled = false)' : nextLaunchLine(periodic)}\n`);
      return 0;
    }
    if (!res.EvalID) {
      process.stdout.write(`==> Job "${id}" is unchanged: nothing to do\n`);
      return 0;
    }
    const { body } = await client.get<{ Version: number }>(`/v1/job/${encodeURIComponent(id)}`);
    if (parsed.values.detach) {
      process.stdout.write(`Job registration successful\nEvaluation ID: ${res.EvalID}\nJob Version: ${body.Version}\n`);
      return 0;
    }
    process.stdout.write(`==> Job "${id}" registered: version ${body.Version}, index ${res.JobModifyIndex}\n`);
    return monitorEvaluation(client, id, res.EvalID, body.Version);
  },
};

/**
 * Follows an evaluation of job `id` as Nomad's monitor does: the allocations of `version` until they run (or
 * finish), then the deployment it started to its end. Exit 1 when one fails, 2 when some could not be placed.
 */
export async function monitorEvaluation(client: AgentClient, id: string, evalId: string, version: number): Promise<number> {
  // Allocations the scheduler could not place never appear: say so, as Nomad's monitor does, and exit 2.
  const { body: evaluation } = await client.get<EvaluationBody>(`/v1/evaluation/${encodeURIComponent(evalId)}`);
  const unplaced = placementFailureLines(evaluation);
  if (unplaced.length > 0) process.stdout.write(`${unplaced.join('\n')}\n`);
  const code = await monitor(client, id, version);
  // As Nomad's monitor: a deployment is followed to its end, and its outcome is the exit status (its success
  // overrides unplaced allocations; a failed allocation fails it).
  if (evaluation.DeploymentID) return monitorDeployment(client, evaluation.DeploymentID);
  return unplaced.length > 0 && code === 0 ? PLACEMENT_FAILED_EXIT : code;
}

const jobStop: Command = {
  name: 'job stop',
  usage: 'job stop <job> [--purge] [--detach] [--data-dir D | --address URL [--token-file F | --token T]]',
  details: `
Stop a job's allocations on a running agent; with --purge, also forget the job.

Waits until every allocation of the job has stopped, unless --detach.

Flags:
  --purge           forget the job (its versions) once stopped
  --detach          return once the stop is registered
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, purge: { type: 'boolean' }, detach: { type: 'boolean' }, yes: { type: 'boolean' } }, { min: 1, max: 1, names: 'the job ID' });
    if (!parsed) return 0;
    const client = agentClient('job stop', parsed.values);
    const id = parsed.positionals[0]!;
    const res = await client.send<RegisterResponse>('DELETE', `/v1/job/${encodeURIComponent(id)}`, undefined, { purge: parsed.values.purge ? 'true' : undefined }).catch(namingTheJob(id, client));
    if (parsed.values.detach) {
      process.stdout.write(`Job "${id}" stopped\nEvaluation ID: ${res.EvalID}\n`);
      return 0;
    }
    process.stdout.write(`==> Job "${id}" ${parsed.values.purge ? 'stopped and purged' : 'stopped'}; waiting for its allocations to stop\n`);
    const seen = new Set<string>();
    await watchAllocs(
      client,
      '/v1/allocations',
      (list) => list.filter((a) => a.JobID === id).every((a) => isTerminalStatus(a.ClientStatus)),
      (list) => {
        for (const a of list.filter((x) => x.JobID === id && isTerminalStatus(x.ClientStatus) && !seen.has(x.ID))) {
          seen.add(a.ID);
          process.stdout.write(`    Allocation "${shortId(a.ID)}" ${a.ClientStatus}\n`);
        }
      },
    );
    process.stdout.write(`==> Job "${id}" has no running allocations\n`);
    return 0;
  },
};

interface ApiJob {
  ID: string;
  Name: string;
  Type: string;
  Priority: number;
  Status: string;
  Version: number;
  SubmitTime: number;
  Namespace: string;
  Datacenters?: string[];
  NodePool?: string;
  ParameterizedJob?: ParameterizedConfig;
  Dispatched?: boolean;
  Stop: boolean;
  Periodic?: PeriodicConfig;
}

/** A 404 for a named job, said with the job and the agent (as the alloc commands name an allocation); other errors as they are. */
function namingTheJob(id: string, client: AgentClient) {
  return (err: unknown): never => {
    if (err instanceof ApiError && err.status === 404) {
      throw new ApiError(404, `${err.message}: no job ${JSON.stringify(id)} on the agent at ${client.label} ('allocrun job status' lists them)`);
    }
    throw err;
  };
}

const jobStatus: Command = {
  name: 'job status',
  usage: 'job status [job] [--json] [--data-dir D | --address URL [--token-file F | --token T]]',
  details: `
List the jobs of a running agent, or show one with its summary and allocations.

Flags:
  --json            the API's JSON
${AGENT_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseCommand(this, argv, { ...AGENT_FLAGS, json: { type: 'boolean' } }, { min: 0, max: 1, names: 'a job ID' });
    if (!parsed) return 0;
    const client = agentClient('job status', parsed.values);
    const id = parsed.positionals[0];
    if (id === undefined) {
      const { body } = await client.get<(Omit<ApiJob, 'Periodic' | 'ParameterizedJob'> & { Periodic?: boolean; ParameterizedJob?: boolean })[]>('/v1/jobs');
      if (parsed.values.json) process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
      else if (body.length === 0) process.stdout.write('No running jobs\n');
      else {
        const rows = [['ID', 'Type', 'Priority', 'Status', 'Submit Date'], ...body.map((j) => [j.ID, `${j.Type}${j.Periodic ? '/periodic' : ''}${j.ParameterizedJob ? '/parameterized' : ''}`, String(j.Priority), j.Status, formatTime(j.SubmitTime / 1e6)])];
        process.stdout.write(`${columns(rows).join('\n')}\n`);
      }
      return 0;
    }
    const path = `/v1/job/${encodeURIComponent(id)}`;
    const [{ body: job }, { body: summary }, { body: allocs }, { body: deployment }] = await Promise.all([
      client.get<ApiJob>(path),
      client.get<{ Summary: Record<string, Record<string, number>>; Children?: Record<string, number> }>(`${path}/summary`),
      client.get<ApiAllocation[]>(`${path}/allocations`),
      client.get<ApiDeployment | null>(`${path}/deployment`),
    ]).catch(namingTheJob(id, client));
    if (parsed.values.json) {
      process.stdout.write(`${JSON.stringify({ ...job, Summary: summary, Allocations: allocs }, null, 2)}\n`);
      return 0;
    }
    const out = keyValues([
      ['ID', job.ID], ['Name', job.Name], ['Submit Date', formatTime(job.SubmitTime / 1e6)], ['Type', job.Type], ['Priority', String(job.Priority)],
      ['Datacenters', (job.Datacenters ?? []).join(',')], ['Namespace', job.Namespace], ['Node Pool', job.NodePool || 'default'],
      ['Status', job.Stop ? `${job.Status} (stopped)` : job.Status],
      // Nomad's job status says whether the job is periodic or parameterized (a dispatched child is not).
      ['Periodic', String(job.Periodic != null)], ['Parameterized', String(job.ParameterizedJob != null && job.Dispatched !== true)], ['Version', String(job.Version)],
      ...(job.Periodic ? periodicHeader(job.Periodic, job.Stop) : []),
    ]);
    if (job.ParameterizedJob && job.Dispatched !== true) {
      // Nomad shows a parameterized job by its rules and its dispatched children: it places nothing itself.
      out.push(...(await parameterizedSections(client, job.ID, job.ParameterizedJob, summary.Children ?? {})));
      process.stdout.write(`${out.join('\n')}\n`);
      return 0;
    }
    if (job.Periodic) {
      // Nomad shows a periodic job by its children: it places nothing itself.
      out.push(...(await periodicSections(client, job.ID, summary.Children ?? {})));
      process.stdout.write(`${out.join('\n')}\n`);
      return 0;
    }
    const keys = ['Queued', 'Starting', 'Running', 'Failed', 'Complete', 'Lost', 'Unknown'];
    out.push('', 'Summary', ...columns([['Task Group', ...keys], ...Object.entries(summary.Summary).map(([g, s]) => [g, ...keys.map((k) => String(s[k] ?? 0))])]));
    if (deployment) out.push(...latestDeploymentSection(deployment));
    out.push('', 'Allocations');
    if (allocs.length === 0) out.push('No allocations placed');
    else {
      const now = Date.now();
      out.push(...columns([
        ['ID', 'Task Group', 'Version', 'Desired', 'Status', 'Created', 'Modified'],
        ...[...allocs].reverse().map((a) => {
          const r = recordOfApiAlloc(a);
          return [shortId(a.ID), a.TaskGroup, String(a.JobVersion ?? 0), a.DesiredStatus, a.ClientStatus, timeAgo(r.createdAt!, now), timeAgo(r.updatedAt, now)];
        }),
      ]));
    }
    process.stdout.write(`${out.join('\n')}\n`);
    return 0;
  },
};

/** The `job` command. */
export const jobCommand = commandGroup('job', 'Submit, plan, stop and inspect jobs on a running agent (Nomad\'s job commands).', [jobRun, jobPlan, jobStop, jobStatus, jobHistory, jobRevert(monitor), jobInspect, jobValidate, jobPeriodic(monitor), jobDispatch(monitor), jobScale(monitorEvaluation), jobScalingEvents]);
