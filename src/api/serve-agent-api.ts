/**
 * Where the agent's API listens and who gets in: always a unix socket in the data dir (mode 0600, so only
 * the agent's user reaches it); a TCP address only when asked, and then every request must carry the
 * agent's token (`X-Nomad-Token`), kept in a 0600 file in the data dir unless one is given. A TCP address
 * other than loopback needs a token given explicitly: a generated one would sit unseen in a file while the
 * port is open to the network.
 */
import { chmodSync, existsSync, unlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { AllocSpec, AllocState } from '../jobspec/types.ts';
import type { Agent } from '../runtime/create-agent.ts';
import type { AllocRunner } from '../runtime/create-alloc-runner.ts';
import type { AgentStore } from '../state/agent-store.ts';
import { ServiceRegistry } from '../services/index.ts';
import { checkDataDirPrivate, checkSocketPrivate, resolveAgentToken, type ResolvedToken, type TokenSource } from './agent-token.ts';
import { EventBroker } from './event-broker.ts';
import { JobRegistry } from './job-registry.ts';
import { PeriodicLauncher } from './periodic-launcher.ts';
import { realClock, type Clock } from '../drivers/clock.ts';
import { FollowupTimer } from './reschedule-timer.ts';
import { NODE_DATACENTER } from './alloc-metric.ts';
import { NODE_POOL_DEFAULT } from './node-pools.ts';
import { loadNodeId, registerNode } from './node.ts';
import { closeDeploymentWatch, watchDeployments } from './routes/deployments.ts';
import { publishServiceEvents } from './routes/services.ts';
import { publishVariableEvents } from './routes/variables.ts';
import { buildApi } from './server.ts';
import type { AgentUi } from './routes/ui.ts';
import { commitVisibleInOrder } from './ordered-commit.ts';
import { StateIndex } from './state-index.ts';
import { variablesOf } from '../variables/variable-store.ts';
import { wireGarbageCollection, type ServerGcOptions } from './gc.ts';
import { loadDynamicNodeMeta, mergedNodeMeta } from './node-meta.ts';

/** The socket's file name in the data dir: what `allocrun --data-dir D` clients connect to. */
export const SOCKET_NAME = 'agent.sock';
export { TOKEN_NAME } from './agent-token.ts';

/** The socket path of the agent serving `dataDir`. */
export const socketPathOf = (dataDir: string): string => join(dataDir, SOCKET_NAME);

/** A listen address that cannot be served (bad syntax, or open to the network without a token). */
export class ListenError extends Error {
  readonly code = 'ErrListen';
  constructor(message: string) {
    super(message);
    this.name = 'ListenError';
  }
}

/** What to serve. */
export interface ServeOptions {
  agent: Agent;
  dataDir: string;
  version: string;
  /** `host:port` for TCP, e.g. `127.0.0.1:4646`; absent: the socket only. */
  http?: string;
  /**
   * The token TCP clients must send: a value or a file (agent-token.ts checks both); default: the data
   * dir's token file, created when missing. A string is a value given in code; a ResolvedToken was
   * resolved (and checked) by the caller already.
   */
  token?: string | TokenSource | ResolvedToken;
  /** The agent's store: jobs, evaluations and allocations live here (the runners' records too). */
  store: AgentStore;
  /** Allocations the agent restored or found finished on disk, to show and serve. */
  found?: { spec: AllocSpec; state: AllocState; createdAt?: number; updatedAt: number; runner?: AllocRunner }[];
  heartbeatMs?: number;
  bodyLimit?: number;
  /** The service catalog the agent's allocations register in (AgentOptions.services); default: a new, empty one. */
  services?: ServiceRegistry;
  /** The visualizer to serve at /ui (routes/ui.ts); without it /ui answers 503. */
  ui?: AgentUi;
  /** The server garbage collector's thresholds, interval and clock (gc.ts; Nomad's defaults). */
  gc?: ServerGcOptions;
  /** The clock periodic jobs launch by and progress deadlines run on (the agent's; tests give a simulated one). Default: the wall clock. */
  clock?: Clock;
  /** The node's datacenter (`allocrun agent --dc`; default `dc1`): jobs are placed only when they name it. */
  datacenter?: string;
  /** The node's class (`allocrun agent --node-class`; default none): its NodeClass, `${node.class}` in constraints. */
  nodeClass?: string;
  /** The node's pool (`allocrun agent --node-pool`; default `default`): jobs in another pool are not placed on it. */
  nodePool?: string;
  /** The node's meta (`allocrun agent --meta K=V`): its Meta, `${meta.K}` in constraints. */
  nodeMeta?: Readonly<Record<string, string>>;
}

/** A serving API. */
export interface ServedApi {
  registry: JobRegistry;
  /** The periodic launcher: launches children of periodic jobs on the clock. */
  periodic: PeriodicLauncher;
  /** The agent's one index; every write that commits takes its index from, and settles it in, `index.order`. */
  index: StateIndex;
  socketPath: string;
  /** `http://host:port` when TCP was asked for. */
  url?: string;
  token?: string;
  tokenFile?: string;
  /** Where the token is, in words for the operator (`new token written to D/agent-token`). */
  tokenFrom?: string;
  close(): Promise<void>;
}

/** Parses `host:port` (`[::1]:4646` for IPv6); port 0 picks a free one. */
export function parseListenAddress(addr: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(addr);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new ListenError(`--http ${JSON.stringify(addr)}: expected HOST:PORT, e.g. 127.0.0.1:4646`);
  return { host: (m[1] ?? m[2])!, port };
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}

/** Resolves true when something answers on the socket: another agent serves this data dir. */
function socketInUse(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

/**
 * Listens on the socket, then makes it 0600. Not by changing the umask around listen: that is process-wide,
 * and restored allocations create their directories meanwhile. Connecting needs write permission, which
 * the usual umask (022) already denies others in the moment before the chmod.
 */
async function listenPrivately(app: FastifyInstance, path: string): Promise<void> {
  await app.listen({ path });
  chmodSync(path, 0o600);
  checkSocketPrivate(path);
}

/**
 * What serveAgentApi refuses before it listens: a socket path too long, another agent answering on the data
 * dir's socket, a bad `--http`, a non-loopback one without a given token. The agent's command calls it
 * before it restores anything, so a refused agent has touched no allocation.
 */
export async function refuseBeforeServing(opts: Pick<ServeOptions, 'dataDir' | 'http' | 'token'>): Promise<void> {
  const socketPath = socketPathOf(opts.dataDir);
  checkDataDirPrivate(opts.dataDir);
  if (Buffer.byteLength(socketPath) > 100) throw new ListenError(`the data dir path is too long for a unix socket (${socketPath}); use a shorter --data-dir`);
  if (existsSync(socketPath) && (await socketInUse(socketPath))) throw new ListenError(`another agent is already serving ${opts.dataDir} (its socket ${socketPath} answers)`);
  refuseHttpAddress(opts);
}

/** An --http address the agent would refuse (not one to listen on, or beyond loopback without an operator's token); needs no data dir. */
export function refuseHttpAddress(opts: Pick<ServeOptions, 'http' | 'token'>): void {
  if (opts.http === undefined) return;
  const tcp = parseListenAddress(opts.http);
  const resolvedBefore = typeof opts.token === 'object' && 'token' in opts.token ? opts.token : undefined;
  if (!isLoopback(tcp.host) && (opts.token === undefined || resolvedBefore?.given === false)) {
    throw new ListenError(`--http ${opts.http} is not a loopback address: give a token (--token-file FILE or ALLOCRUN_TOKEN_FILE) so the network cannot reach the agent without it`);
  }
}

/** Starts the API for `agent` on its data dir's socket and, when asked, on a TCP address. */
export async function serveAgentApi(opts: ServeOptions): Promise<ServedApi> {
  const socketPath = socketPathOf(opts.dataDir);
  await refuseBeforeServing(opts);
  if (existsSync(socketPath)) unlinkSync(socketPath); // left behind by an agent that did not exit cleanly
  let tcp: { host: string; port: number } | undefined;
  let token: string | undefined;
  let tokenFile: string | undefined;
  let tokenFrom: string | undefined;
  if (opts.http !== undefined) {
    tcp = parseListenAddress(opts.http);
    const resolvedBefore = typeof opts.token === 'object' && 'token' in opts.token ? opts.token : undefined;
    const source = typeof opts.token === 'string' ? { value: opts.token, from: 'the token option' } : (opts.token as TokenSource | undefined);
    ({ token, file: tokenFile, description: tokenFrom } = resolvedBefore ?? resolveAgentToken(source, opts.dataDir));
  }

  // Indexes go on from where the last agent left them, so a client's blocking query still means something:
  // they are reserved in the store in blocks before they are handed out, so even after a crash the next
  // agent starts past every index this one served.
  const { store } = opts;
  const index = new StateIndex(Math.max(store.savedIndex, 1), (upTo) => store.reserveIndex(upTo));
  // Runner saves record the index too: task state changes move it without a registry write.
  store.indexOf = () => index.current;
  const events = new EventBroker();
  // Variable writes take the same index, so their ModifyIndex orders with every other change, and commit as every
  // write read straight from the store does (ordered-commit.ts): in its order, their events too.
  variablesOf(store).index = { next: () => index.order.take(), changed: (i) => index.changed(i), commit: (i, write, told) => commitVisibleInOrder({ store, events, index }, i, write, told) };
  // Service registrations take the agent's indexes from now on (restored allocations registered before).
  const services = opts.services ?? new ServiceRegistry();
  services.useIndex(index);
  const registry = new JobRegistry(opts.agent, index, events, store);
  // The node's meta: --meta, with what `node meta apply` set over it before (node-meta.ts); the agent's tasks see the same.
  const nodeMeta = { static: Object.freeze({ ...opts.nodeMeta }), dynamic: loadDynamicNodeMeta(store) };
  const meta = mergedNodeMeta(nodeMeta.static, nodeMeta.dynamic);
  if (Object.keys(nodeMeta.dynamic).length > 0) opts.agent.setNodeMeta(meta);
  registry.node = { id: await loadNodeId(store), name: hostname(), datacenter: opts.datacenter ?? NODE_DATACENTER, class: opts.nodeClass ?? '', pool: opts.nodePool ?? NODE_POOL_DEFAULT, meta };
  if (opts.gc?.jobTrackedVersions !== undefined) registry.trackedVersions = opts.gc.jobTrackedVersions;
  const clock = opts.clock ?? realClock;
  const periodic = new PeriodicLauncher(registry, store, clock);
  // Refused (a damaged record) once the registry follows the adopted runners: their saves go on after the caller
  // closes the store, and the registry must hear none of them then.
  const refused = (err: unknown): unknown => {
    periodic.close();
    registry.close();
    registry.detach();
    return err;
  };
  try {
    registry.load();
    registry.adopt(opts.found ?? []);
    registry.periodic = periodic;
    // Progress deadlines are set on the clock the deployment watcher judges them on.
    registry.progressNow = () => clock.now();
    // Follow-up evaluations reschedule failed allocations on the same clock (armed as `heal` ends).
    registry.followups = new FollowupTimer(clock, (id) => registry.followupDue(id), (line) => registry.log(line));
    // Before the API answers anyone: what a crash left half done is made good first.
    await registry.heal();
    // Then launches missed while no agent ran are made up (one per job, as Nomad's leader does), and the schedule set.
    await periodic.start();
  } catch (err) {
    throw refused(err);
  }
  const address = tcp ? `${tcp.host}:${tcp.port}` : socketPath;
  const ctx = { agent: opts.agent, registry, index, events, services, dataDir: opts.dataDir, store, address, version: opts.version, heartbeatMs: opts.heartbeatMs ?? 10_000, ui: opts.ui, periodic, nodeMeta, clock };
  // Its event waits for the TCP listener: it carries the bound address (`host:0` asks for any free port).
  const announceNode = registerNode(ctx);
  try {
    // It reads the deployments' stored marks (a damaged one refuses the start).
    watchDeployments(ctx);
  } catch (err) {
    announceNode.abandon();
    closeDeploymentWatch(ctx);
    throw refused(err);
  }
  const stopServiceEvents = publishServiceEvents(ctx);
  const stopVariableEvents = publishVariableEvents(ctx);
  const stopGc = wireGarbageCollection(ctx, opts.gc);

  const apps: FastifyInstance[] = [];
  const closeAll = async () => {
    // The catalog outlives the API (it is the agent's): its changes must stop reaching this API's broker.
    stopServiceEvents();
    stopVariableEvents();
    announceNode.abandon();
    periodic.close();
    closeDeploymentWatch(ctx);
    registry.close();
    registry.detach();
    await stopGc();
    await Promise.all(apps.map((a) => a.close()));
  };
  try {
    const local = buildApi(ctx, { bodyLimit: opts.bodyLimit });
    apps.push(local);
    await listenPrivately(local, socketPath);
    let url: string | undefined;
    if (tcp) {
      const remote = buildApi(ctx, { token, bodyLimit: opts.bodyLimit });
      apps.push(remote);
      await remote.listen({ host: tcp.host, port: tcp.port }).catch((err: NodeJS.ErrnoException) => {
        // The flag the user gave, and what to do: Node's own words name neither.
        const why = err.code === 'EADDRINUSE' ? 'another program is listening there; pick another port, or stop it' : err.code === 'EACCES' ? 'binding it needs privileges this agent does not have; pick a port above 1023' : err.code === 'EADDRNOTAVAIL' ? 'this machine has no such address' : err.message;
        throw new ListenError(`--http ${opts.http}: cannot listen: ${why}`);
      });
      const bound = remote.server.address();
      const port = typeof bound === 'object' && bound ? bound.port : tcp.port;
      url = `http://${tcp.host.includes(':') ? `[${tcp.host}]` : tcp.host}:${port}`;
      ctx.address = `${tcp.host}:${port}`;
    }
    announceNode();
    return { registry, periodic, index, socketPath, url, token, tokenFile, tokenFrom, close: closeAll };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
