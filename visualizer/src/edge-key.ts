/** Ties a taken edge (from a transition message) to the drawn transition it belongs to. */
import type { EdgeRef } from '../../src/inspect/protocol.ts';

/** One key per transition and target set: `source|event|target,target`. */
export function edgeKey(e: EdgeRef): string {
  return `${e.source}|${e.event}|${e.targets.join(',')}`;
}
