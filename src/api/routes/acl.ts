/**
 * Nomad's ACL token endpoints: create (the secret is answered once, then kept only as a hash), list, read,
 * delete (revoke), and self. Who may call which is src/api/acl.ts's ROUTE_CLASSES: all but self need the
 * management identity (the agent's token, or the unix socket).
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { createTokenBody, identityOf, isTokenRecord, listTokens, managementJson, newClientToken, tokenJson, tokenStubJson } from '../acl.ts';
import { HttpError, notFound, type ApiContext } from '../context.ts';
import { commitVisibleInOrder } from '../ordered-commit.ts';

const accessorParams = z.object({ accessor: z.string().min(1) });
const listQuery = z.looseObject({ prefix: z.string().optional() });

/** Registers `/v1/acl/token(s)`. */
export function aclRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { store } = ctx;

  for (const method of ['PUT', 'POST'] as const) {
    app.route({
      method,
      url: '/v1/acl/token',
      schema: { body: createTokenBody },
      handler: async (req, reply) => {
        const body = req.body as z.output<typeof createTokenBody>;
        const index = ctx.index.order.take();
        const { record, secret } = newClientToken(body, index, new Date());
        // Answered only once durable: a token the client holds is one the agent will know after a crash. In index
        // order: visible only once every write of a lower index is.
        await commitVisibleInOrder(ctx, index, (tx) => tx.put('acl', record.AccessorID, record));
        void reply.header('X-Nomad-Index', String(index));
        return tokenJson(record, secret);
      },
    });
  }

  app.get('/v1/acl/tokens', { schema: { querystring: listQuery } }, async (req, reply) => {
    const { tokens, damaged } = listTokens(store);
    // A damaged entry is named, never left out silently; it can still be deleted by its key.
    if (damaged.length > 0) {
      throw new HttpError(500, `the agent's store has damaged ACL token entries: ${damaged.map((d) => `acl/${d.key}: ${d.why}`).join('; ')}; delete them with DELETE /v1/acl/token/<key>`);
    }
    const prefix = (req.query as { prefix?: string }).prefix ?? '';
    void reply.header('X-Nomad-Index', String(Math.max(1, ...tokens.map((t) => t.ModifyIndex))));
    return tokens.filter((t) => t.AccessorID.startsWith(prefix)).map(tokenStubJson);
  });

  // Registered before /:accessor reads it; Fastify prefers the static path whatever the order.
  app.get('/v1/acl/token/self', async (req) => {
    const who = identityOf(req);
    return who.kind === 'client' ? tokenJson(who.token) : managementJson(who);
  });

  app.get('/v1/acl/token/:accessor', { schema: { params: accessorParams } }, async (req, reply) => {
    const { accessor } = req.params as z.output<typeof accessorParams>;
    const t = store.get('acl', accessor);
    if (t === undefined) throw notFound('ACL token');
    if (!isTokenRecord(t)) throw new HttpError(500, `the agent's store has a damaged ACL token entry acl/${accessor}; delete it with DELETE /v1/acl/token/${accessor}`);
    void reply.header('X-Nomad-Index', String(t.ModifyIndex));
    // The secret is not kept, so it cannot be shown: it was answered once, when the token was made.
    return tokenJson(t);
  });

  app.delete('/v1/acl/token/:accessor', { schema: { params: accessorParams } }, async (req, reply) => {
    const { accessor } = req.params as z.output<typeof accessorParams>;
    // By the raw entry, so a damaged one can be removed too.
    if (store.raw('acl', accessor) === undefined) throw notFound('ACL token');
    const index = ctx.index.order.take();
    await commitVisibleInOrder(ctx, index, (tx) => tx.remove('acl', accessor));
    return reply.header('X-Nomad-Index', String(index)).send();
  });
}
