import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from 'xstate';
import type { Driver } from '../../src/drivers/controller.ts';
import { Resolve } from '../../src/drivers/do.ts';
import { ErrRuntimeUnsupported } from '../../src/drivers/errors.ts';
import { SwarmTaskState, newSwarmTaskStatus, type SwarmTask } from '../../src/drivers/task-status.ts';
import { localNodeInfo } from '../../src/env/node-info.ts';
import type { TaskSpec } from '../../src/jobspec/types.ts';
import { createExecutor } from '../../src/runtime/create-executor.ts';
import { createTaskManager } from '../../src/runtime/create-task-manager.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { capturingDriver } from '../../src/testing/capturing-driver.ts';

const { NEW, ACCEPTED, PREPARING, READY, STARTING, RUNNING, COMPLETE, REJECTED } = SwarmTaskState;

const node = localNodeInfo({
  name: 'worker-1',
  attributes: { 'cpu.arch': 'x64', 'kernel.name': 'linux', 'cpu.numcores': '4', 'memory.totalbytes': '8589934592' },
  meta: { rack: 'r1' },
});

function swarmTask(spec: Partial<TaskSpec> = {}, overrides: Partial<SwarmTask> = {}): SwarmTask {
  return {
    id: 'task1',
    desiredState: RUNNING,
    status: newSwarmTaskStatus(NEW),
    spec: { name: 'web', driver: 'mock', config: { run_for: '5s' }, ...spec },
    ...overrides,
  };
}

/** A driver that records what each controller was built from. */
const capture = () => capturingDriver({ name: 'capture' });

const signal = () => new AbortController().signal;

