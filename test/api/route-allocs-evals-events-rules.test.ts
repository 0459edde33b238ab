/**
 * The allocation, evaluation and event-stream routes (src/api/routes/{allocations,evaluations,events}.ts),
 * rule by rule, through a served agent in process (mock tasks): what each answers, at which index, what it
 * refuses, and what a stop or a stream does.
 */
import { request } from 'node:http';
import { Observable } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventBroker } from '../../src/api/event-broker.ts';
import { call, stream, waitForAllocs, type Alloc } from './agent-process.ts';
import { cleanUp, mockJob, runJob, serve, until, type Served } from './in-process-agent.ts';

afterEach(async () => {
  vi.restoreAllMocks();
  await cleanUp();
});

type Placed = Alloc & { EvalID: string };
type Eval = { ID: string; JobID: string; TriggeredBy: string; Status: string; CreateIndex: number; ModifyIndex: number };
const evalsOf = async (s: Served, path: string) => (await call(s.socket, 'GET', path)).json<Eval[]>();

describe('allocation routes', { timeout: 60_000 }, () => {
  it('lists every allocation at the newest allocation index, and reads one at its own', async () => {
    const s = await serve();
    const web = await runJob(s, mockJob('web'));
    const db = await runJob(s, mockJob('db'));
    const list = await call(s.socket, 'GET', '/v1/allocations');
    expect(list.json<Alloc[]>().map((a) => a.ID).sort()).toEqual([web.ID, db.ID].sort());
    const full = await Promise.all([web, db].map(async (a) => (await call(s.socket, 'GET', `/v1/allocation/${a.ID}`)).json<{ ModifyIndex: number }>()));
    expect(list.headers['x-nomad-index']).toBe(String(Math.max(...full.map((a) => a.ModifyIndex))));
    const one = await call(s.socket, 'GET', `/v1/allocation/${web.ID}`);
    expect(one.headers).toMatchObject({ 'x-nomad-index': String(one.json().ModifyIndex), 'x-nomad-knownleader': 'true' });
    expect(one.json()).toMatchObject({ ID: web.ID, JobID: 'web', Job: { ID: 'web' } });
  });

  it('answers a stub that moves with its allocation: a list read before the task runs is not answered after', async () => {
    const s = await serve();
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('web', { t: { run_for: '1h', start_block_for: '300ms' } }));
    const early = await until(async () => (await call(s.socket, 'GET', '/v1/allocations')).json<Alloc[]>(), (l) => l.length === 1, 'the allocation');
    expect(early[0]!.ClientStatus).toBe('pending');
    await until(async () => (await call(s.socket, 'GET', '/v1/allocations')).json<Alloc[]>(), (l) => l[0]?.ClientStatus === 'running', 'the listed allocation to run');
  });

  it('finds an allocation by a unique prefix of its ID, and answers 404 "alloc not found" otherwise', async () => {
    const s = await serve();
    const a = await runJob(s, mockJob('web'));
    expect((await call(s.socket, 'GET', `/v1/allocation/${a.ID.slice(0, 8)}`)).json().ID).toBe(a.ID);
    for (const [method, path] of [['GET', '/v1/allocation/ffffffff-nope'], ['PUT', '/v1/allocation/ffffffff-nope/stop'], ['POST', '/v1/allocation/ffffffff-nope/stop']] as const) {
      const res = await call(s.socket, method, path);
      expect([method, res.status, res.text]).toEqual([method, 404, 'alloc not found']);
    }
  });

  it.each(['PUT', 'POST'])('%s /v1/allocation/:id/stop stops it, answers the evaluation that places its replacement, and the index', async (method) => {
    const s = await serve();
    const a = await runJob(s, mockJob('web'));
    const res = await call(s.socket, method, `/v1/allocation/${a.ID}/stop`);
    expect(res.status, res.text).toBe(200);
    const answer = res.json<{ EvalID: string; Index: number }>();
    expect(Object.keys(answer).sort()).toEqual(['EvalID', 'Index']);
    expect((await call(s.socket, 'GET', `/v1/evaluation/${answer.EvalID}`)).json()).toMatchObject({ JobID: 'web', TriggeredBy: 'alloc-stop', CreateIndex: answer.Index });
    const stopped = (await call(s.socket, 'GET', `/v1/allocation/${a.ID}`)).json();
    expect(stopped).toMatchObject({ DesiredStatus: 'stop' });
    expect(stopped.ModifyIndex).toBeGreaterThanOrEqual(answer.Index);
    const all = await waitForAllocs(s.socket, '/v1/job/web/allocations', (l) => l.length === 2 && l.some((x) => x.ID !== a.ID && x.ClientStatus === 'running'));
    expect((all.find((x) => x.ID !== a.ID) as Placed).EvalID).toBe(answer.EvalID);
  });
});

