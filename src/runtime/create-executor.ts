/**
 * `createExecutor({ drivers })`: SwarmKit's Executor over allocrun's drivers. It describes this node, takes
 * the manager's node object and network keys, and hands out one controller per task, picked by the task
 * spec's driver name, so `Resolve`, `Do` and the task manager run tasks on the same drivers the Nomad-style
 * runners use.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../drivers/clock.ts';
import { realClock } from '../drivers/clock.ts';
import type { Controller, Driver } from '../drivers/controller.ts';
import { ErrRuntimeUnsupported } from '../drivers/errors.ts';
import {
  createConfigsManager,
  createSecretsManager,
  type ConfigsManager,
  type ConfigsProvider,
  type EncryptionKey,
  type Executor,
  type NodeDescription,
  type NodeInfo as SwarmNodeInfo,
  type SecretsManager,
  type SecretsProvider,
} from '../drivers/executor.ts';
import type { SwarmTask } from '../drivers/task-status.ts';
import { hostEnvFor } from '../env/host-env.ts';
import { localNodeInfo, type NodeInfo } from '../env/node-info.ts';
import { buildTaskEnv } from '../env/task-env.ts';
import type { AllocSpec } from '../jobspec/types.ts';
import { withDefaultDrivers } from './default-drivers.ts';

/** How an executor runs its tasks. */
export interface ExecutorOptions {
  /** Drivers by name; `mock` and `raw_exec` are always there unless replaced. */
  drivers?: Record<string, Driver>;
  /** Task directories live under `<dataDir>/tasks/<task id>`; default: a directory under the OS temp dir. */
  dataDir?: string;
  /** This node (hostname, platform, resources for `describe`; `${node.*}` for tasks); default: this machine. */
  node?: NodeInfo;
  /** The agent environment tasks inherit (minus Nomad's credential denylist); default: this process's. */
  hostEnv?: NodeJS.ProcessEnv;
  /** Handed to every controller; a SimulatedClock makes the mock driver deterministic. */
  clock?: Clock;
}

/** The executor `createExecutor` returns: SwarmKit's Executor, with the secret and config stores it offers. */
export interface LocalExecutor extends Executor, SecretsProvider, ConfigsProvider {
  /** The manager's node object last passed to `configure`, if any. */
  configuredNode(): SwarmNodeInfo | undefined;
  /** The network keys last set, oldest Lamport time first (copies). */
  networkBootstrapKeys(): EncryptionKey[];
}

