/**
 * The cluster as Nomad's clients ask about it, on one node: the agent is the one server and the one member
 * (`/v1/agent/members`, `/v1/agent/servers`), and the namespaces are `default` and every namespace a job
 * was registered in (`/v1/namespaces`, `/v1/namespace/:name`).
 */
import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { blockingQuery, HttpError, type ApiContext } from '../context.ts';
import type { Json } from '../job-json.ts';
import type { JobRegistry } from '../job-registry.ts';
import { blockingQuery as blockingQuerySchema } from '../schemas.ts';

const nameParams = z.object({ name: z.string().min(1) });

/** `host:port` split as Serf reports a member; a unix socket is an address without a port. */
export function addrPort(address: string): { Addr: string; Port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:/]+)):(\d+)$/.exec(address);
  return m ? { Addr: (m[1] ?? m[2])!, Port: Number(m[3]) } : { Addr: address, Port: 0 };
}

/** Every namespace in use, `default` first, each created at the index of its first job (the search endpoints read them too). */
export function namespacesOf(registry: JobRegistry): Json[] {
  const created = new Map<string, number>([['default', 1]]);
  for (const j of registry.listJobs()) if (!created.has(j.namespace) || created.get(j.namespace)! > j.createIndex) created.set(j.namespace, j.createIndex);
  return [...created].sort(([a], [b]) => (a === 'default' ? -1 : b === 'default' ? 1 : a.localeCompare(b))).map(([ns, index]) => ({
    Name: ns, Description: ns === 'default' ? 'Default shared namespace' : '', Quota: '', Capabilities: null, NodePoolConfiguration: null,
    Meta: null, CreateIndex: index, ModifyIndex: index,
  }));
}

/** Registers the member, server and namespace routes. */
export function clusterRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const name = hostname();

  app.get('/v1/agent/members', async () => ({
    ServerName: name,
    ServerRegion: 'global',
    ServerDC: ctx.registry.node.datacenter,
    Members: [{
      Name: `${name}.global`, ...addrPort(ctx.address), Status: 'alive',
      Tags: { region: 'global', dc: ctx.registry.node.datacenter, role: 'nomad', build: ctx.version, id: ctx.registry.node.id, bootstrap: '1', expect: '1', vsn: '1', raft_vsn: '3' },
      ProtocolMin: 1, ProtocolMax: 5, ProtocolCur: 2, DelegateMin: 2, DelegateMax: 5, DelegateCur: 4,
    }],
  }));

  app.get('/v1/agent/servers', async () => [ctx.address]);

  app.get('/v1/namespaces', { schema: { querystring: blockingQuerySchema } }, async (req, reply) => {
    await blockingQuery(ctx, req, reply, () => ctx.registry.jobsIndex);
    const prefix = (req.query as { prefix?: string }).prefix ?? '';
    return namespacesOf(ctx.registry).filter((n) => String(n['Name']).startsWith(prefix));
  });

  app.get('/v1/namespace/:name', { schema: { params: nameParams, querystring: blockingQuerySchema } }, async (req, reply) => {
    const ns = namespacesOf(ctx.registry).find((n) => n['Name'] === (req.params as { name: string }).name);
    if (!ns) throw new HttpError(404, 'namespace not found');
    await blockingQuery(ctx, req, reply, () => ctx.registry.jobsIndex);
    return ns;
  });
}
