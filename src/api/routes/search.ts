/**
 * Nomad's search endpoints (command/agent/search_endpoint.go): `POST|PUT /v1/search` `{ Prefix, Context }` answers
 * the IDs starting with the prefix per context (`nomad status <prefix>` resolves a prefix with it), and
 * `POST|PUT /v1/search/fuzzy` `{ Text, Context }` the names containing the text (the web UI's search box). The
 * namespace is the query's (`*`: all; else the body's `Namespace`, else `default`). Neither blocks: Nomad runs
 * them with empty query options, so only the index headers of a query are set.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { HttpError, type ApiContext } from '../context.ts';
import { goBody } from '../schemas.ts';
import { expandContext, unknownContextMessage, type SearchContext } from '../search-contexts.ts';
import { fuzzySearch, fuzzyTextRefusal } from '../search-fuzzy.ts';
import { prefixSearch } from '../search-prefix.ts';

/** A required string field, with what to send when it is missing. */
const required = (what: string) => z.string({ error: (issue) => (issue.input === undefined ? `missing: ${what}` : 'must be a string') });

const contextField = required(`the context to search: ${unknownContextMessage('').replace(/; got ""$/, '')}`);

/** Nomad's `SearchRequest`: Prefix, Context, and the namespace of its query options. */
const searchBody = goBody({
  Prefix: required('the prefix IDs are matched against ("" matches every ID)'),
  Context: contextField,
  Namespace: z.string().optional(),
}, { emptyIsObject: false });

/** Nomad's `FuzzySearchRequest`: Text, Context, and the namespace of its query options. */
const fuzzyBody = goBody({
  Text: required('the text names are matched against'),
  Context: contextField,
  Namespace: z.string().optional(),
}, { emptyIsObject: false });

const searchQuery = z.looseObject({ namespace: z.string().optional() });

/** The contexts a request names, or Nomad's refusal of the one it does not know. */
function contextsOf(context: string): SearchContext[] {
  const contexts = expandContext(context);
  if (!contexts) throw new HttpError(400, `Context: ${unknownContextMessage(context)}`);
  return contexts;
}

/** The request's namespace: the query's, else the body's, else `default`. */
function namespaceOf(req: FastifyRequest): string {
  return (req.query as z.output<typeof searchQuery>).namespace || (req.body as { Namespace?: string }).Namespace || 'default';
}

/** Nomad's query meta, in the headers and (as Nomad's response embeds it) the body. */
function withMeta<T extends { Index: number }>(reply: FastifyReply, result: T): T & { KnownLeader: true; LastContact: 0; NextToken: '' } {
  void reply.header('X-Nomad-Index', String(result.Index)).header('X-Nomad-KnownLeader', 'true').header('X-Nomad-LastContact', '0');
  return { ...result, KnownLeader: true, LastContact: 0, NextToken: '' };
}

/** Registers the routes. */
export function searchRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.route({
    method: ['PUT', 'POST'],
    url: '/v1/search',
    schema: { body: searchBody, querystring: searchQuery },
    handler: async (req, reply) => {
      const body = req.body as z.output<typeof searchBody>;
      return withMeta(reply, prefixSearch(ctx, body.Prefix, contextsOf(body.Context), namespaceOf(req)));
    },
  });

  app.route({
    method: ['PUT', 'POST'],
    url: '/v1/search/fuzzy',
    schema: { body: fuzzyBody, querystring: searchQuery },
    handler: async (req, reply) => {
      const body = req.body as z.output<typeof fuzzyBody>;
      const contexts = contextsOf(body.Context);
      const refusal = fuzzyTextRefusal(body.Text);
      if (refusal) throw new HttpError(400, `Text: ${refusal}`);
      return withMeta(reply, fuzzySearch(ctx, body.Text, contexts, namespaceOf(req)));
    },
  });
}
