/** Waiting on a running agent with Nomad's blocking queries: re-read a list whenever its index moves. */
import type { ApiAllocation } from './api-records.ts';
import type { AgentClient } from './api-client.ts';

/** Terminal client statuses: the allocation will not run again. */
export const isTerminalStatus = (status: string): boolean => status === 'complete' || status === 'failed' || status === 'lost';

/**
 * Reads the allocations at `path` until `done(allocs)` is true, calling `onChange` with each new list;
 * every read after the first blocks until the list changes (no polling).
 */
export async function watchAllocs(
  client: AgentClient,
  path: string,
  done: (allocs: ApiAllocation[]) => boolean,
  onChange: (allocs: ApiAllocation[]) => void = () => {},
): Promise<ApiAllocation[]> {
  let index = 0;
  for (;;) {
    const { body, index: next } = await client.get<ApiAllocation[]>(path, { index, wait: '60s' });
    if (next !== index || index === 0) onChange(body);
    if (done(body)) return body;
    index = next;
  }
}
