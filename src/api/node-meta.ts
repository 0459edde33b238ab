/**
 * Nomad's dynamic node metadata (`nomad node meta apply|read`, `/v1/client/metadata`): keys set or unset on a
 * running node over the API, kept in the agent's store across restarts, laid over the static meta the agent was
 * started with (`--meta`). A key applied as null unsets it, the static value included, as Nomad's client does;
 * the null is kept, so it stays unset after a restart. The merged meta is what placement, `${meta.*}` and the
 * node's JSON read; allocations placed from then on see it, running ones keep the node they started with.
 */
import { StoreDamagedError, type AgentStore } from '../state/agent-store.ts';

/** Dynamic meta as Nomad keeps it: a value, or null for a key unset. */
export type DynamicNodeMeta = Readonly<Record<string, string | null>>;

/** Where the store keeps the dynamic meta (its `meta` table). */
const KEY = 'nodeMetaDynamic';

/** The dynamic meta the store holds (none: `{}`); a value of another shape is damage, named, never overwritten. */
export function loadDynamicNodeMeta(store: AgentStore): DynamicNodeMeta {
  const stored = store.get('meta', KEY);
  if (stored === undefined) return {};
  const valid = typeof stored === 'object' && stored !== null && !Array.isArray(stored) && Object.values(stored).every((v) => v === null || typeof v === 'string');
  if (!valid) {
    throw new StoreDamagedError(`${store.path} is damaged: meta/${KEY}: expected the node's dynamic meta (keys to strings or null), got ${JSON.stringify(stored)}. Nothing was changed; restore a snapshot ('allocrun operator snapshot restore') or move the store aside`, store.path);
  }
  return Object.freeze({ ...(stored as Record<string, string | null>) });
}

/** The node's meta: the static, then each dynamic key over it (null removes the key). */
export function mergedNodeMeta(staticMeta: Readonly<Record<string, string>>, dynamic: DynamicNodeMeta): Readonly<Record<string, string>> {
  const merged: Record<string, string> = { ...staticMeta };
  for (const [k, v] of Object.entries(dynamic)) {
    if (v === null) delete merged[k];
    else merged[k] = v;
  }
  return Object.freeze(merged);
}

// HCL's identifiers (hclsyntax.ValidIdentifier): a letter or underscore, then letters, digits, underscores, dashes.
const HCL_IDENTIFIER = /^[\p{L}_][\p{L}\p{N}_-]*$/u;

/**
 * Why an apply's `Meta` is refused, in Nomad's words (structs.NodeMetaApplyRequest.Validate), or undefined. Keys
 * are dotted HCL identifiers, since constraints read them as `${meta.a.b}`; values are strings or null.
 */
export function nodeMetaApplyProblem(meta: unknown): string | undefined {
  if (meta === undefined || meta === null || (typeof meta === 'object' && !Array.isArray(meta) && Object.keys(meta).length === 0)) return 'missing required Meta object';
  if (typeof meta !== 'object' || Array.isArray(meta)) return `Meta: expected an object of keys to strings or null, got ${JSON.stringify(meta)}`;
  for (const [k, v] of Object.entries(meta)) {
    if (k === '') return 'metadata keys must not be empty';
    if (!k.split('.').every((part) => HCL_IDENTIFIER.test(part))) return `${JSON.stringify(k)} is invalid; metadata keys must be valid dotted hcl identifiers`;
    if (v !== null && typeof v !== 'string') return `Meta[${JSON.stringify(k)}]: expected a string, or null to unset the key, got ${JSON.stringify(v)}`;
  }
  return undefined;
}

/** The dynamic meta after an apply of `changes` (Nomad merges them into what it had). */
export function appliedDynamicMeta(dynamic: DynamicNodeMeta, changes: Readonly<Record<string, string | null>>): DynamicNodeMeta {
  return Object.freeze({ ...dynamic, ...changes });
}

/** Writes the dynamic meta in a commit's transaction. */
export function putDynamicNodeMeta(tx: { put(table: 'meta', key: string, value: unknown): void }, dynamic: DynamicNodeMeta): void {
  tx.put('meta', KEY, dynamic);
}
