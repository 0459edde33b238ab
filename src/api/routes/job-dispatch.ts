/**
 * Nomad's dispatch endpoint: `PUT|POST /v1/job/:id/dispatch` dispatches a parameterized job (dispatch.ts).
 * The body is Nomad's JobDispatchRequest (`Payload` base64, `Meta`, `IdPrefixTemplate`); the idempotency
 * token comes as Nomad's client sends it, `?idempotency_token=`, or as `IdempotencyToken` in the body.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { HttpError, type ApiContext } from '../context.ts';
import { dispatch } from '../dispatch.ts';
import { goBody } from '../schemas.ts';

const idParams = z.object({ id: z.string().min(1) });

/** Go's []byte in JSON: standard base64 with padding. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const dispatchBody = goBody({
  JobID: z.string().optional(),
  Payload: z.string().regex(BASE64, 'must be base64 (the payload\'s bytes, standard encoding with padding)').optional(),
  Meta: z.record(z.string(), z.string({ error: 'must be a string: Meta maps keys to string values' })).optional(),
  IdPrefixTemplate: z.string().optional(),
  IdempotencyToken: z.string().optional(),
}, { emptyIsObject: true });

const dispatchQuery = z.looseObject({ idempotency_token: z.string().optional(), namespace: z.string().optional() });

/** Registers the dispatch route. */
export function jobDispatchRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.route({
    method: ['PUT', 'POST'],
    url: '/v1/job/:id/dispatch',
    schema: { params: idParams, body: dispatchBody, querystring: dispatchQuery },
    handler: async (req) => {
      const { id } = req.params as { id: string };
      const body = req.body as z.output<typeof dispatchBody>;
      const query = req.query as z.output<typeof dispatchQuery>;
      if (body.JobID && body.JobID !== id) throw new HttpError(400, 'Job ID does not match');
      // Answered once the child job, its evaluation and its allocations are committed.
      const result = await dispatch(ctx.registry, id, {
        payload: Buffer.from(body.Payload ?? '', 'base64'),
        meta: body.Meta ?? {},
        idempotencyToken: query.idempotency_token || body.IdempotencyToken || undefined,
        idPrefixTemplate: body.IdPrefixTemplate || undefined,
      });
      return { ...result, KnownLeader: true, LastContact: 0 };
    },
  });
}
