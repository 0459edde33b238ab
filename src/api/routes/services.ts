/**
 * Nomad's service registration endpoints (Nomad-native service discovery): the catalog the services hooks
 * write, read with blocking queries on its table index (`index`, `wait`, `X-Nomad-Index`) and the list
 * options every list takes. Registrations live in the agent's memory (src/services), not its store: they
 * are rebuilt by re-registration when a restarted agent restores its allocations.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { blockingQuery, notFound, type ApiContext } from '../context.ts';
import { blockingQuery as blockingQuerySchema } from '../schemas.ts';
import { allocOf } from './allocations.ts';

const nameParams = z.object({ name: z.string().min(1) });
const deleteParams = z.object({ name: z.string().min(1), id: z.string().min(1) });
const idParams = z.object({ id: z.string().min(1) });

/**
 * The `namespace` query parameter as the routes' query schema leaves it: a string or absent (given twice, it
 * was refused with 400). The catalog reads an empty one as `default`, as it reads an absent one.
 */
const namespaceOf = (query: unknown): string | undefined => (query as { namespace?: string }).namespace;

/**
 * Publishes the catalog's changes on the event stream as Nomad's `Service` topic: `ServiceRegistration` and
 * `ServiceDeregistration`, keyed by registration ID and filterable by job and service name. Returns the
 * unsubscribe.
 */
export function publishServiceEvents(ctx: Pick<ApiContext, 'services' | 'events'>): () => void {
  const sub = ctx.services.changes$.subscribe(({ index, changes }) => {
    ctx.events.publish({
      Index: index,
      Events: changes.map(({ type, registration: r }) => ({ Topic: 'Service', Type: type, Key: r.ID, Namespace: r.Namespace, FilterKeys: [r.JobID, r.ServiceName], Index: index, Payload: { Service: r } })),
    });
  });
  return () => sub.unsubscribe();
}

/** Registers the service routes. */
export function serviceRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const { services } = ctx;

  // As Nomad's service endpoints: the request's namespace, `default` when it names none, `*` for all.
  app.get('/v1/services', { schema: { querystring: blockingQuerySchema } }, async (req, reply) => {
    await blockingQuery(ctx, req, reply, () => services.index);
    return services.names(namespaceOf(req.query));
  });

  app.get('/v1/service/:name', { schema: { params: nameParams, querystring: blockingQuerySchema } }, async (req, reply) => {
    const { name } = req.params as z.output<typeof nameParams>;
    await blockingQuery(ctx, req, reply, () => services.index);
    return services.list(name, namespaceOf(req.query));
  });

  app.delete('/v1/service/:name/:id', { schema: { params: deleteParams } }, async (req, reply) => {
    const { name, id } = req.params as z.output<typeof deleteParams>;
    const found = services.get(id, '*');
    if (!found || found.ServiceName !== name) throw notFound('service registration');
    services.remove(id);
    void reply.header('X-Nomad-Index', String(Math.max(services.index, 1)));
    return null;
  });

  app.get('/v1/job/:id/services', { schema: { params: idParams, querystring: blockingQuerySchema } }, async (req, reply) => {
    const { id } = req.params as z.output<typeof idParams>;
    // Nomad's Job.GetServiceRegistrations: an unknown job is a 404 at index 0 (it sets no index; 1 here, as every
    // answer here is at least 1), after a blocking wait that its registration ends.
    await blockingQuery(ctx, req, reply, () => (ctx.registry.getJob(id) ? services.index : 0));
    const job = ctx.registry.getJob(id);
    if (!job) throw notFound('job');
    return services.byJob(id, job.namespace);
  });

  app.get('/v1/allocation/:id/services', { schema: { params: idParams, querystring: blockingQuerySchema } }, async (req, reply) => {
    const alloc = allocOf(ctx, req.params);
    await blockingQuery(ctx, req, reply, () => services.index);
    return services.byAlloc(alloc.id);
  });
}
