/**
 * `GET /v1/client/allocation/:id/checks`: the latest result of each Nomad service check of an allocation,
 * by check ID, in Nomad's CheckQueryResult shape (`nomad alloc checks -json`). An allocation that no
 * longer runs here has none: its checks were stopped and forgotten when it was killed, as Nomad purges them.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AllocationResults } from '../../checks/result.ts';
import { allocName } from '../alloc-json.ts';
import type { ApiContext } from '../context.ts';
import { allocOf } from './allocations.ts';

const idParams = z.object({ id: z.string().min(1) });

/** Registers the checks route. */
export function allocChecksRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.get('/v1/client/allocation/:id/checks', { schema: { params: idParams } }, async (req) => {
    const alloc = allocOf(ctx, req.params);
    const results: AllocationResults = alloc.runner?.checks() ?? {};
    // The runner knows its group, not its index: the API names the allocation as Nomad does.
    const group = allocName(alloc);
    return Object.fromEntries(Object.entries(results).map(([id, r]) => [id, { ...r, Group: group }]));
  });
}
