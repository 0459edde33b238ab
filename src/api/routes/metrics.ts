/** Nomad's `GET /v1/metrics`: the JSON summary, or Prometheus text with `?format=prometheus`. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { HttpError, type ApiContext } from '../context.ts';
import { AgentMetrics } from '../metrics.ts';

const metricsQuery = z.looseObject({ format: z.string().optional() });

/** One set of metrics per served agent, shared by its socket and TCP listeners. */
const byContext = new WeakMap<ApiContext, AgentMetrics>();

/** Registers the metrics route and times every request of `app`. */
export function metricsRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const metrics = () => {
    let m = byContext.get(ctx);
    if (!m) {
      byContext.set(ctx, (m = new AgentMetrics(ctx.registry)));
      m.timeCommits(ctx.store);
    }
    return m;
  };
  // Made now, not on first use: commits and requests from the start are timed.
  metrics();
  app.addHook('onResponse', async (req, reply) => metrics().observeRequest(req, reply));

  app.get('/v1/metrics', { schema: { querystring: metricsQuery } }, async (req, reply) => {
    const { format } = req.query as z.output<typeof metricsQuery>;
    if (format === 'prometheus') return reply.type(metrics().registry.contentType).send(await metrics().registry.metrics());
    if (format !== undefined && format !== '') throw new HttpError(400, `format ${JSON.stringify(format)}: this agent answers JSON (no format) or "prometheus"`);
    return metrics().summary();
  });
}
