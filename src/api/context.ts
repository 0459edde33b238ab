/** What every route of the HTTP API works with, and the HTTP errors they answer with. */
import type { PeriodicLauncher } from './periodic-launcher.ts';
import type { DynamicNodeMeta } from './node-meta.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Agent } from '../runtime/create-agent.ts';
import type { AgentStore } from '../state/agent-store.ts';
import type { Clock } from '../drivers/clock.ts';
import type { ServiceRegistry } from '../services/index.ts';
import type { EventBroker } from './event-broker.ts';
import type { JobRegistry } from './job-registry.ts';
import { waitForIndex, type StateIndex } from './state-index.ts';

/** The agent's state as the routes see it. */
export interface ApiContext {
  agent: Agent;
  registry: JobRegistry;
  index: StateIndex;
  events: EventBroker;
  /** The Nomad-native service catalog the allocations' services hooks write. */
  services: ServiceRegistry;
  dataDir: string;
  /** The agent's store (for consistent snapshots). */
  store: AgentStore;
  /** How the agent is reached, for `/v1/agent/self`. */
  address: string;
  version: string;
  /** Heartbeat period of long-lived streams, ms. */
  heartbeatMs: number;
  /** The periodic launcher (periodic-launcher.ts): forced launches. */
  periodic?: PeriodicLauncher;
  /** The agent's clock: its deployment watcher's progress deadlines run on it (default: the wall clock). */
  clock?: Clock;
  /** The node's meta as given at the start (`--meta`) and as set over it since (node-meta.ts). */
  nodeMeta?: { static: Readonly<Record<string, string>>; dynamic: DynamicNodeMeta };
}

/** An error answered with its status code and its message as plain text, as Nomad answers. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** 404 with Nomad's wording for a missing object. */
export const notFound = (what: string): HttpError => new HttpError(404, `${what} not found`);

/** Nomad's default and longest blocking-query waits. */
const DEFAULT_WAIT_MS = 5 * 60_000;
const MAX_WAIT_MS = 10 * 60_000;

/**
 * Runs a blocking query (`?index=N&wait=D`): waits until `indexOf()` passes N (or the wait ends, plus
 * Nomad's jitter of up to wait/16), then sets `X-Nomad-Index` and the other headers Nomad's clients read.
 */
export async function blockingQuery(ctx: ApiContext, req: FastifyRequest, reply: FastifyReply, indexOf: () => number): Promise<void> {
  const q = req.query as { index?: number; wait?: number };
  const wait = Math.min(q.wait ?? DEFAULT_WAIT_MS, MAX_WAIT_MS);
  const abort = new AbortController();
  const onClose = () => abort.abort();
  reply.raw.once('close', onClose);
  const index = await waitForIndex(ctx.index, indexOf, q.index ?? 0, wait + Math.floor(Math.random() * (wait / 16)), abort.signal);
  reply.raw.off('close', onClose);
  reply.header('X-Nomad-Index', String(Math.max(index, 1))).header('X-Nomad-KnownLeader', 'true').header('X-Nomad-LastContact', '0');
}
