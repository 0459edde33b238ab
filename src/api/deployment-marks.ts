/**
 * The deployments marked failed through the API (`nomad deployment fail`) and those promoted (their canaries
 * accepted: `nomad deployment promote`, or `auto_promote`), each kept in the store as `{ deployment ID: index }`:
 * read by the deployment routes (their status) and by the scheduler (a failed deployment replaces nothing more; a
 * promoted one rolls on past its canaries).
 */
import { StoreDamagedError, type AgentStore } from '../state/agent-store.ts';

/** Where the marks are kept. */
export const FAILED_KEY = 'deployments.failed';

/** Where the promotions are kept. */
export const PROMOTED_KEY = 'deployments.promoted';

/** The marks under `key`, by deployment ID with the index of the mark (a damaged value is named, never dropped). */
function marks(store: AgentStore, key: string): Map<string, number> {
  const v = store.get('meta', key);
  if (v === undefined) return new Map();
  if (typeof v !== 'object' || v === null || Array.isArray(v) || Object.values(v).some((i) => typeof i !== 'number')) {
    throw new StoreDamagedError(`${store.path} is damaged: meta/${key}: expected { deployment ID: index }`, store.path);
  }
  return new Map(Object.entries(v as Record<string, number>));
}

/** The deployments marked failed. */
export const deploymentsMarkedFailed = (store: AgentStore): Map<string, number> => marks(store, FAILED_KEY);

/** The deployments promoted. */
export const deploymentsPromoted = (store: AgentStore): Map<string, number> => marks(store, PROMOTED_KEY);
