/**
 * Following a deployment to its end, as `nomad job run` does after its evaluation: a line each time its groups'
 * placed, healthy or unhealthy counts move (a rollout replaces max_parallel at a time, so this is where it is
 * seen going on), then Nomad's deployment block. Successful is exit 0; failed or cancelled is 1, as in Nomad.
 * Also the blocks `job status` prints.
 */
import type { AgentClient } from './api-client.ts';
import { columns, formatTime, keyValues, shortId } from './format.ts';

/** A deployment as the API answers it (the fields printed here). */
export interface ApiDeployment {
  ID: string;
  JobID: string;
  JobVersion: number;
  Status: string;
  StatusDescription: string;
  TaskGroups: Record<string, { DesiredTotal: number; PlacedAllocs: number; HealthyAllocs: number; UnhealthyAllocs: number; AutoRevert?: boolean; DesiredCanaries?: number; Promoted?: boolean; ProgressDeadline?: number; RequireProgressBy?: string }>;
}

/** One line of what the deployment's groups have: `app 1/3 placed, 0 healthy, 0 unhealthy`. */
export function progressLine(d: ApiDeployment): string {
  return Object.keys(d.TaskGroups).sort().map((name) => {
    const g = d.TaskGroups[name]!;
    return `${name} ${g.PlacedAllocs}/${g.DesiredTotal} placed, ${g.HealthyAllocs} healthy, ${g.UnhealthyAllocs} unhealthy`;
  }).join('; ');
}

/** A group's RequireProgressBy as Nomad prints it: its local time, or N/A while it is not set (Go's zero time). */
function progressDeadlineCell(by: string | undefined): string {
  const at = by === undefined ? NaN : Date.parse(by);
  return Number.isFinite(at) && at > 0 ? formatTime(at) : 'N/A';
}

/**
 * Nomad's `Deployed` table (`formatDeploymentGroups`): a row per group, with Auto Revert, Promoted and Canaries when any
 * group has them, and Progress Deadline (the group's RequireProgressBy) when any group's progress_deadline is not 0.
 */
function deployedTable(d: ApiDeployment): string[] {
  const names = Object.keys(d.TaskGroups).sort();
  if (names.length === 0) return [];
  const groups = names.map((n) => d.TaskGroups[n]!);
  const autoRevert = groups.some((g) => g.AutoRevert);
  const canaries = groups.some((g) => (g.DesiredCanaries ?? 0) > 0);
  const deadline = groups.some((g) => (g.ProgressDeadline ?? 0) !== 0);
  const header = ['Task Group', ...(autoRevert ? ['Auto Revert'] : []), ...(canaries ? ['Promoted'] : []), 'Desired', ...(canaries ? ['Canaries'] : []), 'Placed', 'Healthy', 'Unhealthy', ...(deadline ? ['Progress Deadline'] : [])];
  const rows = names.map((n, i) => {
    const g = groups[i]!;
    return [
      n, ...(autoRevert ? [String(g.AutoRevert ?? false)] : []), ...(canaries ? [(g.DesiredCanaries ?? 0) > 0 ? String(g.Promoted ?? false) : 'N/A'] : []),
      String(g.DesiredTotal), ...(canaries ? [String(g.DesiredCanaries ?? 0)] : []), String(g.PlacedAllocs), String(g.HealthyAllocs), String(g.UnhealthyAllocs),
      ...(deadline ? [progressDeadlineCell(g.RequireProgressBy)] : []),
    ];
  });
  return ['', 'Deployed', ...columns([header, ...rows])];
}

/** Nomad's deployment block (`formatDeployment`): its header, then a row per group. */
export function deploymentBlock(d: ApiDeployment): string[] {
  return [...keyValues([['ID', shortId(d.ID)], ['Job ID', d.JobID], ['Job Version', String(d.JobVersion)], ['Status', d.Status], ['Description', d.StatusDescription]]), ...deployedTable(d)];
}

/** `nomad job status`'s *Latest Deployment* section (`formatLatestDeployment`): the job's newest deployment. */
export function latestDeploymentSection(d: ApiDeployment): string[] {
  return ['', 'Latest Deployment', ...keyValues([['ID', shortId(d.ID)], ['Status', d.Status], ['Description', d.StatusDescription]]), ...deployedTable(d)];
}

/** Follows deployment `id` with blocking reads until it is no longer running; returns the exit status. */
export async function monitorDeployment(client: AgentClient, id: string, out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<number> {
  out(`==> Monitoring deployment "${shortId(id)}"`);
  let index = 0;
  let said = '';
  for (;;) {
    const { body, index: next } = await client.get<ApiDeployment>(`/v1/deployment/${encodeURIComponent(id)}`, { index, wait: '60s' });
    // What it waits for, when it is more than its allocations' health (a promotion of its canaries).
    const line = `${progressLine(body)}${body.StatusDescription !== 'Deployment is running' && body.Status === 'running' ? ` (${body.StatusDescription})` : ''}`;
    if (line !== said && body.Status === 'running') out(`    Deployment "${shortId(id)}": ${line}`);
    said = line;
    if (body.Status !== 'running') {
      out(`==> Deployment "${shortId(id)}" ${body.Status}`);
      for (const l of deploymentBlock(body)) out(l === '' ? '' : `    ${l}`);
      return body.Status === 'successful' ? 0 : 1;
    }
    index = next;
  }
}
