/**
 * An agent that dies while its allocations run, and the one that takes over its data dir (src/api/job-registry.ts:
 * adopt and heal), in process: the first agent's API is closed without stopping its runners, as a crash leaves
 * its tasks running; the next agent, on the same store, restores them live. What the store says wins: an in-place
 * update committed but never delivered reaches the restored runner, and an allocation committed stopped is stopped.
 * And what the dead agent's API showed is never behind what the next one restores (its API shows saved states only).
 */
import { globalAgent } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { StoredAlloc } from '../../src/api/job-registry.ts';
import { loadNodeId } from '../../src/api/node.ts';
import { serveAgentApi } from '../../src/api/serve-agent-api.ts';
import { localNodeInfo } from '../../src/env/node-info.ts';
import { createAgent } from '../../src/runtime/create-agent.ts';
import type { AgentStore } from '../../src/state/agent-store.ts';
import { ServiceRegistry } from '../../src/services/index.ts';
import { variablesOf } from '../../src/variables/variable-store.ts';
import { call, waitForAllocs, type Alloc } from './agent-process.ts';
import { HeldRunnerSaves } from './held-runner-saves.ts';
import { cleanUp, freshDir, mockJob, runJob, serve, type Served, SUITE_TIMEOUT, until } from './in-process-agent.ts';

type Json = Record<string, any>;

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
  await cleanUp();
});

/**
 * The first agent dies with its runners running (its API gone, its tasks not); a second agent takes over the
 * same store (after `edit`), restoring what the runner records hold, as `allocrun agent` does at start.
 */
async function takeOver(first: Served, edit?: (store: AgentStore) => Promise<void>): Promise<Served['socket'] & { agent: Served['agent'] }> {
  const { store, dataDir } = first;
  await first.api.close();
  globalAgent.destroy();
  await edit?.(store);
  const services = new ServiceRegistry();
  const agent = createAgent({ dataDir, store: store.runners(), services, node: localNodeInfo({ id: await loadNodeId(store) }), variables: variablesOf(store) });
  await agent.start();
  const found = (await store.runners().list()).map((r) => ({ ...r, runner: agent.get(r.spec.id) }));
  const api = await serveAgentApi({ agent, dataDir, store, version: 'test', found, services });
  stops.push(async () => {
    await api.close();
    globalAgent.destroy();
    for (const r of [...agent.list(), ...first.agent.list()]) r.send({ type: 'KILL' });
    await Promise.all([...agent.list(), ...first.agent.list()].map((r) => r.done.catch(() => undefined)));
  });
  return { socketPath: api.socketPath, agent };
}

describe('an agent taking over from one that died with its allocations running', { timeout: SUITE_TIMEOUT }, () => {
  it('adopts each live runner and follows it: a stop it then makes is seen', async () => {
    const first = await serve(freshDir());
    const alloc = await runJob(first, mockJob('survivor'));
    const second = await takeOver(first);
    const [adopted] = await waitForAllocs(second, '/v1/job/survivor/allocations', (l) => l[0]?.ClientStatus === 'running');
    expect(adopted!.ID).toBe(alloc.ID);
    expect(second.agent.get(alloc.ID)).toBeDefined();
    await call(second, 'PUT', `/v1/allocation/${alloc.ID}/stop`);
    await waitForAllocs(second, '/v1/job/survivor/allocations', (l) => l.find((a) => a.ID === alloc.ID)?.ClientStatus === 'complete');
  });

  it('gives a restored runner the in-place update the store committed and it never got', async () => {
    const first = await serve(freshDir());
    const alloc = await runJob(first, mockJob('updated'));
    const second = await takeOver(first, async (store) => {
      const a = store.get('allocs', alloc.ID) as StoredAlloc;
      await store.commit((tx) => tx.put('allocs', alloc.ID, { ...a, spec: { ...a.spec, modifyIndex: (a.spec.modifyIndex ?? 0) + 1000 } }));
    });
    await waitForAllocs(second, '/v1/job/updated/allocations', (l) => l[0]?.ClientStatus === 'running');
    const stored = first.store.get('allocs', alloc.ID) as StoredAlloc;
    const runner = second.agent.get(alloc.ID)!;
    const running = () => (runner.actor.getSnapshot().context as { alloc?: { modifyIndex?: number } }).alloc?.modifyIndex;
    for (let i = 0; i < 100 && running() !== stored.spec.modifyIndex; i++) await new Promise((r) => setTimeout(r, 20));
    expect(running()).toBe(stored.spec.modifyIndex);
  });

  it('stops a restored runner whose allocation the store says is stopped', async () => {
    const first = await serve(freshDir());
    const alloc = await runJob(first, mockJob('overruled'));
    const second = await takeOver(first, async (store) => {
      const a = store.get('allocs', alloc.ID) as StoredAlloc;
      await store.commit((tx) => tx.put('allocs', alloc.ID, { ...a, desired: 'stop', spec: { ...a.spec, desiredStatus: 'stop' } }));
    });
    const [stopped] = await waitForAllocs(second, '/v1/job/overruled/allocations', (l) => l.find((a) => a.ID === alloc.ID)?.ClientStatus === 'complete');
    expect(stopped).toMatchObject({ ID: alloc.ID, DesiredStatus: 'stop' });
    expect(((await call(second, 'GET', '/v1/job/overruled/allocations')).json<Json[]>()).filter((a) => a['DesiredStatus'] === 'run')).toHaveLength(1);
  });

  it('restores at least the state its API showed when it died with a runner\'s save held', async () => {
    const saves = new HeldRunnerSaves();
    const first = await serve(freshDir(), (store) => saves.over(store), { agent: { store: saves } });
    const alloc = await runJob(first, mockJob('unsaved-stop'));
    // The stop is committed and the runner has finished it, but the save saying so never reaches the disk.
    saves.holdSaves();
    expect((await call(first.socket, 'PUT', `/v1/allocation/${alloc.ID}/stop`)).status).toBe(200);
    const runner = first.agent.get(alloc.ID)!;
    await until(async () => runner.getState().clientStatus, (c) => c === 'complete', 'the runner done');
    await until(async () => saves.waiting, (n) => n > 0, 'its save held');
    const shown = (await call(first.socket, 'GET', `/v1/allocation/${alloc.ID}`)).json<Alloc>();
    expect(shown.ClientStatus, 'what the dead agent showed last').toBe('running');
    const second = await takeOver(first);
    // What the next agent restores is never behind what the dead one showed, and it finishes the stop.
    const restored = (await call(second, 'GET', `/v1/allocation/${alloc.ID}`)).json<Alloc>();
    expect(['running', 'complete']).toContain(restored.ClientStatus);
    expect(restored.TaskStates['t']!.Events.length).toBeGreaterThanOrEqual(shown.TaskStates['t']!.Events.length);
    await waitForAllocs(second, '/v1/job/unsaved-stop/allocations', (l) => l.find((a) => a.ID === alloc.ID)?.ClientStatus === 'complete');
  });
});
