/**
 * The node's class and meta (`allocrun agent --node-class gpu --meta rack=r7`, ServeOptions.nodeClass/nodeMeta), as
 * Nomad's client `node_class` and `meta`: one agent in process whose node carries them in `GET /v1/node/:id`, the
 * node list and `/v1/agent/self`; placement judges `${meta.KEY}` and `${node.class}` constraints against them (a
 * job whose constraint fails is blocked, as Nomad's scheduler filters the node); tasks interpolate them in their
 * config and templates read them with `{{ env "meta.KEY" }}`, as Nomad's taskenv does. Then a job blocked on meta
 * the node lacks is placed once the agent starts again with it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from './agent-process.ts';
import { cleanUp, mockJob, runJob, serve, type Served, SUITE_TIMEOUT, until } from './in-process-agent.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('an agent whose node is of class gpu, with meta', { timeout: SUITE_TIMEOUT }, () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve(undefined, undefined, { api: { nodeClass: 'gpu', nodeMeta: { rack: 'r7', 'zone.name': 'eu-west', cores: '16' } } });
    s.api.registry.capacity = { cpu: 0, cores: 64, memoryMB: 1_000_000 };
  });
  afterAll(cleanUp);

  const constrained = (id: string, LTarget: string, Operand: string, RTarget: string) => mockJob(id, undefined, { Constraints: [{ LTarget, RTarget, Operand }] });
  const evalOf = async (id: string): Promise<Json> => (await call(s.socket, 'GET', `/v1/evaluation/${id}`)).json<Json>();

  it('shows its class and meta in the node, the node list and the agent\'s config', async () => {
    const [stub] = (await call(s.socket, 'GET', '/v1/nodes')).json<Json[]>();
    expect(stub!['NodeClass']).toBe('gpu');
    const node = (await call(s.socket, 'GET', `/v1/node/${stub!['ID']}`)).json<Json>();
    expect([node['NodeClass'], node['Meta']]).toEqual(['gpu', { rack: 'r7', 'zone.name': 'eu-west', cores: '16' }]);
    const self = (await call(s.socket, 'GET', '/v1/agent/self')).json<Json>();
    expect(self['config']['Client']).toMatchObject({ NodeClass: 'gpu', Meta: { rack: 'r7', 'zone.name': 'eu-west', cores: '16' } });
  });

  it.each([
    ['${meta.rack} = r7', '${meta.rack}', '=', 'r7'],
    ['${node.class} = gpu', '${node.class}', '=', 'gpu'],
    ['a dotted key: ${meta.zone.name} regexp ^eu-', '${meta.zone.name}', 'regexp', '^eu-'],
    ['${meta.cores} >= 8, as numbers', '${meta.cores}', '>=', '8'],
    ['${meta.rack} is_set', '${meta.rack}', 'is_set', ''],
    ['${meta.gpu} is_not_set', '${meta.gpu}', 'is_not_set', ''],
  ])('places a job whose constraint holds on the node: %s', async (name, l, op, r) => {
    const alloc = await runJob(s, constrained(`holds-${name.replace(/\W+/g, '-')}`, l, op, r));
    expect(alloc.ClientStatus).toBe('running');
  });

  it.each([
    ['${meta.rack} = r8', '${meta.rack}', '=', 'r8'],
    ['${node.class} = cpu', '${node.class}', '=', 'cpu'],
    ['${meta.gpu} is_set', '${meta.gpu}', 'is_set', ''],
    ['${meta.cores} > 16', '${meta.cores}', '>', '16'],
  ])('places nothing of a job whose constraint fails on the node (%s): filtered, blocked', async (name, l, op, r) => {
    const id = `fails-${name.replace(/\W+/g, '-')}`;
    const res = await call(s.socket, 'PUT', '/v1/jobs', constrained(id, l, op, r));
    expect(res.status, res.text).toBe(200);
    const evaluation = await evalOf(res.json<Json>()['EvalID']);
    expect(evaluation['FailedTGAllocs']['g']).toMatchObject({ NodesEvaluated: 1, NodesFiltered: 1 });
    expect(evaluation['FailedTGAllocs']['g']['ConstraintFiltered']).toEqual({ [`${l} ${op} ${r}`]: 1 });
    expect((await evalOf(evaluation['BlockedEval']))['Status']).toBe('blocked');
    expect((await call(s.socket, 'GET', `/v1/job/${id}/allocations`)).json()).toEqual([]);
  });

  it('interpolates ${meta.KEY} and ${node.class} in a task\'s config, and a template reads them from env', async () => {
    const body = mockJob('sees-meta', { t: { run_for: '1h', stdout_string: 'rack=${meta.rack} zone=${meta.zone.name} class=${node.class}' } });
    (body.Job.TaskGroups[0]!.Tasks[0] as Json)['Templates'] = [{ EmbeddedTmpl: '{{ env "meta.rack" }}/{{ env "node.class" }}', DestPath: 'local/node.txt', ChangeMode: 'noop', Splay: 0, Wait: { Min: 0, Max: 0 } }];
    const alloc = await runJob(s, body);
    const logs = await until(async () => (await call(s.socket, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=t&type=stdout&plain=true`)).text, (t) => t.includes('rack='), 'the task\'s stdout');
    expect(logs).toContain('rack=r7 zone=eu-west class=gpu');
    const rendered = (await call(s.socket, 'GET', `/v1/client/fs/cat/${alloc.ID}?path=t/local/node.txt`)).text;
    expect(rendered).toBe('r7/gpu');
  });
});

describe('an agent started again with the meta a blocked job asks for', { timeout: SUITE_TIMEOUT }, () => {
  afterAll(cleanUp);

  it('places the job its last start filtered out, as Nomad unblocks evaluations when a node changes', async () => {
    const before = await serve();
    const body = mockJob('waits-for-rack', undefined, { Constraints: [{ LTarget: '${meta.rack}', RTarget: 'r7', Operand: '=' }] });
    const res = (await call(before.socket, 'PUT', '/v1/jobs', body)).json<Json>();
    const evaluation = (await call(before.socket, 'GET', `/v1/evaluation/${res['EvalID']}`)).json<Json>();
    expect(evaluation['FailedTGAllocs']['g']['ConstraintFiltered']).toEqual({ '${meta.rack} = r7': 1 });
    await before.stop();

    const after = await serve(before.dataDir, undefined, { api: { nodeMeta: { rack: 'r7' } } });
    const [alloc] = await until(async () => (await call(after.socket, 'GET', '/v1/job/waits-for-rack/allocations')).json<Json[]>(), (l) => l[0]?.['ClientStatus'] === 'running', 'the job placed');
    expect(alloc!['NodeID']).toBe((await call(after.socket, 'GET', '/v1/nodes')).json<Json[]>()[0]!['ID']);
    expect((await call(after.socket, 'GET', `/v1/evaluation/${evaluation['BlockedEval']}`)).json<Json>()['Status']).toBe('canceled');
  });
});
