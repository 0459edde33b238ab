/**
 * Nomad's query options on every list: `filter` (a go-bexpr expression, bexpr.ts), `reverse`, `per_page` and
 * `next_token` (the next page's first key, sent back in `X-Nomad-NextToken`), and `namespace` (`*` for all),
 * applied to what a list route answers, in Nomad's order: namespace, filter, order, page. A `region` other
 * than this agent's is refused on every request, as Nomad refuses a region it has no path to.
 */
import type { FastifyInstance } from 'fastify';
import { evaluateFilter, FilterError, parseFilter } from './bexpr.ts';
import { HttpError } from './context.ts';
import { parseGoBool } from './schemas.ts';

const first = (v: unknown): string | undefined => (Array.isArray(v) ? (v[0] as string | undefined) : typeof v === 'string' ? v : undefined);

/**
 * What pages are keyed by: the item's ID (its Name where it has none, as namespaces; `<namespace>.<path>`
 * for variables, as Nomad's paginator keys them).
 */
function keyOf(item: unknown): string {
  const o = item as Record<string, unknown> | null;
  if (typeof o?.['ID'] === 'string') return o['ID'];
  if (typeof o?.['Name'] === 'string') return o['Name'];
  if (typeof o?.['Path'] === 'string' && typeof o['Namespace'] === 'string') return `${o['Namespace']}.${o['Path']}`;
  return typeof item === 'string' ? item : JSON.stringify(item);
}

/** Applies the list query options to every list `app` answers. */
export function listQueryOptions(app: FastifyInstance): void {
  app.addHook('onRequest', async (req) => {
    const region = first((req.query as Record<string, unknown>)['region']);
    if (region !== undefined && region !== '' && region !== 'global') throw new HttpError(400, `No path to region ${JSON.stringify(region)}: this agent is the one server of region "global"`);
  });

  app.addHook('preSerialization', async (req, reply, payload) => {
    if (req.method !== 'GET' || !Array.isArray(payload)) return payload;
    const { items, nextToken } = applyListOptions(payload, req.query as Record<string, unknown>);
    if (nextToken !== undefined) void reply.header('X-Nomad-NextToken', nextToken);
    return items;
  });
}

/**
 * The list query options applied to one list: what the response holds and, when a page was cut, the next
 * page's token. A pure function of the items and the query, so a list served from a cache answers the same.
 */
export function applyListOptions(payload: readonly unknown[], q: Record<string, unknown>): { items: unknown[]; nextToken?: string } {
  const namespace = first(q['namespace']);
  const filter = first(q['filter']);
  const reverse = first(q['reverse']);
  const perPageText = first(q['per_page']);
  const nextToken = first(q['next_token']);
  let items: unknown[] = payload as unknown[];
  if (namespace !== undefined && namespace !== '' && namespace !== '*') {
    items = items.filter((i) => typeof (i as Record<string, unknown>)?.['Namespace'] !== 'string' || (i as Record<string, unknown>)['Namespace'] === namespace);
  }
  if (filter !== undefined && filter !== '') {
    let expr;
    try {
      expr = parseFilter(filter);
    } catch (err) {
      if (!(err instanceof FilterError)) throw err;
      throw new HttpError(400, `failed to read filter expression: ${err.message}`);
    }
    items = items.filter((i) => evaluateFilter(expr, i));
  }
  if (reverse !== undefined && reverse !== '') {
    const r = parseGoBool(reverse);
    if (r === undefined) throw new HttpError(400, `reverse: ${JSON.stringify(reverse)} is not a boolean`);
    if (r) items = [...items].reverse();
  }
  if (nextToken !== undefined && nextToken !== '') {
    const at = items.findIndex((i) => keyOf(i) === nextToken);
    items = at < 0 ? [] : items.slice(at);
  }
  let next: string | undefined;
  if (perPageText !== undefined && perPageText !== '') {
    const perPage = Number(perPageText);
    if (!Number.isInteger(perPage) || perPage <= 0) throw new HttpError(400, `per_page: expected a positive integer, got ${JSON.stringify(perPageText)}`);
    if (items.length > perPage) next = keyOf(items[perPage]);
    items = items.slice(0, perPage);
  }
  return next === undefined ? { items } : { items, nextToken: next };
}
