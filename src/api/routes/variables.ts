/**
 * Nomad's variables endpoints (command/agent/variable_endpoint.go): `GET /v1/vars` lists metadata (prefix,
 * namespace, paging and blocking as every list), `GET /v1/var/<path>` reads one (404 when absent), `PUT`
 * writes one (`?cas=N` to check and set), `DELETE` removes one (`?cas=N` too). A failed check answers 409
 * with the current variable. Writes are answered once committed. Nothing here logs or echoes an item.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { VariableError } from '../../variables/path-rules.ts';
import { DEFAULT_NAMESPACE, metadataOf, type Variable, type VariableMetadata } from '../../variables/variable.ts';
import { variablesOf } from '../../variables/variable-store.ts';
import { blockingQuery, HttpError, type ApiContext } from '../context.ts';
import { blockingQuery as blockingQuerySchema, goBody } from '../schemas.ts';

/** `?cas=N` as Nomad's parseCAS reads it: absent or empty is no check; anything else must be a uint64. */
const casQuery = z.looseObject({
  cas: z.union([z.string(), z.array(z.string())]).optional().transform((v, ctx) => {
    const text = Array.isArray(v) ? v[0] : v;
    if (text === undefined || text === '') return undefined;
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
      ctx.addIssue({ code: 'custom', message: `can not parse ${JSON.stringify(text)}: not an unsigned integer` });
      return z.NEVER;
    }
    return Number(text);
  }),
  namespace: z.string().optional(),
});

/**
 * A PUT's body: Nomad's `Variable`, of which Namespace and Items are read (the path is the URL's; indexes
 * and times are the agent's). Items must map strings to strings.
 */
const variableBody = goBody({
  Namespace: z.string().optional(),
  Path: z.string().optional(),
  Items: z.record(z.string(), z.string(), { error: 'must be an object of string keys to string values' }).optional(),
  Lock: z.unknown().optional(),
}, { emptyIsObject: false });

/** The variable's path from the URL: everything after `/v1/var/`, as Nomad trims it. */
function pathOf(req: FastifyRequest): string {
  const path = (req.params as { '*': string })['*'] ?? '';
  if (path === '') throw new HttpError(400, 'missing variable path');
  return path;
}

/** A request's namespace: the query's, else `default`. */
const namespaceOf = (req: FastifyRequest): string => (req.query as { namespace?: string }).namespace || DEFAULT_NAMESPACE;

/**
 * Nomad's answer for a request the store refuses: 400 in its words. Anything else (a damaged entry, a failed
 * commit) is the error handler's 500, which names it and logs it for the operator.
 */
function refusal(err: unknown): unknown {
  if (err instanceof VariableError) return new HttpError(400, err.message);
  return err;
}

/** A 409 with the variable as it is, `X-Nomad-Index` its ModifyIndex, as Nomad answers a failed check. */
function conflict(reply: FastifyReply, current: Variable): Variable {
  void reply.code(409).header('X-Nomad-Index', String(current.ModifyIndex));
  return current;
}

/**
 * Publishes the store's committed writes as Nomad's `Variables` topic: the variable's metadata only, never its
 * items (as Nomad's). Told inside the write's hold on the broker, so in index order. Returns the unsubscribe.
 */
export function publishVariableEvents(ctx: Pick<ApiContext, 'store' | 'events'>): () => void {
  const sub = variablesOf(ctx.store).written$.subscribe(({ type, variable: v, index }) => {
    ctx.events.publish({ Index: index, Events: [{ Topic: 'Variables', Type: type, Key: v.Path, Namespace: v.Namespace, FilterKeys: [], Index: index, Payload: { Variable: metadataOf(v) } }] });
  });
  return () => sub.unsubscribe();
}

/** Registers `/v1/vars` and `/v1/var/*`. */
export function variableRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const vars = variablesOf(ctx.store);

  app.get('/v1/vars', { schema: { querystring: blockingQuerySchema } }, async (req, reply) => {
    await blockingQuery(ctx, req, reply, () => vars.tableIndex);
    const q = req.query as z.output<typeof blockingQuerySchema>;
    // `*` lists every namespace; paging (per_page, next_token) is the list options' (query-options.ts).
    try {
      return vars.list(q.prefix ?? '', q.namespace || DEFAULT_NAMESPACE);
    } catch (err) {
      throw refusal(err);
    }
  });

  app.get('/v1/var/*', { schema: { querystring: blockingQuerySchema } }, async (req, reply) => {
    const path = pathOf(req);
    const namespace = namespaceOf(req);
    const current = () => {
      try {
        return vars.get(path, namespace);
      } catch (err) {
        throw refusal(err);
      }
    };
    await blockingQuery(ctx, req, reply, () => current()?.ModifyIndex ?? vars.tableIndex);
    const variable = current();
    if (!variable) throw new HttpError(404, 'variable not found');
    return variable;
  });

  app.route({
    method: ['PUT', 'POST'],
    url: '/v1/var/*',
    schema: { querystring: casQuery, body: variableBody },
    handler: async (req, reply) => {
      const path = pathOf(req);
      const body = req.body as z.output<typeof variableBody>;
      if (body.Items === undefined || Object.keys(body.Items).length === 0) throw new HttpError(400, 'variable missing required Items object');
      if (body.Lock !== undefined) throw new HttpError(400, 'variable locks are not supported by this agent: leave Lock out');
      const { cas } = req.query as z.output<typeof casQuery>;
      // The body's namespace wins over the query's, as in Nomad's Variables.Apply.
      const namespace = body.Namespace || namespaceOf(req);
      let result;
      try {
        result = await vars.put(namespace, path, body.Items, { cas });
      } catch (err) {
        throw refusal(err);
      }
      if (!result.ok) return conflict(reply, result.conflict);
      void reply.header('X-Nomad-Index', String(result.index));
      return result.variable;
    },
  });

  app.delete('/v1/var/*', { schema: { querystring: casQuery } }, async (req, reply) => {
    const path = pathOf(req);
    const { cas } = req.query as z.output<typeof casQuery>;
    let result;
    try {
      result = await vars.delete(namespaceOf(req), path, { cas });
    } catch (err) {
      throw refusal(err);
    }
    if (!result.ok) return conflict(reply, result.conflict);
    return reply.code(204).header('X-Nomad-Index', String(Math.max(result.index, 1))).send();
  });
}
