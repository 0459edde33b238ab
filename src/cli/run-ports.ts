/**
 * Host ports for `allocrun run`: a group's `network` block gets its ports here, as the agent's scheduler gives
 * them when it places an allocation (`src/api/port-allocator.ts`, the same allocator), so `${NOMAD_PORT_http}`
 * means a port in the foreground run too. The run's allocations are the only holders; a static port another
 * program holds on the host refuses the run before anything starts, naming the group and the port.
 */
import type { AllocSpec } from '../jobspec/types.ts';
import { PortAllocator, probeHost } from '../api/port-allocator.ts';
import { CliError } from './errors.ts';

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