describe('evaluation routes', { timeout: 60_000 }, () => {
  it('lists every write\'s evaluation oldest first at the evaluations\' index, and a job\'s newest first', async () => {
    const s = await serve();
    const first = (await call(s.socket, 'PUT', '/v1/jobs', mockJob('web'))).json<{ EvalID: string }>();
    const other = (await call(s.socket, 'PUT', '/v1/jobs', mockJob('db'))).json<{ EvalID: string }>();
    const second = (await call(s.socket, 'PUT', '/v1/jobs', mockJob('web', { t: { run_for: '2h' } }))).json<{ EvalID: string }>();
    const all = await call(s.socket, 'GET', '/v1/evaluations');
    const evals = all.json<Eval[]>();
    expect(evals.map((e) => e.ID)).toEqual([first.EvalID, other.EvalID, second.EvalID]);
    expect(all.headers['x-nomad-index']).toBe(String(Math.max(...evals.map((e) => e.ModifyIndex))));
    const ofWeb = await call(s.socket, 'GET', '/v1/job/web/evaluations');
    expect(ofWeb.json<Eval[]>().map((e) => e.ID)).toEqual([second.EvalID, first.EvalID]);
    expect(ofWeb.headers['x-nomad-index']).toBe(all.headers['x-nomad-index']);
    expect(await evalsOf(s, '/v1/job/db/evaluations')).toMatchObject([{ ID: other.EvalID, JobID: 'db' }]);
  });

  it('reads an evaluation by ID or unique prefix at its own index, and answers 404 "eval not found" otherwise', async () => {
    const s = await serve();
    const { EvalID } = (await call(s.socket, 'PUT', '/v1/jobs', mockJob('web'))).json<{ EvalID: string }>();
    const res = await call(s.socket, 'GET', `/v1/evaluation/${EvalID}`);
    expect(res.json()).toMatchObject({ ID: EvalID, JobID: 'web', TriggeredBy: 'job-register', Type: 'service' });
    expect(res.headers['x-nomad-index']).toBe(String(res.json().ModifyIndex));
    expect((await call(s.socket, 'GET', `/v1/evaluation/${EvalID.slice(0, 8)}`)).json().ID).toBe(EvalID);
    for (const path of ['/v1/evaluation/ffffffff-nope', '/v1/evaluation/ffffffff-nope/allocations']) {
      const miss = await call(s.socket, 'GET', path);
      expect([path, miss.status, miss.text]).toEqual([path, 404, 'eval not found']);
    }
  });

  it('answers the allocations an evaluation placed, and none of the job\'s others', async () => {
    const s = await serve();
    const a = await runJob(s, mockJob('web'));
    const stop = (await call(s.socket, 'POST', `/v1/allocation/${a.ID}/stop`)).json<{ EvalID: string }>();
    const all = await waitForAllocs(s.socket, '/v1/job/web/allocations', (l) => l.length === 2);
    const replacement = all.find((x) => x.ID !== a.ID)!;
    const placed = (await call(s.socket, 'GET', `/v1/evaluation/${stop.EvalID}/allocations`)).json<Alloc[]>();
    expect(placed.map((x) => x.ID)).toEqual([replacement.ID]);
    expect(placed[0]).toMatchObject({ JobID: 'web', EvalID: stop.EvalID });
    const firstPlaced = (await call(s.socket, 'GET', `/v1/evaluation/${(a as Placed).EvalID}/allocations`)).json<Alloc[]>();
    expect(firstPlaced.map((x) => x.ID)).toEqual([a.ID]);
  });
});

