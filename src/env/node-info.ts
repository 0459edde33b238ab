/** The client node as tasks see it: `${node.*}`, `${attr.*}` and `${meta.*}` resolve against this. */
import { createHash } from 'node:crypto';
import { arch, cpus, hostname, platform, release, totalmem, type as osType } from 'node:os';

/** Nomad's node identity, attributes and meta, trimmed to what interpolation needs. */
export interface NodeInfo {
  /** `${node.unique.id}`: a UUID, stable for the node. */
  id: string;
  /** `${node.unique.name}`. */
  name: string;
  /** `${node.datacenter}` and NOMAD_DC. */
  datacenter: string;
  /** `${node.region}` and NOMAD_REGION. */
  region: string;
  /** `${node.class}`; empty when unset, as in Nomad. */
  class?: string;
  /** `${attr.<key>}`, e.g. `kernel.name`, `cpu.arch`. */
  attributes: Record<string, string>;
  /** `${meta.<key>}`: operator-set node meta. */
  meta: Record<string, string>;
}

/** A UUID derived from the hostname, so the local node keeps its id across agent restarts. */
function stableNodeId(host: string): string {
  const h = createHash('sha256').update(`allocrun-node:${host}`).digest('hex');
  // Shaped like a v4 UUID (version and variant nibbles set) so tools that parse node ids accept it.
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** This machine as a Nomad node in `dc1`/`global`, with Nomad's common fingerprint attributes. */
export function localNodeInfo(overrides: Partial<NodeInfo> = {}): NodeInfo {
  const host = hostname();
  const attributes: Record<string, string> = {
    'unique.hostname': host,
    'kernel.name': platform(),
    'kernel.version': release(),
    'kernel.arch': arch(),
    'os.name': osType().toLowerCase(),
    'cpu.arch': arch(),
    'cpu.numcores': String(cpus().length),
    'memory.totalbytes': String(totalmem()),
    'driver.raw_exec': '1',
  };
  return {
    id: stableNodeId(host),
    name: host,
    datacenter: 'dc1',
    region: 'global',
    ...overrides,
    attributes: { ...attributes, ...overrides.attributes },
    meta: { ...overrides.meta },
  };
}
