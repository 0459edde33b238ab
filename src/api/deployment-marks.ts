/**
 * The deployments marked failed through the API (`nomad deployment fail`), kept in the store as
 * `{ deployment ID: index }`: read by the deployment routes (their status) and by the scheduler (a failed
 * deployment replaces nothing more).
 */
import { StoreDamagedError, type AgentStore } from '../state/agent-store.ts';

/** Where the marks are kept. */
export const FAILED_KEY = 'deployments.failed';

/** The deployments marked failed, by ID with the index of the mark (a damaged value is named, never dropped). */
export function deploymentsMarkedFailed(store: AgentStore): Map<string, number> {
  const v = store.get('meta', FAILED_KEY);
  if (v === undefined) return new Map();
  if (typeof v !== 'object' || v === null || Array.isArray(v) || Object.values(v).some((i) => typeof i !== 'number')) {
    throw new StoreDamagedError(`${store.path} is damaged: meta/${FAILED_KEY}: expected { deployment ID: index }`, store.path);
  }
  return new Map(Object.entries(v as Record<string, number>));
}
