/** The agent and status endpoints clients probe before anything else. */
import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context.ts';

/** Registers `/v1/agent/self`, `/v1/agent/health`, `/v1/status/leader`, `/v1/status/peers`, `/v1/regions`. */
export function agentRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const name = hostname();
  app.get('/v1/agent/self', async () => ({
    config: { Region: 'global', Datacenter: ctx.registry.node.datacenter, NodeName: name, DataDir: ctx.dataDir, Version: { Version: ctx.version }, Client: { Enabled: true, NodeClass: ctx.registry.node.class, NodePool: ctx.registry.node.pool, Meta: { ...ctx.registry.node.meta } }, Server: { Enabled: true } },
    member: { Name: `${name}.global`, Addr: ctx.address, Port: 0, Tags: { region: 'global', dc: ctx.registry.node.datacenter, role: 'nomad', build: ctx.version }, Status: 'alive' },
    stats: {
      nomad: { leader: 'true', known_regions: '1', server: 'true' },
      client: { known_servers: ctx.address, num_allocations: String(ctx.registry.listAllocs().length), node_id: ctx.registry.node.id },
      runtime: { arch: process.arch, os: process.platform, version: process.version },
    },
  }));
  app.get('/v1/agent/health', async () => ({ client: { ok: true, message: 'ok' }, server: { ok: true, message: 'ok' } }));
  app.get('/v1/status/leader', async (_req, reply) => reply.type('application/json').send(JSON.stringify(ctx.address)));
  app.get('/v1/status/peers', async () => [ctx.address]);
  app.get('/v1/regions', async () => ['global']);
}
