/**
 * Where a Nomad-provider check connects in host networking (Nomad's serviceregistration.GetAddress, host
 * and auto modes): the check's port, else its service's, is a label of the allocation's ports (its host
 * address and host port) or a literal port number (on this host). A service with a custom address lends
 * it to its checks in auto mode.
 */
import type { AllocatedPort } from '../jobspec/types.ts';
import type { CheckAddress } from './checker.ts';

/** The loopback address a literal port number is checked on (Nomad leaves the host empty: the local host). */
const LOCAL_HOST = '127.0.0.1';

/** Resolves `label` (port label or number) against the allocation's ports. */
export function checkAddress(ports: readonly AllocatedPort[], label: string | undefined, customAddress?: string): CheckAddress {
  if (!label) return { error: 'nomad: the check and its service name no port: set port on the service or the check' };
  const mapping = ports.find((p) => p.label === label);
  if (customAddress) {
    if (mapping) return { host: customAddress, port: mapping.value };
    const n = literalPort(label);
    return n === undefined ? { error: `invalid port: ${JSON.stringify(label)}: not a valid port mapping or numeric port` } : { host: customAddress, port: n };
  }
  if (mapping) return { host: mapping.hostIP || LOCAL_HOST, port: mapping.value };
  const n = literalPort(label);
  if (n === undefined) return { error: `invalid port ${JSON.stringify(label)}: port label not found` };
  if (n <= 0) return { error: `invalid port: ${JSON.stringify(label)}: port must be >0` };
  return { host: LOCAL_HOST, port: n };
}

function literalPort(label: string): number | undefined {
  return /^-?\d+$/.test(label) ? Number(label) : undefined;
}
