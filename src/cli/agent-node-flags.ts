/**
 * `allocrun agent --meta KEY=VALUE --node-class NAME --node-pool NAME`: Nomad's `-meta`, `-node-class` and
 * `-node-pool` (the client's `meta` block, `node_class` and `node_pool`). The node carries them in its API (`Meta`,
 * `NodeClass`, `NodePool`); constraints and tasks read them as `${meta.KEY}`, `${node.class}` and `${node.pool}`.
 * Keys are checked as Nomad's agent checks `Client.Meta` at start, the pool as it checks `Client.NodePool`.
 */
import { nodePoolNameProblem } from '../api/node-pools.ts';
import { UsageError } from './errors.ts';

/** parseArgs options for the flags. */
export const NODE_FLAG_OPTIONS = {
  meta: { type: 'string', multiple: true },
  'node-class': { type: 'string' },
  'node-pool': { type: 'string' },
} as const;

/** The flags' lines of the agent's help. */
export const NODE_FLAGS_HELP = `  --meta KEY=VALUE    the node's meta, what constraints and tasks read as \${meta.KEY} (repeatable;
                      the last value of a key wins)
  --node-class NAME   the node's class, what constraints and tasks read as \${node.class}
  --node-pool NAME    the node pool the node registers in (default: default; not all): jobs are
                      placed on it only when their node_pool is NAME or "all"`;

/**
 * Nomad's helper.IsValidInterpVariable: dot-separated parts, none empty, so `${meta.KEY}` can name the key
 * (`a..b`, `.a` and `a.` cannot be interpolated).
 */
const META_KEY = /^[^.]+(\.[^.]+)*$/;

/** The node's class, pool and meta as the flags set them. */
export interface NodeSettings {
  nodeClass?: string;
  nodePool?: string;
  nodeMeta: Record<string, string>;
}

/** The node's class, pool and meta from the flags; a bad one is a UsageError naming the flag and its value. */
export function nodeSettingsFromFlags(values: { meta?: string[]; 'node-class'?: string; 'node-pool'?: string }): NodeSettings {
  const meta = new Map<string, string>();
  for (const pair of values.meta ?? []) {
    const eq = pair.indexOf('=');
    if (eq < 0) throw new UsageError(`agent: --meta ${JSON.stringify(pair)}: expected KEY=VALUE, e.g. --meta rack=r1`, 'agent');
    const key = pair.slice(0, eq);
    if (!META_KEY.test(key)) {
      throw new UsageError(`agent: --meta ${JSON.stringify(pair)}: invalid Client.Meta key ${JSON.stringify(key)}: a key is one or more names joined by single dots, none empty, so \${meta.KEY} can name it`, 'agent');
    }
    meta.set(key, pair.slice(eq + 1));
  }
  const nodeClass = values['node-class'];
  if (nodeClass === '') throw new UsageError('agent: --node-class must name a class (e.g. --node-class gpu); leave it out for none', 'agent');
  if (nodeClass !== undefined && nodeClass.includes('\0')) throw new UsageError(`agent: --node-class ${JSON.stringify(nodeClass)}: contains a null character`, 'agent');
  const nodePool = values['node-pool'];
  // Refused at start, as Nomad's agent does, rather than by a registration that would fail later.
  const poolWhy = nodePool === undefined ? undefined : nodePoolNameProblem(nodePool);
  if (poolWhy) throw new UsageError(`agent: --node-pool ${JSON.stringify(nodePool)}: Invalid node pool: ${poolWhy}`, 'agent');
  // fromEntries: a key such as `__proto__` stays an own key of plain data, as the API serializes it.
  return { ...(nodeClass !== undefined && { nodeClass }), ...(nodePool !== undefined && { nodePool }), nodeMeta: Object.fromEntries(meta) };
}
