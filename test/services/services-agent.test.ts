/**
 * Issue 27 (services), end to end in an agent in this process with real raw_exec tasks: a group service
 * registered with its allocation's port while the task runs, served by Nomad's service endpoints with
 * blocking queries; tags updated in place without restarting the task; deregistered before the task is
 * killed; each task's services interpolated from its own env; registered again after an agent restart.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { filter, firstValueFrom } from 'rxjs';
import { call, processRunning, stream, waitForAllocs, type Alloc } from '../api/agent-process.ts';
import { cleanUp, freshDir, serve, until, type Served } from '../api/in-process-agent.ts';
import type { ServiceRegistration } from '../../src/services/index.ts';

afterEach(cleanUp, 60_000);

/** A tiny HTTP server on its first argument, answering with its pid. */
const SERVER = `require('node:http').createServer((req, res) => res.end(String(process.pid))).listen(Number(process.argv.at(-1)));`;

const webJob = (opts: { tags?: string; count?: number; groupShutdownDelay?: string } = {}) => `job "web" {
  group "app" {
    count = ${opts.count ?? 1}
    ${opts.groupShutdownDelay ? `shutdown_delay = "${opts.groupShutdownDelay}"` : ''}
    network {
      port "http" {}
    }
    service {
      name     = "web"
      port     = "http"
      provider = "nomad"
      tags     = ${opts.tags ?? '["blue"]'}
    }
    task "server" {
      driver       = "raw_exec"
      kill_timeout = "1s"
      config {
        command = ${JSON.stringify(process.execPath)}
        args    = ["-e", ${JSON.stringify(SERVER)}, "\${NOMAD_PORT_http}"]
      }
    }
  }
}
`;

async function register(s: Served, hcl: string): Promise<void> {
  const parsed = await call(s.socket, 'POST', '/v1/jobs/parse', { JobHCL: hcl });
  expect(parsed.status, parsed.text).toBe(200);
  const res = await call(s.socket, 'PUT', '/v1/jobs', { Job: parsed.json() });
  expect(res.status, res.text).toBe(200);
}

const runningAllocs = (n: number) => (l: Alloc[]) => l.filter((a) => a.DesiredStatus === 'run' && a.ClientStatus === 'running').length === n;

async function instances(s: Served, name: string, n: number): Promise<ServiceRegistration[]> {
  return until(async () => (await call(s.socket, 'GET', `/v1/service/${name}`)).json() as ServiceRegistration[], (l) => l.length === n, `${n} instances of ${name}`);
}

/** GET http://127.0.0.1:port/ until the server answers. */
async function answer(port: number): Promise<string> {
  return until(() => fetch(`http://127.0.0.1:${port}/`).then((r) => r.text(), () => ''), (t) => t !== '', `a server on port ${port}`);
}

