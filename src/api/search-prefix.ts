/**
 * Nomad's prefix search (`Search.PrefixSearch`, read by `nomad status <prefix>` and the web UI): the IDs of each
 * context's objects that start with the prefix, at most 20 per context, with `Truncations[context]` telling
 * whether more matched.
 */
import type { ApiContext } from './context.ts';
import { objectsOf, prefixSearchable, searchIndex, type SearchContext } from './search-contexts.ts';

/** Nomad's `truncateLimit`: the most IDs a prefix search answers per context. */
export const PREFIX_LIMIT = 20;

/** Nomad's `SearchResponse` without its query meta: every context's matches (null for none, as Go encodes a nil slice). */
export interface PrefixSearchResult {
  Matches: Record<string, string[] | null>;
  Truncations: Record<string, boolean>;
  Index: number;
}

/**
 * The matches of `prefix` in `contexts` (already expanded from `all`), in `namespace` (`*`: all). A UUID
 * context the prefix cannot be looked up in (not hex) is left out of the answer, as Nomad leaves it.
 */
export function prefixSearch(ctx: ApiContext, prefix: string, contexts: readonly SearchContext[], namespace: string): PrefixSearchResult {
  const Matches: Record<string, string[] | null> = {};
  const Truncations: Record<string, boolean> = {};
  for (const context of contexts) {
    if (!prefixSearchable(context, prefix)) continue;
    const ids: string[] = [];
    let truncated = false;
    for (const o of objectsOf(ctx, context, namespace)) {
      if (!o.id.startsWith(prefix)) continue;
      if (ids.length === PREFIX_LIMIT) {
        truncated = true;
        break;
      }
      ids.push(o.id);
    }
    Matches[context] = ids.length > 0 ? ids : null;
    Truncations[context] = truncated;
  }
  return { Matches, Truncations, Index: searchIndex(ctx, contexts) };
}
