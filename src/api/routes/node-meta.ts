/**
 * Nomad's dynamic node metadata endpoint, `/v1/client/metadata` (node-meta.ts): GET reads the node's meta
 * (merged, dynamic, static), POST applies keys set or unset. An apply is answered once it is durable; then the
 * node's JSON, placement and new allocations' `${meta.*}` see it, the node's index moves (a `NodeRegistration`
 * event, as a Nomad client's re-registration gives), and blocked evaluations are tried again.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { HttpError, type ApiContext } from '../context.ts';
import { nodeContextOf, nodeJson, nodeRegistration } from '../node.ts';
import { appliedDynamicMeta, mergedNodeMeta, nodeMetaApplyProblem, putDynamicNodeMeta, type DynamicNodeMeta } from '../node-meta.ts';
import { commitInOrder } from '../ordered-commit.ts';

const readQuery = z.looseObject({ node_id: z.string().optional() });

/** Registers the routes. */
export function nodeMetaRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const state = () => (ctx.nodeMeta ??= { static: ctx.registry.node.meta, dynamic: {} });
  const ours = (nodeId: unknown) => {
    if (nodeId !== undefined && nodeId !== '' && nodeId !== ctx.registry.node.id) throw new HttpError(404, 'node not found');
  };
  const answer = () => ({ Meta: { ...ctx.registry.node.meta }, Dynamic: { ...state().dynamic }, Static: { ...state().static } });
  // One apply at a time: each merges into what the one before left.
  let queue: Promise<unknown> = Promise.resolve();

  app.get('/v1/client/metadata', { schema: { querystring: readQuery } }, async (req) => {
    ours((req.query as z.output<typeof readQuery>).node_id);
    return answer();
  });

  app.post('/v1/client/metadata', async (req) => {
    const body = req.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'expected a JSON object with NodeID and Meta');
    const { NodeID: nodeId, Meta: changes } = body as { NodeID?: unknown; Meta?: unknown };
    ours(nodeId);
    const problem = nodeMetaApplyProblem(changes);
    if (problem) throw new HttpError(400, problem);
    const run = queue.then(() => apply(ctx, state(), changes as Record<string, string | null>));
    queue = run.catch(() => undefined);
    await run;
    return answer();
  });
}

/** Commits the dynamic meta with `changes` merged in, then makes it the node's. */
async function apply(ctx: ApiContext, meta: { static: Readonly<Record<string, string>>; dynamic: DynamicNodeMeta }, changes: Record<string, string | null>): Promise<void> {
  const dynamic = appliedDynamicMeta(meta.dynamic, changes);
  const index = ctx.index.order.take();
  await commitInOrder(ctx, index, (tx) => putDynamicNodeMeta(tx, dynamic), () => {
    meta.dynamic = dynamic;
    const merged = mergedNodeMeta(meta.static, dynamic);
    ctx.registry.node = { ...ctx.registry.node, meta: merged };
    ctx.agent.setNodeMeta(merged);
    nodeRegistration(ctx).modifyIndex = index;
    const node = nodeJson(nodeContextOf(ctx), index);
    ctx.events.publish({ Index: index, Events: [{ Topic: 'Node', Type: 'NodeRegistration', Key: ctx.registry.node.id, Namespace: '', FilterKeys: [], Index: index, Payload: { Node: node } }] });
    ctx.index.changed(index);
  });
  ctx.registry.nodeChanged();
}
