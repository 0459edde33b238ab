/**
 * Nomad's `GET /v1/operator/snapshot`: a consistent copy of the agent's whole store, taken while it keeps
 * serving, sent as the body. `nomad operator snapshot save` and `allocrun operator snapshot save` read it.
 */
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context.ts';

/** Registers the operator routes. */
export function operatorRoutes(app: FastifyInstance, ctx: ApiContext): void {
  let taken = 0;
  app.get('/v1/operator/snapshot', async (_req, reply) => {
    // Beside the store (same file system, same 0700 dir), removed once sent.
    const copy = join(ctx.dataDir, `snapshot-${process.pid}-${++taken}.mdb`);
    await ctx.store.backup(copy);
    const body = createReadStream(copy);
    body.on('close', () => void rm(copy, { force: true }));
    return reply.header('X-Nomad-Index', String(ctx.index.current)).type('application/octet-stream').send(body);
  });
}
