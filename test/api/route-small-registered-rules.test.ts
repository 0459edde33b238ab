/**
 * The small routes (src/api/routes/{agent,cluster,nodes,operator,metrics,alloc-fs,alloc-checks}.ts) as they are
 * registered: each answers through its own handler, and each refuses what its schema refuses, naming the field.
 * Every test serves its own agent inside the test, not in a beforeAll: a route is registered when its agent
 * starts, and Stryker runs a registration's mutants only against the tests that were running when it ran
 * (route-cluster-node-rules and route-alloc-fs-rules pin the answers themselves over one agent per file).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { call } from './agent-process.ts';
import { cleanUp, mockJob, runJob, serve, SUITE_TIMEOUT } from './in-process-agent.ts';

type Json = Record<string, any>;

afterEach(cleanUp);

/** Each path answered with `status`, its text matching `text` when given. */
async function expectAnswers(socket: { socketPath: string }, rows: [path: string, status: number, text?: RegExp][]): Promise<void> {
  for (const [path, status, text] of rows) {
    const res = await call(socket, 'GET', path);
    expect([path, res.status], res.text).toEqual([path, status]);
    if (text) expect(res.text).toMatch(text);
  }
}

describe('the small routes as registered', { timeout: SUITE_TIMEOUT }, () => {
  it('answer the agent, status, cluster, snapshot and metrics probes, and refuse a bad index or format by name', async () => {
    const s = await serve();
    expect((await call(s.socket, 'GET', '/v1/agent/health')).json<Json>()).toEqual({ client: { ok: true, message: 'ok' }, server: { ok: true, message: 'ok' } });
    expect((await call(s.socket, 'GET', '/v1/status/leader')).json<string>()).toBe(s.api.socketPath);
    expect((await call(s.socket, 'GET', '/v1/status/peers')).json<string[]>()).toEqual([s.api.socketPath]);
    expect((await call(s.socket, 'GET', '/v1/regions')).json<string[]>()).toEqual(['global']);
    await expectAnswers(s.socket, [
      ['/v1/operator/snapshot', 200],
      ['/v1/namespaces', 200],
      ['/v1/namespaces?index=x', 400, /^index: /],
      ['/v1/namespace/default', 200],
      ['/v1/namespace/default?index=x', 400, /^index: /],
      ['/v1/metrics?format=prometheus&format=prometheus', 400, /^format: /],
    ]);
  });

  it('answer the node routes, and refuse a bad flag, index or node_id by name', async () => {
    const s = await serve();
    const nodeId = String(s.store.get('meta', 'nodeId'));
    expect((await call(s.socket, 'GET', '/v1/nodes')).json<Json[]>().map((n) => n['ID'])).toEqual([nodeId]);
    const node = await call(s.socket, 'GET', `/v1/node/${nodeId}`);
    expect(node.json<Json>()['ID']).toBe(nodeId);
    // At its registration's index, the list too.
    expect(Number(node.headers['x-nomad-index'])).toBe(node.json<Json>()['CreateIndex']);
    expect(Number((await call(s.socket, 'GET', '/v1/nodes')).headers['x-nomad-index'])).toBe(node.json<Json>()['CreateIndex']);
    expect((await call(s.socket, 'GET', `/v1/node/${nodeId}/allocations`)).json<Json[]>()).toEqual([]);
    await expectAnswers(s.socket, [
      ['/v1/client/stats', 200],
      ['/v1/nodes?os=maybe', 400, /^os: /],
      [`/v1/node/${nodeId}?index=x`, 400, /^index: /],
      [`/v1/node/${nodeId}/allocations?index=x`, 400, /^index: /],
      [`/v1/client/stats?node_id=${nodeId}&node_id=other`, 400, /^node_id: /],
    ]);
  });

  it('answer an allocation\'s files and checks, and refuse an empty ID, a missing file or a bad offset by name', async () => {
    const s = await serve();
    const alloc = await runJob(s, mockJob('registered'));
    expect((await call(s.socket, 'GET', `/v1/client/fs/ls/${alloc.ID}`)).json<Json[]>().map((f) => f['Name'])).toContain('alloc');
    expect((await call(s.socket, 'GET', `/v1/client/fs/stat/${alloc.ID}`)).json<Json>()).toMatchObject({ Name: '/', IsDir: true });
    expect((await call(s.socket, 'GET', `/v1/client/allocation/${alloc.ID}/checks`)).json<Json>()).toEqual({});
    await expectAnswers(s.socket, [
      ['/v1/client/fs/ls/', 400, /^id: /],
      ['/v1/client/fs/stat/', 400, /^id: /],
      [`/v1/client/fs/cat/${alloc.ID}?path=`, 400, /^path: must name a file in the allocation directory/],
      [`/v1/client/fs/readat/${alloc.ID}?path=/alloc&offset=x`, 400, /^offset: /],
      [`/v1/client/fs/stream/${alloc.ID}?path=/alloc&origin=middle`, 400, /^origin: /],
      ['/v1/client/allocation//checks', 400, /^id: /],
    ]);
  });
});
