/**
 * The agent names an allocation `job.group[index]` (Nomad's alloc name): the index it assigns travels in
 * the allocation's spec, so the runner's context (what the inspector sends the page) carries it and the
 * page shows the same name as the API, and its tasks see it in their env. A replacement takes the index of
 * the allocation it replaces.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sanitize } from '../../src/inspect/sanitize.ts';
import type { JsonValue } from '../../src/inspect/protocol.ts';
import { allocNamesOf } from '../../visualizer/src/nomad.ts';
import type { ActorView } from '../../visualizer/src/model.ts';
import { call, waitForAllocs, type Alloc } from './agent-process.ts';
import { cleanUp, mockJob, serve, SUITE_TIMEOUT, type Served } from './in-process-agent.ts';

let s: Served;
beforeAll(async () => {
  s = await serve();
}, SUITE_TIMEOUT);
afterAll(cleanUp);

const job = (meta: string) => {
  const body = mockJob('web', { t: { run_for: '1h' } }, { Meta: { v: meta } });
  body.Job.TaskGroups[0]!.Count = 3;
  return body;
};

/** The name the page gives the allocation, from its runner's context as the inspector sends it. */
function pageName(a: Alloc): string {
  const runner = s.agent.get(a.ID)!;
  const view = { id: a.ID, context: sanitize(runner.actor.getSnapshot().context) as JsonValue } as ActorView;
  return allocNamesOf(view).name;
}

describe("an agent allocation's name", () => {
  it('is job.group[index] in the page as in the API, also for the replacements of an updated job', async () => {
    const name = (a: Alloc) => (a as Alloc & { Name: string }).Name;
    expect((await call(s.socket, 'PUT', '/v1/jobs', job('1'))).status).toBe(200);
    const first = await waitForAllocs(s.socket, '/v1/job/web/allocations', (l) => l.length === 3 && l.every((a) => a.ClientStatus === 'running'));
    expect(first.map(name).sort()).toEqual(['web.g[0]', 'web.g[1]', 'web.g[2]']);
    for (const a of first) expect(pageName(a)).toBe(name(a));
    // New meta replaces each allocation: the replacement takes the index of the one it replaces.
    expect((await call(s.socket, 'PUT', '/v1/jobs', job('2'))).status).toBe(200);
    const v1 = (l: Alloc[]) => l.filter((a) => a.JobVersion === 1 && a.ClientStatus === 'running');
    const second = v1(await waitForAllocs(s.socket, '/v1/job/web/allocations', (l) => v1(l).length === 3));
    expect(second.map(name).sort()).toEqual(['web.g[0]', 'web.g[1]', 'web.g[2]']);
    for (const a of second) expect(pageName(a)).toBe(name(a));
  }, SUITE_TIMEOUT);

  it("is what each allocation's task sees as NOMAD_ALLOC_NAME and NOMAD_ALLOC_INDEX", async () => {
    const body = { Job: { ID: 'envs', Type: 'batch', TaskGroups: [{ Name: 'g', Count: 3, Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/usr/bin/env' } }] }] } };
    expect((await call(s.socket, 'PUT', '/v1/jobs', body)).status).toBe(200);
    const done = await waitForAllocs(s.socket, '/v1/job/envs/allocations', (l) => l.length === 3 && l.every((a) => a.ClientStatus === 'complete'));
    const seen: string[] = [];
    for (const a of done) {
      const out = (await call(s.socket, 'GET', `/v1/client/fs/logs/${a.ID}?task=t&type=stdout&plain=true`)).text;
      const v = (k: string) => out.split('\n').find((l) => l.startsWith(`${k}=`))?.slice(k.length + 1);
      expect(v('NOMAD_ALLOC_NAME')).toBe((a as Alloc & { Name: string }).Name);
      seen.push(v('NOMAD_ALLOC_INDEX')!);
    }
    expect(seen.sort()).toEqual(['0', '1', '2']);
  }, SUITE_TIMEOUT);
});
