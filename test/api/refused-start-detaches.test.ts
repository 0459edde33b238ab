/**
 * An agent whose API refuses to start (a damaged stored mark of failed deployments, read once the registry
 * already follows the restored runners) leaves no registry following them: the runners' later states, saved
 * after the caller has closed the store, must not be applied (each would take an index, and a health verdict
 * would read the closed store, an uncaught error).
 */
import { firstValueFrom, filter } from 'rxjs';
import { afterEach, expect, it } from 'vitest';
import { serveAgentApi } from '../../src/api/serve-agent-api.ts';
import { createAgent } from '../../src/runtime/create-agent.ts';
import { AgentStore } from '../../src/state/agent-store.ts';
import { ServiceRegistry } from '../../src/services/index.ts';
import { variablesOf } from '../../src/variables/variable-store.ts';
import { loadNodeId } from '../../src/api/node.ts';
import { localNodeInfo } from '../../src/env/node-info.ts';
import { call } from './agent-process.ts';
import { cleanUp, freshDir, mockJob, serve, SUITE_TIMEOUT } from './in-process-agent.ts';

afterEach(cleanUp);

it('stops following the restored runners when a damaged mark refuses the start', { timeout: SUITE_TIMEOUT }, async () => {
  const dir = freshDir();
  const first = await serve(dir);
  expect((await call(first.socket, 'PUT', '/v1/jobs', mockJob('kept'))).status).toBe(200);
  await first.stop();

  const store = AgentStore.open(dir);
  await store.commit((tx) => tx.put('meta', 'deployments.failed', { x: 'soon' }));
  const services = new ServiceRegistry();
  const agent = createAgent({ dataDir: dir, store: store.runners(), services, node: localNodeInfo({ id: await loadNodeId(store) }), variables: variablesOf(store) });
  await agent.start();
  try {
    const found = (await store.runners().list()).map((r) => ({ ...r, runner: agent.get(r.spec.id) }));
    expect(found).toHaveLength(1);
    await expect(serveAgentApi({ agent, dataDir: dir, store, version: 'test', found, services })).rejects.toThrow(/deployments\.failed/);
    // The index the runners' saves record: a registry still following them would move it with each new state.
    const before = store.indexOf!();
    // The start made good what the first agent's stop left (its allocation runs again): stopped now, each state saved.
    const id = found[0]!.spec.id;
    expect(agent.get(id)?.getState().clientStatus).not.toBe('complete');
    const savedDead = firstValueFrom(agent.saved$(id)!.pipe(filter(({ state }) => state.clientStatus === 'complete' || state.clientStatus === 'failed')));
    agent.get(id)!.send({ type: 'KILL' });
    await savedDead;
    expect(store.indexOf!()).toBe(before);
  } finally {
    for (const r of agent.list()) if (r.actor.getSnapshot().status === 'active') r.send({ type: 'KILL' });
    await Promise.all(agent.list().map((r) => r.done.catch(() => undefined)));
    await store.close();
  }
});
