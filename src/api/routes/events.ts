/** Nomad's event stream: `GET /v1/event/stream`, newline-delimited JSON batches with heartbeats. */
import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import { parseTopics, type EventBatch } from '../event-broker.ts';
import { HttpError, type ApiContext } from '../context.ts';
import { eventStreamQuery } from '../schemas.ts';

const TOPICS = new Set(['*', 'Job', 'Allocation', 'Evaluation', 'Deployment', 'Node', 'Variables', 'Service']);

/** Each batch's line, made once for every stream that gets the whole batch. */
const lines = new WeakMap<EventBatch, string>();

function lineOf(batch: EventBatch): string {
  let line = lines.get(batch);
  if (line === undefined) lines.set(batch, (line = `${JSON.stringify(batch)}\n`));
  return line;
}

/** Registers the event stream route. */
export function eventRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.get('/v1/event/stream', { schema: { querystring: eventStreamQuery } }, async (req, reply) => {
    const q = req.query as z.output<typeof eventStreamQuery>;
    const topics = parseTopics(q.topic);
    const unknown = topics.find((t) => !TOPICS.has(t.topic));
    if (unknown) throw new HttpError(400, `unknown topic ${JSON.stringify(unknown.topic)}: this agent publishes Job, Allocation, Evaluation, Deployment, Node, Variables and Service`);
    const out = new PassThrough();
    const sub = ctx.events.subscribe({ fromIndex: q.index, topics, namespace: q.namespace }).subscribe((batch) => out.write(lineOf(batch)));
    // Nomad sends `{}` every few seconds so clients and proxies see the stream is alive.
    const heartbeat = setInterval(() => out.write('{}\n'), ctx.heartbeatMs);
    reply.raw.once('close', () => {
      clearInterval(heartbeat);
      sub.unsubscribe();
      out.end();
    });
    void reply.type('application/json').send(out);
    // Headers go out now, not with the first line: a client waits on them before it acts (registers, signals).
    setImmediate(() => reply.raw.headersSent || reply.raw.flushHeaders());
    return reply;
  });
}
