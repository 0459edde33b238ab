/**
 * The agent as Nomad's one client node: its identity (a UUID kept in the store, so it survives restarts and
 * belongs to the data dir, as Nomad's client keeps its node ID in its state dir), and the `Node`,
 * `NodeListStub` and `HostStats` JSON read from the host: kernel, CPU, memory, the data dir's disk, drivers.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, statfsSync } from 'node:fs';
import { arch, cpus, freemem, hostname, platform, release, totalmem, type as osType, uptime } from 'node:os';
import { StoreDamagedError, type AgentStore } from '../state/agent-store.ts';
import { BUILTIN_DRIVER_CHECKS } from '../drivers/config-checks.ts';
import type { ApiContext } from './context.ts';
import type { Json } from './job-json.ts';

/**
 * Who the node is: what allocations carry as NodeID and NodeName, the datacenter jobs must name to run on it, and
 * the class, pool and meta the operator gave it (`--node-class`, `--node-pool`, `--meta`), what constraints read as
 * `${node.class}`, `${node.pool}` and `${meta.KEY}`.
 */
export interface NodeIdentity {
  id: string;
  name: string;
  datacenter: string;
  /** Empty when unset, as Nomad's NodeClass. */
  class: string;
  /** The node pool it registered in (`default` unless given; never `all`): node-pools.ts. */
  pool: string;
  meta: Readonly<Record<string, string>>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The node's ID from the store's meta table, written (once, in its own commit) when the store has none.
 * A value that is not a UUID is damage, named: the agent never silently takes a new identity.
 */
export async function loadNodeId(store: AgentStore): Promise<string> {
  const stored = store.get('meta', 'nodeId');
  if (stored !== undefined) {
    if (typeof stored === 'string' && UUID.test(stored)) return stored;
    throw new StoreDamagedError(`${store.path} is damaged: meta/nodeId: expected the node's UUID, got ${JSON.stringify(stored)}. Nothing was changed; restore a snapshot ('allocrun operator snapshot restore') or move the store aside`, store.path);
  }
  const id = randomUUID();
  await store.commit((tx) => tx.put('meta', 'nodeId', id));
  return id;
}

/** What the node JSON needs beyond the host. */
export interface NodeContext {
  node: NodeIdentity;
  dataDir: string;
  address: string;
  version: string;
  /** The agent's start, ms since the epoch: the node's registration. */
  startedAt: number;
  /** The index at which the node registered (the agent's start). */
  createIndex: number;
  /** The drivers the agent runs tasks with. */
  drivers: readonly string[];
}

/** The CPU once per process: `os.cpus()` reads /proc, and the model and speed do not change. */
let cpuInfo: { count: number; model: string; mhz: number } | undefined;
function cpu(): { count: number; model: string; mhz: number } {
  if (!cpuInfo) {
    const all = cpus();
    cpuInfo = { count: all.length, model: all[0]?.model ?? '', mhz: Math.round(all[0]?.speed ?? 0) };
  }
  return cpuInfo;
}

/** The data dir's file system: size and free bytes, and where it is mounted. */
function disk(dataDir: string): { size: number; free: number; available: number; mountpoint: string; device: string; inodesUsedPercent: number } {
  const s = statfsSync(dataDir);
  let mountpoint = '/';
  let device = '';
  try {
    // The longest mount point that contains the data dir (Nomad's disk fingerprint names its volume).
    for (const line of readFileSync('/proc/self/mounts', 'utf8').split('\n')) {
      const [dev, at] = line.split(' ');
      if (!dev || !at) continue;
      const point = at.replace(/\\040/g, ' ');
      if ((dataDir === point || dataDir.startsWith(point.endsWith('/') ? point : `${point}/`)) && point.length >= mountpoint.length) {
        mountpoint = point;
        device = dev;
      }
    }
  } catch {
    // No /proc (not Linux): the sizes are still right.
  }
  const inodesUsed = s.files > 0 ? ((s.files - s.ffree) / s.files) * 100 : 0;
  return { size: s.blocks * s.bsize, free: s.bfree * s.bsize, available: s.bavail * s.bsize, mountpoint, device, inodesUsedPercent: inodesUsed };
}

/** `MemAvailable` from /proc/meminfo, in bytes; free memory where there is none. */
function memAvailable(): number {
  try {
    const m = /^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch {
    // not Linux
  }
  return freemem();
}

/** Nomad's node attributes, fingerprinted from the host. */
export function nodeAttributes(ctx: NodeContext): Record<string, string> {
  const c = cpu();
  const d = disk(ctx.dataDir);
  const attrs: Record<string, string> = {
    'unique.hostname': hostname(),
    'unique.storage.volume': d.device,
    'unique.storage.bytestotal': String(d.size),
    'unique.storage.bytesfree': String(d.available),
    'kernel.name': platform(),
    'kernel.version': release(),
    'kernel.arch': arch(),
    'os.name': osType().toLowerCase(),
    'cpu.arch': arch(),
    'cpu.modelname': c.model,
    'cpu.numcores': String(c.count),
    'cpu.frequency': String(c.mhz),
    'cpu.totalcompute': String(c.mhz * c.count),
    'memory.totalbytes': String(totalmem()),
    'nomad.version': ctx.version,
    'nomad.advertise.address': ctx.address,
  };
  for (const d of ctx.drivers) attrs[`driver.${d}`] = '1';
  return attrs;
}

/** Each driver's fingerprint: raw_exec needs `/proc` (Linux) to supervise and measure its processes. */
function driversJson(ctx: NodeContext): Json {
  const time = new Date(ctx.startedAt).toISOString();
  return Object.fromEntries(ctx.drivers.map((name) => {
    const healthy = name !== 'raw_exec' || platform() === 'linux';
    return [name, { Attributes: { [`driver.${name}`]: healthy ? 'true' : 'false' }, Detected: healthy, Healthy: healthy, HealthDescription: healthy ? 'Healthy' : `${name} needs Linux's /proc`, UpdateTime: time }];
  }));
}

function resourcesJson(ctx: NodeContext): Json {
  const c = cpu();
  return {
    Cpu: { CpuShares: c.mhz * c.count, TotalCpuCores: c.count, ReservableCpuCores: Array.from({ length: c.count }, (_, i) => i) },
    Memory: { MemoryMB: Math.floor(totalmem() / 1024 / 1024) },
    Disk: { DiskMB: Math.floor(disk(ctx.dataDir).available / 1024 / 1024) },
    Networks: [],
    Devices: [],
    MinDynamicPort: 20000,
    MaxDynamicPort: 32000,
  };
}

const RESERVED = { Cpu: { CpuShares: 0, ReservedCpuCores: [] }, Memory: { MemoryMB: 0 }, Disk: { DiskMB: 0 }, Networks: { ReservedHostPorts: '' } };

/** Nomad's `Node` (`GET /v1/node/:id`). */
export function nodeJson(ctx: NodeContext, modifyIndex: number): Json {
  return {
    ID: ctx.node.id,
    SecretID: '',
    Name: ctx.node.name,
    Datacenter: ctx.node.datacenter,
    NodeClass: ctx.node.class,
    NodePool: ctx.node.pool,
    HTTPAddr: ctx.address,
    TLSEnabled: false,
    Attributes: nodeAttributes(ctx),
    NodeResources: resourcesJson(ctx),
    ReservedResources: RESERVED,
    Links: {},
    Meta: { ...ctx.node.meta },
    CgroupParent: '',
    Drain: false,
    DrainStrategy: null,
    SchedulingEligibility: 'eligible',
    Status: 'ready',
    StatusDescription: '',
    StatusUpdatedAt: Math.floor(ctx.startedAt / 1000),
    Events: [{ Message: 'Node registered', Subsystem: 'Cluster', Details: null, Timestamp: new Date(ctx.startedAt).toISOString(), CreateIndex: ctx.createIndex }],
    Drivers: driversJson(ctx),
    HostVolumes: {},
    HostNetworks: {},
    CSIControllerPlugins: null,
    CSINodePlugins: null,
    LastDrain: null,
    CreateIndex: ctx.createIndex,
    ModifyIndex: Math.max(ctx.createIndex, modifyIndex),
  };
}

/** Nomad's `NodeListStub` (`GET /v1/nodes`); `Attributes` only when asked (`?os=true`). */
export function nodeStubJson(ctx: NodeContext, modifyIndex: number, withAttributes: boolean): Json {
  const n = nodeJson(ctx, modifyIndex);
  return {
    Address: ctx.address.includes(':') ? ctx.address.slice(0, ctx.address.lastIndexOf(':')) : ctx.address,
    ID: n['ID'], Name: n['Name'], Datacenter: n['Datacenter'], NodeClass: n['NodeClass'], NodePool: n['NodePool'], Version: ctx.version,
    Drain: false, SchedulingEligibility: n['SchedulingEligibility'], Status: n['Status'], StatusDescription: n['StatusDescription'],
    Drivers: n['Drivers'], NodeResources: n['NodeResources'], ReservedResources: n['ReservedResources'], LastDrain: null,
    ...(withAttributes && { Attributes: n['Attributes'] }),
    CreateIndex: n['CreateIndex'], ModifyIndex: n['ModifyIndex'],
  };
}

/** CPU times of each core, ms since boot. */
type CoreTimes = { user: number; nice: number; sys: number; idle: number; irq: number }[];
const ZERO_TIMES = { user: 0, nice: 0, sys: 0, idle: 0, irq: 0 };

/** Nomad's `HostStats` (`GET /v1/client/stats`): each core's use since the previous sample, memory, the data dir's disk. */
export class HostStats {
  private previous: { at: number; cores: CoreTimes };
  private last?: { at: number; json: Json };

  constructor(private readonly dataDir: string) {
    this.previous = { at: Date.now(), cores: cpus().map((c) => c.times) };
  }

  /** The figures now; reads within 100 ms share one sample, so a flood of readers costs one /proc read. */
  sample(): Json {
    const now = Date.now();
    if (this.last && now - this.last.at < 100) return this.last.json;
    const cores = cpus().map((c) => c.times);
    const c = cpu();
    let busyPercentSum = 0;
    const cpuJson = cores.map((t, i) => {
      let p = this.previous.cores[i] ?? ZERO_TIMES;
      // No tick since the last read (two reads a few ms apart): the use since boot says more than nothing.
      if (t.user + t.nice + t.sys + t.irq + t.idle === p.user + p.nice + p.sys + p.irq + p.idle) p = ZERO_TIMES;
      const user = t.user + t.nice - (p.user + p.nice);
      const system = t.sys + t.irq - (p.sys + p.irq);
      const idle = t.idle - p.idle;
      const total = Math.max(1, user + system + idle);
      busyPercentSum += ((user + system) / total) * 100;
      return { CPU: `cpu${i}`, User: (user / total) * 100, System: (system / total) * 100, Idle: (idle / total) * 100, Total: ((user + system) / total) * 100 };
    });
    this.previous = { at: now, cores };
    const total = totalmem();
    const free = freemem();
    const available = memAvailable();
    const d = disk(this.dataDir);
    const diskJson = {
      Device: d.device, Mountpoint: d.mountpoint, Size: d.size, Used: d.size - d.free, Available: d.available,
      UsedPercent: d.size > 0 ? ((d.size - d.free) / d.size) * 100 : 0, InodesUsedPercent: d.inodesUsedPercent,
    };
    const json: Json = {
      Memory: { Total: total, Available: available, Used: total - available, Free: free },
      CPU: cpuJson,
      DiskStats: [diskJson],
      AllocDirStats: diskJson,
      DeviceStats: [],
      Uptime: Math.floor(uptime()),
      CPUTicksConsumed: (busyPercentSum / 100) * c.mhz,
      Timestamp: now * 1e6,
    };
    this.last = { at: now, json };
    return json;
  }
}

/** When and at which index the node of a served context registered, and its host stats sampler. */
export interface NodeRegistration {
  startedAt: number;
  createIndex: number;
  /** The index of the node's last change since (its dynamic meta: node-meta.ts); none until then. */
  modifyIndex?: number;
  stats: HostStats;
}

const registrations = new WeakMap<ApiContext, NodeRegistration>();

/** The node's registration in `ctx` (made now, unannounced, when `registerNode` was not called). */
export function nodeRegistration(ctx: ApiContext): NodeRegistration {
  let r = registrations.get(ctx);
  if (!r) registrations.set(ctx, (r = { startedAt: Date.now(), createIndex: Math.max(1, ctx.index.current), stats: new HostStats(ctx.dataDir) }));
  return r;
}

/** Announces a node registration on the event stream; `abandon` lets later events go when it never will be. */
export interface NodeAnnouncement {
  (): void;
  abandon(): void;
}

/**
 * Registers the agent's node as the API starts: it takes the next index, at which it is announced on the event
 * stream (`Node` topic, `NodeRegistration`), as a Nomad client registering with its server is. The announcement
 * is the returned call, made once the API listens, so the node it carries has the address bound (a port asked as
 * 0 is the one given); until then the broker holds every later event behind it.
 */
export function registerNode(ctx: ApiContext): NodeAnnouncement {
  const index = ctx.index.next();
  const r: NodeRegistration = { startedAt: Date.now(), createIndex: index, stats: new HostStats(ctx.dataDir) };
  registrations.set(ctx, r);
  ctx.index.changed(index);
  const release = ctx.events.hold(index);
  let done = false;
  const announce = () => {
    if (done) return;
    done = true;
    try {
      // The whole node, as Nomad's NodeStreamEvent carries it (sanitized: no secret ID).
      const node = nodeJson(nodeContextOf(ctx), index);
      ctx.events.publish({ Index: index, Events: [{ Topic: 'Node', Type: 'NodeRegistration', Key: ctx.registry.node.id, Namespace: '', FilterKeys: [], Index: index, Payload: { Node: node } }] });
    } finally {
      release();
    }
  };
  return Object.assign(announce, { abandon: () => ((done = true), release()) });
}

/** What the node JSON of `ctx` is made from. */
export function nodeContextOf(ctx: ApiContext): NodeContext {
  const r = nodeRegistration(ctx);
  return { node: ctx.registry.node, dataDir: ctx.dataDir, address: ctx.address, version: ctx.version, drivers: Object.keys(BUILTIN_DRIVER_CHECKS), startedAt: r.startedAt, createIndex: r.createIndex };
}