describe('GET /v1/event/stream', { timeout: 60_000 }, () => {
  type Batch = { Index?: number; Events?: { Topic: string; Type: string; Key: string; Namespace: string }[] };
  const batchesOf = (text: string) => text.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Batch);

  it('answers NDJSON as application/json, with the headers sent before any event', async () => {
    const s = await serve();
    const live = await stream(s.socket, '/v1/event/stream?topic=Job');
    // `stream` resolves on the headers: none of the agent's writes has happened yet.
    expect(live.status).toBe(200);
    expect(live.text()).toBe('');
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('web'));
    const text = await live.until((t) => t.includes('JobRegistered'));
    live.close();
    expect(batchesOf(text)[0]).toMatchObject({ Events: [{ Topic: 'Job', Type: 'JobRegistered', Key: 'web', Namespace: 'default' }] });
  });

  it('answers with Content-Type application/json', async () => {
    const s = await serve();
    const type = await new Promise<string | undefined>((resolve, reject) => {
      const req = request({ socketPath: s.socket.socketPath, path: '/v1/event/stream', method: 'GET' }, (res) => {
        resolve(res.headers['content-type']);
        res.destroy();
      });
      req.on('error', reject);
      req.end();
    });
    expect(type).toMatch(/^application\/json/);
  });

  it('ends its subscription to the agent\'s events when the client closes the stream', async () => {
    const s = await serve();
    let open = 0;
    const subscribe = EventBroker.prototype.subscribe;
    vi.spyOn(EventBroker.prototype, 'subscribe').mockImplementation(function (this: EventBroker, opts) {
      const inner = subscribe.call(this, opts);
      return new Observable((sub) => {
        open++;
        const s2 = inner.subscribe(sub);
        return () => (open--, s2.unsubscribe());
      });
    });
    const live = await stream(s.socket, '/v1/event/stream?topic=Job');
    expect(open).toBe(1);
    live.close();
    await until(async () => open, (n) => n === 0, 'the subscription to end', 5_000);
  });

  it('accepts each topic the agent publishes, and * for all of them', async () => {
    const s = await serve();
    for (const topic of ['*', 'Job', 'Allocation', 'Evaluation', 'Deployment', 'Node', 'Variables', 'Service', 'Job:web', 'Allocation:*']) {
      const live = await stream(s.socket, `/v1/event/stream?topic=${encodeURIComponent(topic)}`);
      expect([topic, live.status]).toEqual([topic, 200]);
      live.close();
    }
  });

  it('refuses an unknown topic with 400 naming it and the topics it publishes', async () => {
    const s = await serve();
    for (const topic of ['ACLToken', 'job', 'Jobs:web']) {
      const res = await call(s.socket, 'GET', `/v1/event/stream?topic=Job&topic=${encodeURIComponent(topic)}`);
      const name = topic.split(':')[0]!;
      expect([res.status, res.text]).toEqual([400, `unknown topic ${JSON.stringify(name)}: this agent publishes Job, Allocation, Evaluation, Deployment, Node, Variables and Service`]);
    }
  });

  it('sends only the events of its topics and keys, and of its namespace', async () => {
    const s = await serve();
    const web = await stream(s.socket, '/v1/event/stream?topic=Job:web');
    const other = await stream(s.socket, '/v1/event/stream?topic=Job&namespace=other');
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('db'));
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('web'));
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('o', undefined, { Namespace: 'other' }));
    const webText = await web.until((t) => t.includes('"Key":"web"'));
    const otherText = await other.until((t) => t.includes('"Key":"o"'));
    web.close();
    other.close();
    const keys = (text: string) => batchesOf(text).flatMap((b) => (b.Events ?? []).map((e) => `${e.Topic}:${e.Key}`));
    expect(keys(webText)).toEqual(['Job:web']);
    expect(keys(otherText)).toEqual(['Job:o']);
  });

  it('starts at the newest index without ?index, and replays the batches after ?index', async () => {
    const s = await serve();
    const reg = (await call(s.socket, 'PUT', '/v1/jobs', mockJob('web'))).json<{ Index: number }>();
    const fresh = await stream(s.socket, '/v1/event/stream?topic=Job');
    const replay = await stream(s.socket, `/v1/event/stream?topic=Job&index=${reg.Index - 1}`);
    const replayed = await replay.until((t) => t.includes('JobRegistered'));
    expect(batchesOf(replayed)[0]!.Index).toBe(reg.Index);
    await call(s.socket, 'PUT', '/v1/jobs', mockJob('db'));
    const later = await fresh.until((t) => t.includes('"Key":"db"'));
    fresh.close();
    replay.close();
    expect(later).not.toContain('"Key":"web"');
  });

  it('sends a {} heartbeat each period, and clears its timer when the client closes the stream', async () => {
    const s = await serve(undefined, undefined, { api: { heartbeatMs: 40 } });
    // The stream's heartbeat timer (the one interval of this period), and what is cleared.
    const made: unknown[] = [];
    const cleared: unknown[] = [];
    const realSet = globalThis.setInterval;
    vi.spyOn(globalThis, 'setInterval').mockImplementation(((fn: () => void, ms: number) => {
      const t = realSet(fn, ms);
      if (ms === 40) made.push(t);
      return t;
    }) as typeof setInterval);
    const realClear = globalThis.clearInterval;
    vi.spyOn(globalThis, 'clearInterval').mockImplementation(((t: Parameters<typeof clearInterval>[0]) => (cleared.push(t), realClear(t))) as typeof clearInterval);
    const live = await stream(s.socket, '/v1/event/stream?topic=Job');
    const text = await live.until((t) => t.split('\n').filter((l) => l === '{}').length >= 3);
    expect(text.split('\n').filter(Boolean).every((l) => l === '{}')).toBe(true);
    expect(made).toHaveLength(1);
    expect(cleared).not.toContain(made[0]);
    live.close();
    // The heartbeat's timer ends with the stream: a closed client's stream costs nothing after.
    await until(async () => cleared.includes(made[0]), (ok) => ok, 'the heartbeat timer to be cleared', 5_000);
    vi.restoreAllMocks();
    const after = await stream(s.socket, '/v1/event/stream?topic=Job');
    await after.until((t) => t.includes('{}'));
    after.close();
  });
});
