/**
 * createExecutor against SwarmKit's Executor contract (agent/exec/executor.go): what Describe reports for a
 * node with partial or odd facts, what Configure and SetNetworkBootstrapKeys accept and how they refuse the
 * rest (a TypeError naming the field, never a crash on a missing property), and what Controller builds
 * for a task (its directory, its job name) or why it refuses one. In process, on a capturing driver.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Controller } from '../../src/drivers/controller.ts';
import { ErrRuntimeUnsupported } from '../../src/drivers/errors.ts';
import type { EncryptionKey, NodeInfo as SwarmNodeInfo } from '../../src/drivers/executor.ts';
import { SwarmTaskState, newSwarmTaskStatus, type SwarmTask } from '../../src/drivers/task-status.ts';
import type { NodeInfo } from '../../src/env/node-info.ts';
import { createExecutor } from '../../src/runtime/create-executor.ts';
import { capturingDriver } from '../../src/testing/capturing-driver.ts';

/** A node with exactly these attributes: no local fingerprint is merged in. */
function nodeWith(attributes: Record<string, string>): NodeInfo {
  return { id: 'node-uuid', name: 'worker-2', datacenter: 'dc1', region: 'global', attributes, meta: {} };
}

const fullNode = nodeWith({ 'cpu.arch': 'x64', 'kernel.name': 'linux', 'cpu.numcores': '2', 'memory.totalbytes': '1024' });

function swarmTask(overrides: Partial<SwarmTask> = {}): SwarmTask {
  return {
    id: 'task1',
    desiredState: SwarmTaskState.RUNNING,
    status: newSwarmTaskStatus(SwarmTaskState.ASSIGNED),
    spec: { name: 'web', driver: 'capture', config: {} },
    ...overrides,
  };
}

/** A driver that records what each controller was built from. */
const capture = () => capturingDriver({ name: 'capture' });

const signal = () => new AbortController().signal;

function key(overrides: Partial<Record<keyof EncryptionKey, unknown>> = {}): EncryptionKey {
  return { subsystem: 'networking:gossip', algorithm: 'aes-128-gcm', key: new Uint8Array([1]), lamportTime: 1, ...overrides } as EncryptionKey;
}

describe('Describe: the node description', () => {
  const platformOf = async (attributes: Record<string, string>) =>
    (await createExecutor({ node: nodeWith(attributes) }).describe(signal())).platform;
  const resourcesOf = async (attributes: Record<string, string>) =>
    (await createExecutor({ node: nodeWith(attributes) }).describe(signal())).resources;

  it("reports the CPU architecture Nomad fingerprinted (cpu.arch) over the kernel's", async () => {
    expect(await platformOf({ 'cpu.arch': 'amd64', 'kernel.arch': 'x86_64', 'kernel.name': 'linux' })).toEqual({ architecture: 'amd64', os: 'linux' });
  });

  it('falls back to the kernel architecture when the CPU architecture is unknown', async () => {
    expect(await platformOf({ 'kernel.arch': 'aarch64' })).toEqual({ architecture: 'aarch64', os: '' });
  });

  it('reports the CPU architecture alone when the kernel architecture is unknown', async () => {
    expect(await platformOf({ 'cpu.arch': 'arm64', 'kernel.name': 'darwin' })).toEqual({ architecture: 'arm64', os: 'darwin' });
  });

  it('reports an empty platform for a node with no architecture or OS facts', async () => {
    expect(await platformOf({})).toEqual({ architecture: '', os: '' });
  });

  it('reports no CPU or memory resources when the node has no such facts', async () => {
    expect(await resourcesOf({})).toEqual({});
  });

  it('reports no CPU or memory resources for zero cores and zero bytes', async () => {
    expect(await resourcesOf({ 'cpu.numcores': '0', 'memory.totalbytes': '0' })).toEqual({});
  });

  it('reports no CPU or memory resources for counts that are not finite numbers', async () => {
    expect(await resourcesOf({ 'cpu.numcores': 'Infinity', 'memory.totalbytes': 'Infinity' })).toEqual({});
  });

  it('reports cores as nano-CPUs and memory in bytes', async () => {
    expect(await resourcesOf({ 'cpu.numcores': '2', 'memory.totalbytes': '1024' })).toEqual({ nanoCpus: 2e9, memoryBytes: 1024 });
  });
});