describe('Nomad-native services in the agent', () => {
  it('registers a group service with each allocation\'s port while its raw_exec task runs, and serves it', async () => {
    const s = await serve();
    await register(s, webJob({ count: 2 }));
    const allocs = await waitForAllocs(s.socket, '/v1/job/web/allocations', runningAllocs(2));
    const regs = await instances(s, 'web', 2);
    for (const a of allocs) {
      const full = (await call(s.socket, 'GET', `/v1/allocation/${a.ID}`)).json();
      const port = (full.AllocatedResources.Shared.Ports as { Label: string; Value: number }[]).find((p) => p.Label === 'http')!.Value;
      const reg = regs.find((r) => r.AllocID === a.ID)!;
      expect(reg).toMatchObject({ ID: `_nomad-task-${a.ID}-group-app-web-http`, ServiceName: 'web', Namespace: 'default', JobID: 'web', Tags: ['blue'], Address: '127.0.0.1', Port: port });
      expect(reg.NodeID).toBe(full.NodeID);
      // The registration says where the task really answers.
      expect(Number(await answer(reg.Port))).toBeGreaterThan(0);
      const mine = (await call(s.socket, 'GET', `/v1/allocation/${a.ID}/services`)).json() as ServiceRegistration[];
      expect(mine.map((r) => r.ID)).toEqual([reg.ID]);
    }
    // GET /v1/job/web carries the service as Nomad stores it; registering it back changes nothing.
    const stored = (await call(s.socket, 'GET', '/v1/job/web')).json();
    expect(stored.TaskGroups[0].Services).toMatchObject([{ Name: 'web', PortLabel: 'http', Provider: 'nomad', Tags: ['blue'], AddressMode: 'auto', Namespace: 'default' }]);
    const again = await call(s.socket, 'PUT', '/v1/jobs', { Job: stored });
    expect(again.json().EvalID).toBe('');
    const list = await call(s.socket, 'GET', '/v1/services');
    expect(list.json()).toEqual([{ Namespace: 'default', Services: [{ ServiceName: 'web', Tags: ['blue'] }] }]);
    expect(Number(list.headers['x-nomad-index'])).toBe(s.services.index);
    expect(((await call(s.socket, 'GET', '/v1/job/web/services')).json() as unknown[]).length).toBe(2);
    expect((await call(s.socket, 'GET', '/v1/job/nope/services')).status).toBe(404);
    expect((await call(s.socket, 'GET', '/v1/service/nothing')).json()).toEqual([]);
  });

  it('publishes registrations and deregistrations on the event stream\'s Service topic', async () => {
    const s = await serve();
    const events = await stream(s.socket, '/v1/event/stream?topic=Service:web');
    try {
      await register(s, webJob());
      const [reg] = await instances(s, 'web', 1);
      await events.until((t) => t.includes('"ServiceRegistration"'));
      await call(s.socket, 'DELETE', '/v1/job/web');
      const text = await events.until((t) => t.includes('"ServiceDeregistration"'));
      const batches = text.split('\n').filter((l) => l.startsWith('{"Index"')).map((l) => JSON.parse(l) as { Events: { Topic: string; Type: string; Key: string; FilterKeys: string[]; Payload: { Service: { ID: string } } }[] });
      const seen = batches.flatMap((b) => b.Events);
      expect(seen.map((e) => [e.Topic, e.Type, e.Key])).toEqual([['Service', 'ServiceRegistration', reg!.ID], ['Service', 'ServiceDeregistration', reg!.ID]]);
      expect(seen[0]!.FilterKeys).toEqual(['web', 'web']);
      expect(seen[0]!.Payload.Service.ID).toBe(reg!.ID);
    } finally {
      events.close();
    }
  });

  it('answers a blocking query on a service once a registration changes', async () => {
    const s = await serve();
    await register(s, webJob());
    await instances(s, 'web', 1);
    const first = await call(s.socket, 'GET', '/v1/service/web');
    const index = Number(first.headers['x-nomad-index']);
    const blocked = call(s.socket, 'GET', `/v1/service/web?index=${index}&wait=30s`);
    await register(s, webJob({ tags: '["green"]' }));
    const res = await blocked;
    expect(Number(res.headers['x-nomad-index'])).toBeGreaterThan(index);
    expect((res.json() as ServiceRegistration[])[0]!.Tags).toEqual(['green']);
  });

  it('updates tags in place without restarting the task', async () => {
    const s = await serve();
    await register(s, webJob());
    const [alloc] = await waitForAllocs(s.socket, '/v1/job/web/allocations', runningAllocs(1));
    const [before] = await instances(s, 'web', 1);
    const pid = await answer(before!.Port);
    // The plan says what registering will do: the allocation is updated in place.
    const parsed = (await call(s.socket, 'POST', '/v1/jobs/parse', { JobHCL: webJob({ tags: '["green", "v2"]' }) })).json();
    const plan = await call(s.socket, 'POST', '/v1/job/web/plan', { Job: parsed, Diff: true });
    expect(plan.status, plan.text).toBe(200);
    expect(plan.json().Annotations.DesiredTGUpdates.app).toMatchObject({ InPlaceUpdate: 1, DestructiveUpdate: 0 });
    // The diff has the service as one block and its tags as a set inside it, as Nomad's serviceDiff makes them
    // (structs/diff.go: stringSetDiff(old.Tags, new.Tags, "Tags")): one field per tag added or deleted.
    const group = plan.json().Diff.TaskGroups[0];
    const tags = { Type: 'Edited', Name: 'Tags', Fields: [
      { Type: 'Added', Name: 'Tags', Old: '', New: 'green', Annotations: null },
      { Type: 'Added', Name: 'Tags', Old: '', New: 'v2', Annotations: null },
      { Type: 'Deleted', Name: 'Tags', Old: 'blue', New: '', Annotations: null },
    ], Objects: null };
    expect(group.Objects).toEqual([expect.objectContaining({ Type: 'Edited', Name: 'Service', Objects: [tags] })]);
    await register(s, webJob({ tags: '["green", "v2"]' }));
    const [after] = await until(() => instances(s, 'web', 1), (l) => l[0]!.Tags.includes('green'), 'the new tags');
    expect(after).toMatchObject({ ID: before!.ID, AllocID: alloc!.ID, Port: before!.Port, Tags: ['green', 'v2'], CreateIndex: before!.CreateIndex });
    expect(after!.ModifyIndex).toBeGreaterThan(before!.ModifyIndex);
    // The same process answers: the task was neither restarted nor replaced.
    expect(await answer(after!.Port)).toBe(pid);
    const state = s.agent.get(alloc!.ID)!.getState().taskStates['server']!;
    expect(state.restarts).toBe(0);
    expect(state.events.map((e) => e.type)).not.toContain('Restarting');
  });

  it('deregisters the group service before the group\'s shutdown_delay and before the task is signalled', async () => {
    const s = await serve();
    await register(s, webJob({ groupShutdownDelay: '2s' }));
    const [alloc] = await waitForAllocs(s.socket, '/v1/job/web/allocations', runningAllocs(1));
    const [reg] = await instances(s, 'web', 1);
    const pid = Number(await answer(reg!.Port));
    const runner = s.agent.get(alloc!.ID)!;
    // What the task was doing at the moment its service left the catalog.
    const atRemoval = firstValueFrom(s.services.changes$.pipe(filter((c) => c.changes.some((x) => x.type === 'ServiceDeregistration')))).then(() => ({
      alive: processRunning(pid),
      events: runner.getState().taskStates['server']!.events.map((e) => e.type),
    }));
    const stop = await call(s.socket, 'DELETE', '/v1/job/web');
    expect(stop.status, stop.text).toBe(200);
    const seen = await atRemoval;
    expect(seen.alive).toBe(true);
    expect(seen.events).not.toContain('Killing');
    expect(seen.events).not.toContain('Killed');
    expect((await call(s.socket, 'GET', '/v1/service/web')).json()).toEqual([]);
    // ... and the task is killed after that.
    const done = await runner.done;
    expect(done.taskStates['server']!.events.map((e) => e.type)).toContain('Killed');
    await until(async () => processRunning(pid), (alive) => !alive, 'the server to exit');
  });

  it('deregisters a task service at preKilling, before the task\'s shutdown_delay and its kill signal', async () => {
    const s = await serve();
    const job = webJob().replace('    service {\n      name     = "web"\n      port     = "http"\n      provider = "nomad"\n      tags     = ["blue"]\n    }\n', '').replace('      kill_timeout = "1s"', '      kill_timeout = "1s"\n      shutdown_delay = "2s"\n      service {\n        name     = "web"\n        port     = "http"\n        provider = "nomad"\n      }');
    await register(s, job);
    const [alloc] = await waitForAllocs(s.socket, '/v1/job/web/allocations', runningAllocs(1));
    const [reg] = await instances(s, 'web', 1);
    expect(reg!.ID).toBe(`_nomad-task-${alloc!.ID}-server-web-http`);
    const pid = Number(await answer(reg!.Port));
    const runner = s.agent.get(alloc!.ID)!;
    const atRemoval = firstValueFrom(s.services.changes$.pipe(filter((c) => c.changes.some((x) => x.type === 'ServiceDeregistration')))).then(() => ({
      alive: processRunning(pid),
      events: runner.getState().taskStates['server']!.events.map((e) => e.type),
    }));
    await call(s.socket, 'DELETE', '/v1/job/web');
    const seen = await atRemoval;
    expect(seen.alive).toBe(true);
    expect(seen.events).not.toContain('Killed');
    expect(seen.events).not.toContain('Terminated');
    await runner.done;
    await until(async () => processRunning(pid), (alive) => !alive, 'the server to exit');
  });

  it('interpolates each task\'s services from its own env: another task\'s meta never resolves', async () => {
    const s = await serve();
    const task = (name: string, meta: string) => `    task "${name}" {
      driver = "mock"
      ${meta}
      config {
        run_for = "1h"
      }
      service {
        name     = "svc-${name}"
        provider = "nomad"
        tags     = ["x-\${NOMAD_META_x}", "\${NOMAD_TASK_NAME}"]
      }
    }`;
    await register(s, `job "meta" {\n  group "g" {\n${task('a', 'meta {\n        x = "from-a"\n      }')}\n${task('b', '')}\n  }\n}\n`);
    const [a] = await instances(s, 'svc-a', 1);
    const [b] = await instances(s, 'svc-b', 1);
    expect(a!.Tags).toEqual(['x-from-a', 'a']);
    // Task b has no meta x: its reference resolves empty, never to task a's value.
    expect(b!.Tags).toEqual(['x-', 'b']);
  });

  it('answers in the request\'s namespace, default when it names none, every one for *', async () => {
    const s = await serve();
    const job = (ns: string) => `job "api-${ns}" {\n  namespace = "${ns}"\n  group "g" {\n    task "t" {\n      driver = "mock"\n      config {\n        run_for = "1h"\n      }\n      service {\n        name     = "api"\n        provider = "nomad"\n        tags     = ["${ns}"]\n      }\n    }\n  }\n}\n`;
    await register(s, job('default'));
    await register(s, job('prod'));
    await until(async () => s.services.list('api', '*').length, (n) => n === 2, 'both registrations');
    const get = async (path: string) => (await call(s.socket, 'GET', path)).json() as { Namespace: string }[];
    expect((await get('/v1/service/api')).map((r) => r.Namespace)).toEqual(['default']);
    expect((await get('/v1/service/api?namespace=prod')).map((r) => r.Namespace)).toEqual(['prod']);
    expect((await get('/v1/service/api?namespace=*')).map((r) => r.Namespace).sort()).toEqual(['default', 'prod']);
    expect(await get('/v1/services')).toEqual([{ Namespace: 'default', Services: [{ ServiceName: 'api', Tags: ['default'] }] }]);
    expect((await get('/v1/services?namespace=*')).map((n) => n.Namespace)).toEqual(['default', 'prod']);
  });

  it('registers a running allocation\'s services again after an agent restart on the same data dir', async () => {
    const dir = freshDir();
    const first = await serve(dir);
    // A group service (registered again by the restored runner) and a task service (by its poststart hooks,
    // which run again on restore).
    await register(first, webJob().replace('      kill_timeout = "1s"', '      kill_timeout = "1s"\n      service {\n        name     = "web-task"\n        port     = "http"\n        provider = "nomad"\n      }'));
    const [alloc] = await waitForAllocs(first.socket, '/v1/job/web/allocations', runningAllocs(1));
    const [before] = await instances(first, 'web', 1);
    const [taskBefore] = await instances(first, 'web-task', 1);
    const pid = await answer(before!.Port);
    // The agent exits, leaving its task running, as Nomad's client does.
    await first.api.close();
    await first.agent.shutdown();
    await first.store.close();

    const second = await serve(dir);
    const [after] = await instances(second, 'web', 1);
    const [taskAfter] = await instances(second, 'web-task', 1);
    expect(taskAfter).toMatchObject({ ID: taskBefore!.ID, Port: taskBefore!.Port });
    expect(after).toMatchObject({ ID: before!.ID, AllocID: alloc!.ID, Port: before!.Port, Tags: ['blue'] });
    expect(await answer(after!.Port)).toBe(pid);
    // Its indexes come from the restarted agent's sequence, past everything the first one handed out.
    expect(after!.ModifyIndex).toBeGreaterThanOrEqual(before!.ModifyIndex);
  });
});
