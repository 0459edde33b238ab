/**
 * Check results kept in the agent's store (table `checks`, key `<alloc ID>/<check ID>`), so an agent that
 * restarts shows each check's last status at once and its thresholds go on from it, as Nomad restores its
 * checkstore. Writes are not API writes: they go in order, in the background, and a failed one is
 * reported, never thrown at a check.
 */
import type { AgentStore } from '../state/agent-store.ts';
import type { CheckPersistence } from './check-store.ts';
import type { CheckQueryResult } from './result.ts';

const keyOf = (allocId: string, checkId: string) => `${allocId}/${checkId}`;

/** The store's writer of check results; `flush()` waits for the writes under way (before the store closes). */
export function checkPersistence(store: AgentStore, report: (message: string) => void): CheckPersistence & { flush(): Promise<void> } {
  let writing: Promise<void> = Promise.resolve();
  const write = (what: string, fn: Parameters<AgentStore['commit']>[0]) => {
    writing = writing.then(() => store.commit(fn)).catch((err: unknown) => report(`cannot save ${what}: ${(err as Error).message ?? String(err)}`));
  };
  return {
    save(allocId, result) {
      write(`the result of check ${result.ID} of allocation ${allocId}`, (tx) => tx.put('checks', keyOf(allocId, result.ID), result));
    },
    remove(allocId, ids) {
      write(`the removal of the checks of allocation ${allocId}`, (tx) => {
        for (const id of ids) tx.remove('checks', keyOf(allocId, id));
      });
    },
    flush: () => writing,
  };
}

/** The results the store holds, by allocation; a damaged or misshapen entry is reported and left out. */
export function loadCheckResults(store: AgentStore, report: (message: string) => void): Map<string, CheckQueryResult[]> {
  const out = new Map<string, CheckQueryResult[]>();
  const { values, damaged } = store.entries('checks');
  for (const d of damaged) report(`${store.path}: checks/${d.key}: ${d.why}; left out`);
  for (const { key, value } of values) {
    const slash = key.indexOf('/');
    const r = value as Partial<CheckQueryResult> | null;
    if (slash <= 0 || !r || typeof r !== 'object' || r.ID !== key.slice(slash + 1) || typeof r.Status !== 'string' || typeof r.Check !== 'string') {
      report(`${store.path}: checks/${key}: not a check result; left out`);
      continue;
    }
    const allocId = key.slice(0, slash);
    if (!out.has(allocId)) out.set(allocId, []);
    out.get(allocId)!.push(r as CheckQueryResult);
  }
  return out;
}