/** SwarmKit task ids are alphanumeric; anything that could leave `<dataDir>/tasks` is refused. */
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** An Executor whose controllers come from `drivers`, resolved by each task spec's `driver`. */
export function createExecutor(opts: ExecutorOptions = {}): LocalExecutor {
  const drivers = withDefaultDrivers(opts.drivers);
  const clock = opts.clock ?? realClock;
  const baseNode = opts.node ?? localNodeInfo();
  const hostEnv = hostEnvFor(opts.hostEnv ?? process.env);
  const tasksDir = join(opts.dataDir ?? join(tmpdir(), 'allocrun'), 'tasks');
  const secrets: SecretsManager = createSecretsManager();
  const configs: ConfigsManager = createConfigsManager();
  let swarmNode: SwarmNodeInfo | undefined;
  let keys: EncryptionKey[] = [];

  // The manager's node id and labels win over the local ones: tasks see the node as the cluster names it.
  const taskNode = (): NodeInfo =>
    swarmNode
      ? { ...baseNode, id: swarmNode.id, meta: { ...baseNode.meta, ...swarmNode.labels } }
      : baseNode;

  return {
    async describe(signal) {
      signal.throwIfAborted();
      const attr = baseNode.attributes;
      const cores = Number(attr['cpu.numcores']);
      const memory = Number(attr['memory.totalbytes']);
      const description: NodeDescription = {
        hostname: baseNode.name,
        platform: { architecture: attr['cpu.arch'] ?? attr['kernel.arch'] ?? '', os: attr['kernel.name'] ?? '' },
        resources: {
          ...(Number.isFinite(cores) && cores > 0 ? { nanoCpus: cores * 1e9 } : {}),
          ...(Number.isFinite(memory) && memory > 0 ? { memoryBytes: memory } : {}),
        },
        engine: {
          engineVersion: 'allocrun',
          labels: { ...baseNode.meta },
          // Nomad calls them driver plugins; aliases (mock_driver) are listed under each name they answer to.
          plugins: Object.keys(drivers).sort().map((name) => ({ type: 'Driver', name })),
        },
      };
      return description;
    },

    async configure(node, signal) {
      signal.throwIfAborted();
      if (typeof node?.id !== 'string' || node.id === '') throw new TypeError('executor.configure: node.id must be a non-empty string');
      if (node.labels !== undefined) checkStringMap(node.labels, 'executor.configure: node.labels');
      swarmNode = structuredClone(node);
    },

    controller(task: SwarmTask): Controller {
      if (typeof task?.id !== 'string' || !SAFE_ID.test(task.id)) {
        throw new TypeError(`executor.controller: task id ${JSON.stringify(task?.id)} must be letters, digits, '_', '.' or '-'`);
      }
      const spec = task.spec;
      if (!spec || typeof spec.driver !== 'string') {
        throw new ErrRuntimeUnsupported(`task ${task.id}: its spec names no driver`);
      }
      const driver = drivers[spec.driver];
      if (!driver) {
        const known = Object.keys(drivers).sort().join(', ');
        throw new ErrRuntimeUnsupported(`task ${task.id}: driver ${JSON.stringify(spec.driver)} is not available on this node (available: ${known})`);
      }
      // No side effects here (SwarmKit's contract): directories are made by the controller's prepare.
      const allocDir = join(tasksDir, task.id);
      const taskDir = join(allocDir, spec.name);
      const alloc: AllocSpec = { id: task.id, job: task.serviceId ?? spec.name, group: spec.name, type: 'service', tasks: [spec] };
      const env = buildTaskEnv({ node: taskNode(), alloc, task: spec, allocDir, taskDir, hostEnv, allocIndex: task.slot ?? 0 });
      return driver.controller(
        { ...spec, config: env.interpolateDeep(spec.config) },
        { allocId: task.id, env: env.vars, taskDir, allocDir, logs: spec.logs, clock },
      );
    },

    setNetworkBootstrapKeys(next) {
      if (!Array.isArray(next)) throw new TypeError('executor.setNetworkBootstrapKeys: expected an array of keys');
      next.forEach((key, i) => checkKey(key, `executor.setNetworkBootstrapKeys: keys[${i}]`));
      keys = next.map((k) => ({ ...k, key: new Uint8Array(k.key) })).sort((a, b) => a.lamportTime - b.lamportTime);
    },

    secrets: () => secrets,
    configs: () => configs,
    configuredNode: () => (swarmNode ? structuredClone(swarmNode) : undefined),
    networkBootstrapKeys: () => keys.map((k) => ({ ...k, key: new Uint8Array(k.key) })),
  };
}

function checkKey(key: EncryptionKey, where: string): void {
  if (typeof key !== 'object' || key === null) throw new TypeError(`${where} must be an object`);
  if (typeof key.subsystem !== 'string' || key.subsystem === '') throw new TypeError(`${where}.subsystem must be a non-empty string`);
  if (typeof key.algorithm !== 'string' || key.algorithm === '') throw new TypeError(`${where}.algorithm must be a non-empty string`);
  if (!(key.key instanceof Uint8Array) || key.key.length === 0) throw new TypeError(`${where}.key must be a non-empty Uint8Array`);
  if (!Number.isSafeInteger(key.lamportTime) || key.lamportTime < 0) throw new TypeError(`${where}.lamportTime must be a non-negative integer`);
}

function checkStringMap(map: unknown, where: string): void {
  if (typeof map !== 'object' || map === null || Array.isArray(map)) throw new TypeError(`${where} must be an object of strings`);
  for (const [k, v] of Object.entries(map)) {
    if (typeof v !== 'string') throw new TypeError(`${where}.${k} must be a string`);
  }
}
