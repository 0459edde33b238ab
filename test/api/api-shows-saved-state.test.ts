/**
 * The agent's API shows a runner's state only once the runner's record holds it (create-agent.ts `saved$`,
 * job-registry.ts `watch`): a state shown before its save could be taken back by a crash, a client that read
 * `running` reading `pending` after the restart. While a save is held the allocation stays at its last saved
 * state, blocking queries are not woken, and it moves once the save lands; a save that fails is shown all the
 * same and said in the agent's log (Nomad's task runner logs a failed persist and still tells the server).
 * (An agent that dies with a save held: registry-crash-rules.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, waitForAllocs, type Alloc } from './agent-process.ts';
import { HeldRunnerSaves } from './held-runner-saves.ts';
import { cleanUp, freshDir, mockJob, serve, type Served, SUITE_TIMEOUT, until } from './in-process-agent.ts';

const saves = new HeldRunnerSaves();
let s: Served;
beforeAll(async () => {
  s = await serve(freshDir(), (store) => saves.over(store), { agent: { store: saves } });
});
afterAll(cleanUp);

const allocation = async (id: string, query = '') => {
  const res = await call(s.socket, 'GET', `/v1/allocation/${id}${query}`);
  expect(res.status, res.text).toBe(200);
  return { alloc: res.json<Alloc & { CreateIndex: number }>(), index: Number(res.headers['x-nomad-index']) };
};

/** Registers `id` (one mock task that runs for an hour) and returns its allocation as placed. */
async function place(id: string): Promise<Alloc> {
  expect((await call(s.socket, 'PUT', '/v1/jobs', mockJob(id))).status).toBe(200);
  const [placed] = (await call(s.socket, 'GET', `/v1/job/${id}/allocations`)).json<Alloc[]>();
  return placed!;
}

describe('the API shows a runner state only once its record is on disk', { timeout: SUITE_TIMEOUT }, () => {
  it('keeps the allocation at its last saved state while the runner\'s save is held, and moves it once the save lands', async () => {
    const release = saves.holdSaves();
    const { ID } = await place('held');
    const runner = s.agent.get(ID)!;
    await until(async () => runner.getState().clientStatus, (c) => c === 'running', 'the runner running');
    await until(async () => saves.waiting, (n) => n > 0, 'a save held');

    const held = await allocation(ID);
    expect(held.alloc.ClientStatus).toBe('pending');
    expect(held.alloc.ModifyIndex, 'no client update published').toBe(held.alloc.CreateIndex);
    // A blocking query at that index is not woken by the unsaved state: it waits its wait out.
    const blocked = await allocation(ID, `?index=${held.index}&wait=300ms`);
    expect(blocked.index).toBe(held.index);
    expect(blocked.alloc.ClientStatus).toBe('pending');

    const woken = allocation(ID, `?index=${held.index}&wait=60s`);
    release();
    expect((await woken).index, 'the landed save wakes the blocking query').toBeGreaterThan(held.index);
    await until(() => allocation(ID), ({ alloc }) => alloc.ClientStatus === 'running', 'the saved running state shown');
    expect((await s.store.runners().load(ID))?.state.clientStatus, 'what a restart would restore').toBe('running');
  });

  it('shows the state of a save that failed, saying so in the agent\'s log once, and that it is saved again', async () => {
    const lines: string[] = [];
    const log = s.api.registry.log;
    s.api.registry.log = (line) => lines.push(line);
    try {
      saves.fail = true;
      const { ID } = await place('unsaved');
      // The disk refuses every save: the API still follows the runner, as Nomad's client tells the server.
      await waitForAllocs(s.socket, '/v1/job/unsaved/allocations', (l) => l[0]?.ClientStatus === 'running');
      expect(await s.store.runners().load(ID)).toBeUndefined();
      expect(lines.filter((l) => l.includes(ID))).toEqual([expect.stringMatching(/its runner's state could not be saved \(no space left on device/)]);
      saves.fail = false;
      expect((await call(s.socket, 'PUT', `/v1/allocation/${ID}/stop`)).status).toBe(200);
      await waitForAllocs(s.socket, '/v1/job/unsaved/allocations', (l) => l[0]?.ClientStatus === 'complete');
      expect((await s.store.runners().load(ID))?.state.clientStatus).toBe('complete');
      expect(lines.filter((l) => l.includes(ID))).toHaveLength(2);
      expect(lines.at(-1)).toMatch(/its runner's state is saved again/);
    } finally {
      saves.fail = false;
      s.api.registry.log = log;
    }
  });
});
