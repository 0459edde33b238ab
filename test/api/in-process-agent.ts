/**
 * An agent and its API in this process, on a fresh data dir with a real store, for the API tests that drive
 * it over its socket (mock tasks unless a test says otherwise), and the small helpers they share.
 */
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { globalAgent } from 'node:http';
import { join } from 'node:path';
import { expect } from 'vitest';
import { serveAgentApi, type ServedApi, type ServeOptions } from '../../src/api/serve-agent-api.ts';
import { createAgent, type Agent, type AgentOptions } from '../../src/runtime/create-agent.ts';
import { AgentStore, type StoreFaults } from '../../src/state/agent-store.ts';
import { ServiceRegistry } from '../../src/services/index.ts';
import { variablesOf } from '../../src/variables/variable-store.ts';
import { loadNodeId } from '../../src/api/node.ts';
import { localNodeInfo } from '../../src/env/node-info.ts';
import { call, waitForAllocs, type Alloc } from './agent-process.ts';

const cleanups: (() => Promise<void>)[] = [];

/** Stops every agent and removes every dir made since the last call; for afterEach. */
export async function cleanUp(): Promise<void> {
  for (const c of cleanups.splice(0).reverse()) await c();
}

/** A new temp dir, removed by cleanUp. */
export function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'allocrun-parity-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A served agent. */
export interface Served {
  dataDir: string;
  store: AgentStore;
  agent: Agent;
  api: ServedApi;
  /** The agent's service catalog (in memory: a new agent on the same dir starts with an empty one). */
  services: ServiceRegistry;
  socket: { socketPath: string };
  stop(): Promise<void>;
}

/** A served agent with room for every job whatever the host has: for suites whose rules are not about capacity (blocked-evals' are). */
export async function serveWithRoom(): Promise<Served> {
  const s = await serve();
  s.api.registry.capacity = { cpu: 0, cores: 64, memoryMB: 1_000_000 };
  return s;
}

/**
 * Opens the store in `dataDir` (after `seed`; with `faults`, the store's test seam), starts an agent that
 * restores what the store holds, and serves its API on the dir's socket (with `api`, the serve options given).
 */
export async function serve(dataDir = freshDir(), seed?: (store: AgentStore) => Promise<void>, opts: { faults?: StoreFaults; agent?: Partial<AgentOptions>; api?: Pick<ServeOptions, 'heartbeatMs' | 'http' | 'token' | 'datacenter' | 'gc' | 'clock' | 'nodeClass' | 'nodePool' | 'nodeMeta'> } = {}): Promise<Served> {
  const store = AgentStore.open(dataDir, { faults: opts.faults });
  await seed?.(store);
  const services = new ServiceRegistry();
  // As the agent command does: tasks and service registrations name the node the API shows.
  const node = localNodeInfo({
    id: await loadNodeId(store),
    ...(opts.api?.datacenter !== undefined && { datacenter: opts.api.datacenter }),
    ...(opts.api?.nodeClass !== undefined && { class: opts.api.nodeClass }),
    ...(opts.api?.nodePool !== undefined && { pool: opts.api.nodePool }),
    ...(opts.api?.nodeMeta !== undefined && { meta: opts.api.nodeMeta }),
  });
  const agent = createAgent({ dataDir, store: store.runners(), services, node, variables: variablesOf(store), ...opts.agent });
  await agent.start();
  let api: ServedApi;
  try {
    const found = (await store.runners().list()).map((r) => ({ ...r, runner: agent.get(r.spec.id) }));
    api = await serveAgentApi({ agent, dataDir, store, version: 'test', found, services, ...opts.api });
  } catch (err) {
    await store.close();
    throw err;
  }
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await api.close();
    // Kept-alive client sockets to this server would be reused (same socket path) for a server started next on
    // this data dir, and fail there with EPIPE: drop them with the server.
    globalAgent.destroy();
    // Runners that have finished (their actor stopped) hear nothing: XState would warn of a KILL sent to them.
    for (const r of agent.list()) if (r.actor.getSnapshot().status === 'active') r.send({ type: 'KILL' });
    await Promise.all(agent.list().map((r) => r.done.catch(() => undefined)));
    await store.close();
  };
  cleanups.push(stop);
  return { dataDir, store, agent, api, services, socket: { socketPath: api.socketPath }, stop };
}

/** A one-group service job of mock tasks (name → mock config). */
export const mockJob = (id: string, tasks: Record<string, Record<string, unknown>> = { t: { run_for: '1h' } }, extra: Record<string, unknown> = {}) => ({
  Job: {
    ID: id, Type: 'service', ...extra,
    TaskGroups: [{ Name: 'g', Count: 1, Tasks: Object.entries(tasks).map(([Name, Config]) => ({ Name, Driver: 'mock', Config })) }],
  },
});

/**
 * A route rule suite's time limit: a minute (an agent per test on a loaded machine), or under mutation the
 * limit vitest.mutate.config.ts sets, so a mutant that hangs a request fails in seconds.
 */
export const SUITE_TIMEOUT = Number(process.env['MUTATE_TEST_TIMEOUT_MS'] ?? 60_000);

/** Every allocation listed runs. */
export const running = (list: Alloc[]) => list.length > 0 && list.every((a) => a.ClientStatus === 'running');

/** Registers `body` and waits until its allocation runs. */
export async function runJob(s: Served, body: ReturnType<typeof mockJob>): Promise<Alloc> {
  const res = await call(s.socket, 'PUT', '/v1/jobs', body);
  expect(res.status, res.text).toBe(200);
  const [alloc] = await waitForAllocs(s.socket, `/v1/job/${body.Job.ID}/allocations`, running);
  return alloc!;
}

/** GETs `path` from the served agent, expecting 200 (the failure names the path and the answer); its JSON. */
export async function getOk<T = Record<string, any>>(s: Pick<Served, 'socket'>, path: string): Promise<T> {
  const res = await call(s.socket, 'GET', path);
  expect(res.status, `${path}: ${res.text}`).toBe(200);
  return res.json<T>();
}

/** Polls `read` until `ok`, failing with `what` and the last value after `timeoutMs`. */
export async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