describe('createExecutor', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('TestResolve with a real executor: a mock task resolves to ACCEPTED and the task manager runs it to COMPLETE on the clock', async () => {
    const clock = new SimulatedClock();
    const executor = createExecutor({ node, clock });
    const task = swarmTask({}, { status: newSwarmTaskStatus(SwarmTaskState.ASSIGNED) });
    const { controller, status, error } = await Resolve(task, executor);
    expect(error).toBeUndefined();
    expect(status).toMatchObject({ state: ACCEPTED, message: 'accepted' });
    const states: number[] = [];
    const tm = createTaskManager({ ...task, status }, controller!, { clock, onStatus: (s) => void states.push(s.state) });
    await waitFor(tm.actor, (s) => s.matches({ running: 'stepping' }) && tm.getTask().status.state === RUNNING);
    await clock.advance(5_000);
    await waitFor(tm.actor, (s) => s.matches('idle'));
    expect(states.filter((s, i, all) => all[i - 1] !== s)).toEqual([PREPARING, READY, STARTING, RUNNING, COMPLETE]);
    expect(tm.getTask().status).toMatchObject({ state: COMPLETE, message: 'finished', timestamp: 5_000 });
    await tm.close();
  });

  it('TestResolve: a task whose driver the node lacks is ErrRuntimeUnsupported, and Resolve rejects it', async () => {
    const executor = createExecutor({ node });
    expect(() => executor.controller(swarmTask({ driver: 'docker' }))).toThrow(ErrRuntimeUnsupported);
    const { controller, status, error } = await Resolve(swarmTask({ driver: 'docker' }), executor);
    expect(controller).toBeUndefined();
    expect(error).toBeInstanceOf(ErrRuntimeUnsupported);
    expect(status).toMatchObject({ state: REJECTED, message: 'resolving controller failed' });
    expect(status.err).toBe('task task1: driver "docker" is not available on this node (available: mock, mock_driver, raw_exec)');
  });

  it('resolves the controller by the task spec driver name, with the task env and its config interpolated', () => {
    const { driver, seen } = capture();
    const clock = new SimulatedClock();
    const executor = createExecutor({ drivers: { capture: driver }, node, clock, dataDir: '/srv/allocrun', hostEnv: {} });
    executor.controller(swarmTask({ driver: 'capture', config: { dir: '${NOMAD_TASK_DIR}', host: '${node.unique.name}' } }, { slot: 3 }));
    expect(seen).toHaveLength(1);
    const { task, ctx } = seen[0]!;
    expect(task.config).toEqual({ dir: '/srv/allocrun/tasks/task1/web/local', host: 'worker-1' });
    expect(ctx).toMatchObject({ allocId: 'task1', allocDir: '/srv/allocrun/tasks/task1', taskDir: '/srv/allocrun/tasks/task1/web', clock });
    expect(ctx.env.NOMAD_ALLOC_INDEX).toBe('3');
    expect(ctx.env.NOMAD_TASK_NAME).toBe('web');
  });

  it('controller has no side effects: nothing is created on disk until the controller prepares', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'allocrun-exec-'));
    dirs.push(dataDir);
    const executor = createExecutor({ node, dataDir, clock: new SimulatedClock() });
    executor.controller(swarmTask({ driver: 'raw_exec', config: { command: '/bin/true' } }));
    expect(existsSync(join(dataDir, 'tasks'))).toBe(false);
  });

  it('refuses a task id that could name a directory outside its data dir', () => {
    const executor = createExecutor({ node });
    expect(() => executor.controller(swarmTask({}, { id: '../etc' }))).toThrow(/task id "\.\.\/etc" must be letters/);
  });

  it('describe reports hostname, platform, resources and the driver plugins', async () => {
    const executor = createExecutor({ node, drivers: { capture: capture().driver } });
    expect(await executor.describe(signal())).toEqual({
      hostname: 'worker-1',
      platform: { architecture: 'x64', os: 'linux' },
      resources: { nanoCpus: 4e9, memoryBytes: 8589934592 },
      engine: {
        engineVersion: 'allocrun',
        labels: { rack: 'r1' },
        plugins: ['capture', 'mock', 'mock_driver', 'raw_exec'].map((name) => ({ type: 'Driver', name })),
      },
    });
  });

  it("configure propagates the manager's node: tasks see its id and labels", async () => {
    const { driver, seen } = capture();
    const executor = createExecutor({ drivers: { capture: driver }, node });
    await executor.configure({ id: 'swarm-node-7', labels: { zone: 'b' } }, signal());
    executor.controller(swarmTask({ driver: 'capture', config: { id: '${node.unique.id}', zone: '${meta.zone}', rack: '${meta.rack}' } }));
    expect(seen[0]!.task.config).toEqual({ id: 'swarm-node-7', zone: 'b', rack: 'r1' });
    expect(executor.configuredNode()).toEqual({ id: 'swarm-node-7', labels: { zone: 'b' } });
  });

  it('configure rejects a node without an id, naming the field', async () => {
    const executor = createExecutor({ node });
    await expect(executor.configure({ id: '' }, signal())).rejects.toThrow('executor.configure: node.id must be a non-empty string');
    await expect(executor.configure({ id: 'n', labels: { a: 1 as unknown as string } }, signal())).rejects.toThrow('node.labels.a must be a string');
  });

  it('setNetworkBootstrapKeys keeps copies of the keys, oldest first, and rejects a malformed key by index', () => {
    const executor = createExecutor({ node });
    const key = new Uint8Array([1, 2, 3]);
    executor.setNetworkBootstrapKeys([
      { subsystem: 'networking:gossip', algorithm: 'aes-128-gcm', key, lamportTime: 5 },
      { subsystem: 'networking:ipsec', algorithm: 'aes-128-gcm', key: new Uint8Array([9]), lamportTime: 2 },
    ]);
    key[0] = 42;
    expect(executor.networkBootstrapKeys().map((k) => [k.lamportTime, [...k.key]])).toEqual([[2, [9]], [5, [1, 2, 3]]]);
    expect(() =>
      executor.setNetworkBootstrapKeys([
        { subsystem: 'networking:gossip', algorithm: 'aes-128-gcm', key, lamportTime: 1 },
        { subsystem: 'networking:gossip', algorithm: 'aes-128-gcm', key: 'secret' as unknown as Uint8Array, lamportTime: 2 },
      ]),
    ).toThrow('executor.setNetworkBootstrapKeys: keys[1].key must be a non-empty Uint8Array');
    // A rejected call changes nothing.
    expect(executor.networkBootstrapKeys()).toHaveLength(2);
  });

  it('offers secret and config stores for controllers to read', () => {
    const executor = createExecutor({ node });
    executor.secrets().add({ id: 's1', name: 'db', data: 'pw' });
    expect(executor.secrets().get('s1')?.name).toBe('db');
    expect(executor.configs().get('c1')).toBeUndefined();
  });

  it('describe honours an aborted signal', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(createExecutor({ node }).describe(ac.signal)).rejects.toThrow();
  });
});