describe("Configure: the manager's node object", () => {
  it('accepts a node with an id and no labels', async () => {
    const executor = createExecutor({ node: fullNode });
    await executor.configure({ id: 'swarm-node-1' }, signal());
    expect(executor.configuredNode()).toEqual({ id: 'swarm-node-1' });
  });

  it.each([
    ['no node at all', undefined],
    ['a node without an id', {}],
    ['a node whose id is not a string', { id: 7 }],
  ])('rejects %s with a TypeError naming node.id', async (_, node) => {
    const executor = createExecutor({ node: fullNode });
    await expect(executor.configure(node as unknown as SwarmNodeInfo, signal())).rejects.toThrow(
      new TypeError('executor.configure: node.id must be a non-empty string'),
    );
    expect(executor.configuredNode()).toBeUndefined();
  });

  it.each([
    ['null', null],
    ['a string', 'zone=b'],
    ['an array', ['zone=b']],
  ])('rejects labels that are %s, naming node.labels', async (_, labels) => {
    const executor = createExecutor({ node: fullNode });
    await expect(executor.configure({ id: 'n', labels: labels as unknown as Record<string, string> }, signal())).rejects.toThrow(
      new TypeError('executor.configure: node.labels must be an object of strings'),
    );
    expect(executor.configuredNode()).toBeUndefined();
  });
});

describe('SetNetworkBootstrapKeys', () => {
  it('holds no keys until the manager sets some', () => {
    expect(createExecutor({ node: fullNode }).networkBootstrapKeys()).toEqual([]);
  });

  it('accepts a key at Lamport time 0', () => {
    const executor = createExecutor({ node: fullNode });
    executor.setNetworkBootstrapKeys([key({ lamportTime: 0 })]);
    expect(executor.networkBootstrapKeys().map((k) => k.lamportTime)).toEqual([0]);
  });

  it.each([
    ['undefined', undefined],
    ['an object', { 0: key() }],
  ])('rejects a key list that is %s', (_, next) => {
    const executor = createExecutor({ node: fullNode });
    expect(() => executor.setNetworkBootstrapKeys(next as unknown as EncryptionKey[])).toThrow(
      new TypeError('executor.setNetworkBootstrapKeys: expected an array of keys'),
    );
  });

  const where = 'executor.setNetworkBootstrapKeys: keys[1]';
  it.each([
    ['null', null, `${where} must be an object`],
    ['a string', 'k', `${where} must be an object`],
    ['missing its subsystem', key({ subsystem: undefined }), `${where}.subsystem must be a non-empty string`],
    ['with an empty subsystem', key({ subsystem: '' }), `${where}.subsystem must be a non-empty string`],
    ['with a numeric subsystem', key({ subsystem: 3 }), `${where}.subsystem must be a non-empty string`],
    ['missing its algorithm', key({ algorithm: undefined }), `${where}.algorithm must be a non-empty string`],
    ['with an empty algorithm', key({ algorithm: '' }), `${where}.algorithm must be a non-empty string`],
    ['with a numeric algorithm', key({ algorithm: 128 }), `${where}.algorithm must be a non-empty string`],
    ['with empty key material', key({ key: new Uint8Array(0) }), `${where}.key must be a non-empty Uint8Array`],
    ['at a negative Lamport time', key({ lamportTime: -1 }), `${where}.lamportTime must be a non-negative integer`],
    ['at a fractional Lamport time', key({ lamportTime: 1.5 }), `${where}.lamportTime must be a non-negative integer`],
  ])('rejects a key that is %s, naming it by index, and keeps the keys it had', (_, bad, message) => {
    const executor = createExecutor({ node: fullNode });
    executor.setNetworkBootstrapKeys([key({ lamportTime: 4 })]);
    expect(() => executor.setNetworkBootstrapKeys([key(), bad as EncryptionKey])).toThrow(new TypeError(message));
    expect(executor.networkBootstrapKeys().map((k) => k.lamportTime)).toEqual([4]);
  });
});

