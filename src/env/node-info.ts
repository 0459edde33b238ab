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
  /** `${node.pool}`: the node pool the node registered in; `default` when unset, as in Nomad. */
  pool?: string;
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

let fingerprint: { id: string; name: string; attributes: Readonly<Record<string, string>> } | undefined;

/** Hostname, id and attributes of this machine, fingerprinted once per process (as Nomad's client does at start). */
function localFingerprint() {
  if (!fingerprint) {
    const host = hostname();
    fingerprint = {
      id: stableNodeId(host),
      name: host,
      attributes: Object.freeze({
        'unique.hostname': host,
        'kernel.name': platform(),
        'kernel.version': release(),
        'kernel.arch': arch(),
        'os.name': osType().toLowerCase(),
        'cpu.arch': arch(),
        // os.cpus() reads /proc/cpuinfo and /proc/stat: far too slow to repeat for every allocation.
        'cpu.numcores': String(cpus().length),
        'memory.totalbytes': String(totalmem()),
        'driver.raw_exec': '1',
      }),
    };
  }
  return fingerprint;
}

let plainNode: NodeInfo | undefined;

/** The datacenter of a node given none (Nomad's agent default): what tasks see and what the agent's API shows. */
export const DEFAULT_DATACENTER = 'dc1';

/**
 * This machine as a Nomad node in `dc1`/`global`, with Nomad's common fingerprint attributes. The
 * machine is fingerprinted once per process; the result is frozen (and shared when there are no overrides).
 */
export function localNodeInfo(overrides: Partial<NodeInfo> = {}): NodeInfo {
  const plain = Object.keys(overrides).length === 0;
  if (plain && plainNode) return plainNode;
  const f = localFingerprint();
  const node: NodeInfo = Object.freeze({
    id: f.id,
    name: f.name,
    datacenter: DEFAULT_DATACENTER,
    region: 'global',
    ...overrides,
    attributes: Object.freeze({ ...f.attributes, ...overrides.attributes }),
    meta: Object.freeze({ ...overrides.meta }),
  });
  if (plain) plainNode = node;
  return node;
}

/**
 * The node as Nomad's TaskEnv.NodeAttrs holds it: `node.unique.id`, `node.unique.name`, `node.datacenter`,
 * `node.region`, `node.class`, `node.pool`, every attribute as `attr.<key>` and every meta as `meta.<key>`.
 * What a template's `{{ env "attr.unique.hostname" }}` reads.
 */
export function nodeAttrsOf(node: NodeInfo): Record<string, string> {
  return {
    'node.unique.id': node.id,
    'node.unique.name': node.name,
    'node.datacenter': node.datacenter,
    'node.region': node.region,
    'node.class': node.class ?? '',
    'node.pool': node.pool ?? 'default',
    ...Object.fromEntries(Object.entries(node.attributes).map(([k, v]) => [`attr.${k}`, v])),
    ...Object.fromEntries(Object.entries(node.meta).map(([k, v]) => [`meta.${k}`, v])),
  };
}
