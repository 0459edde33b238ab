/**
 * Host ports for `allocrun run`: a group's `network` block gets its ports here, as the agent's scheduler gives
 * them when it places an allocation (`src/api/port-allocator.ts`, the same allocator), so `${NOMAD_PORT_http}`
 * means a port in the foreground run too. The run's allocations are the only holders; a static port another
 * program holds on the host refuses the run before anything starts, naming the group and the port.
 */
import type { AllocSpec } from '../jobspec/types.ts';
import { PortAllocator, probeHost } from '../api/port-allocator.ts';
import { CliError } from './errors.ts';
import { jobToApiJson } from '../api/job-json.ts';
import { infeasibility } from '../jobspec/constraints.ts';
import { localNodeInfo } from '../env/node-info.ts';
import type { LoadedJob } from '../jobspec/index.ts';

/**
 * `allocs` unchanged when this node may run their groups; else refused before anything starts, as the agent's
 * scheduler places nothing there: the job's node pool or datacenters leave this node out, or a constraint does not hold.
 */
export function refuseInfeasible(allocs: AllocSpec[], job: LoadedJob['job'], jobFile: string): AllocSpec[] {
  const info = localNodeInfo();
  const node = { id: info.id, name: info.name, datacenter: info.datacenter, class: info.class ?? '', pool: info.pool ?? 'default', attributes: info.attributes, meta: info.meta };
  const api = jobToApiJson(job.name, job.body as Parameters<typeof jobToApiJson>[1]);
  for (const group of new Set(allocs.map((a) => a.group))) {
    const why = infeasibility(api, group, node);
    if (why) throw new CliError(`cannot run ${jobFile}: group "${group}": ${'pool' in why ? `the job's node pool "${why.pool}" does not include this node (in node pool "${node.pool}")` : 'datacenter' in why ? `the job's datacenters do not include this node's datacenter "${why.datacenter}"` : `this node does not meet the constraint "${why.constraint}"`}`, 'ErrInfeasible');
  }
  return allocs;
}

/** `allocs` with the ports each one's network block asks for; specs without a network block unchanged. */
export async function placeRunPorts(allocs: AllocSpec[], jobFile: string, allocator = new PortAllocator()): Promise<AllocSpec[]> {
  const statics = allocs.flatMap((a) => (a.network?.ports ?? []).flatMap((p) => (p.static === undefined ? [] : [p.static])));
  const hostBusy = statics.length === 0 ? new Map<number, string>() : await probeHost(statics);
  const held = new Map<number, string>();
  return allocs.map((spec) => {
    if (!spec.network || spec.ports) return spec;
    const placed = allocator.assign(spec.network, held, hostBusy);
    if (!placed.ok) throw new CliError(`cannot run ${jobFile}: allocation ${spec.id} (group "${spec.group}"): ${placed.reason}`, 'ErrPortsUnavailable');
    for (const p of placed.ports) held.set(p.value, spec.id);
    return { ...spec, ports: placed.ports };
  });
}