describe('Controller: one per task, by its spec driver', () => {
  it("puts the task's directories under the OS temp dir's allocrun/tasks when no data dir is given", () => {
    const { driver, seen } = capture();
    createExecutor({ drivers: { capture: driver }, node: fullNode, hostEnv: {} }).controller(swarmTask());
    expect(seen[0]!.ctx).toMatchObject({
      allocDir: join(tmpdir(), 'allocrun', 'tasks', 'task1'),
      taskDir: join(tmpdir(), 'allocrun', 'tasks', 'task1', 'web'),
    });
  });

  it("names the task's job after its service (NOMAD_JOB_NAME)", () => {
    const { driver, seen } = capture();
    createExecutor({ drivers: { capture: driver }, node: fullNode, hostEnv: {} }).controller(swarmTask({ serviceId: 'svc-api' }));
    expect(seen[0]!.ctx.env).toMatchObject({ NOMAD_JOB_NAME: 'svc-api', NOMAD_GROUP_NAME: 'web', NOMAD_ALLOC_NAME: 'svc-api.web[0]' });
  });

  it("names the job after the task spec when the task belongs to no service", () => {
    const { driver, seen } = capture();
    createExecutor({ drivers: { capture: driver }, node: fullNode, hostEnv: {} }).controller(swarmTask());
    expect(seen[0]!.ctx.env).toMatchObject({ NOMAD_JOB_NAME: 'web', NOMAD_ALLOC_NAME: 'web.web[0]' });
  });

  it.each([
    ['a path that starts with a safe name', 'task1/../../etc'],
    ['a trailing newline', 'task1\n'],
  ])('refuses a task id with %s', (_, id) => {
    const { driver, seen } = capture();
    expect(() => createExecutor({ drivers: { capture: driver }, node: fullNode }).controller(swarmTask({ id }))).toThrow(
      new TypeError(`executor.controller: task id ${JSON.stringify(id)} must be letters, digits, '_', '.' or '-'`),
    );
    expect(seen).toHaveLength(0);
  });

  it.each([
    ['missing', undefined, 'undefined'],
    ['a number', 42, '42'],
  ])('refuses a task whose id is %s, with a TypeError that quotes it', (_, id, shown) => {
    const { driver, seen } = capture();
    expect(() =>
      createExecutor({ drivers: { capture: driver }, node: fullNode }).controller(swarmTask({ id: id as unknown as string })),
    ).toThrow(new TypeError(`executor.controller: task id ${shown} must be letters, digits, '_', '.' or '-'`));
    expect(seen).toHaveLength(0);
  });

  it('refuses no task at all with the same TypeError, not a crash on its id', () => {
    expect(() => createExecutor({ node: fullNode }).controller(undefined as unknown as SwarmTask)).toThrow(
      new TypeError(`executor.controller: task id undefined must be letters, digits, '_', '.' or '-'`),
    );
  });

  it.each([
    ['has no spec', { spec: undefined }],
    ['names no driver', { spec: { name: 'web', config: {} } }],
    ['names its driver with a number', { spec: { name: 'web', driver: 7, config: {} } }],
  ])('a task whose spec %s is ErrRuntimeUnsupported, saying so', (_, overrides) => {
    const executor = createExecutor({ node: fullNode });
    let error: unknown;
    try {
      executor.controller(swarmTask(overrides as unknown as Partial<SwarmTask>));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ErrRuntimeUnsupported);
    expect((error as Error).message).toBe('task task1: its spec names no driver');
  });
});
