/**
 * Nomad's dynamic node metadata (src/api/node-meta.ts, routes/node-meta.ts, `allocrun node meta`): keys set and
 * unset on a running agent, durable before the answer, laid over `--meta`, read by placement (a job blocked on a
 * `${meta.*}` constraint is placed once the key is set) and by allocations placed after, kept across a restart.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { loadDynamicNodeMeta, mergedNodeMeta, nodeMetaApplyProblem } from '../../src/api/node-meta.ts';
import { metaChanges } from '../../src/cli/node.ts';
import { StoreDamagedError } from '../../src/state/agent-store.ts';
import { runCli } from '../cli/spawn-cli.ts';
import { call, waitForAllocs } from './agent-process.ts';
import { cleanUp, freshDir, mockJob, serve, until } from './in-process-agent.ts';

afterAll(cleanUp);

describe("an apply's Meta (Nomad's NodeMetaApplyRequest.Validate)", () => {
  it.each<[string, unknown, string | undefined]>([
    ['keys set and unset', { ready: '1', 'rack.row': 'b', gone: null, 'with-dash_1': '' }, undefined],
    ['none at all', undefined, 'missing required Meta object'],
    ['an empty object', {}, 'missing required Meta object'],
    ['an empty key', { '': 'x' }, 'metadata keys must not be empty'],
    ['a key that is no identifier', { '1abc': 'x' }, '"1abc" is invalid; metadata keys must be valid dotted hcl identifiers'],
    ['an empty part of a dotted key', { 'a..b': 'x' }, '"a..b" is invalid; metadata keys must be valid dotted hcl identifiers'],
    ['a key with a space', { 'a b': 'x' }, '"a b" is invalid; metadata keys must be valid dotted hcl identifiers'],
    ['a number for a value', { a: 1 }, 'Meta["a"]: expected a string, or null to unset the key, got 1'],
    ['a list for Meta', ['a'], 'Meta: expected an object of keys to strings or null, got ["a"]'],
  ])('%s', (_, meta, problem) => {
    expect(nodeMetaApplyProblem(meta)).toBe(problem);
  });
});

describe('the merged meta and the command line', () => {
  it('lays the dynamic keys over the static ones, a null unsetting one', () => {
    expect(mergedNodeMeta({ rack: 'r1', zone: 'a' }, { zone: null, ready: '1', never: null })).toEqual({ rack: 'r1', ready: '1' });
    expect(mergedNodeMeta({ rack: 'r1' }, {})).toEqual({ rack: 'r1' });
  });

  it("reads key=value pairs as Nomad's CLI does, a bare key as empty, and --unset's keys as null", () => {
    expect(metaChanges(['a=1', 'b=x=y', 'c'], 'd,,e')).toEqual({ a: '1', b: 'x=y', c: '', d: null, e: null });
    expect(metaChanges([], undefined)).toEqual({});
  });

  it('names a damaged stored value, never reading it as empty', () => {
    const store = { path: '/data/agent.mdb', get: () => ['not', 'meta'] } as unknown as Parameters<typeof loadDynamicNodeMeta>[0];
    expect(() => loadDynamicNodeMeta(store)).toThrow(StoreDamagedError);
    expect(() => loadDynamicNodeMeta(store)).toThrow(/meta\/nodeMetaDynamic: expected the node's dynamic meta/);
  });
});

type MetaAnswer = { Meta: Record<string, string>; Dynamic: Record<string, string | null>; Static: Record<string, string> };

describe('an agent started with --meta rack=r1 --meta zone=a', () => {
  it('applies keys over the API and the CLI, places what waited on them, and keeps them across a restart', async () => {
    const dataDir = freshDir();
    const opts = { api: { nodeMeta: { rack: 'r1', zone: 'a' } } };
    let s = await serve(dataDir, undefined, opts);
    const read = async () => (await call(s.socket, 'GET', '/v1/client/metadata')).json() as MetaAnswer;
    expect(await read()).toEqual({ Meta: { rack: 'r1', zone: 'a' }, Dynamic: {}, Static: { rack: 'r1', zone: 'a' } });

    // A job for nodes that are ready: nothing is placed yet.
    const job = mockJob('web', { t: { run_for: '1h', stdout_string: 'ready=${meta.ready}' } }, { Constraints: [{ LTarget: '${meta.ready}', RTarget: '1', Operand: '=' }] });
    // A short kill timeout: the restored task is stopped by it at the end.
    Object.assign(job.Job.TaskGroups[0]!.Tasks[0]!, { KillTimeout: 100e6 });
    expect((await call(s.socket, 'PUT', '/v1/jobs', job)).status).toBe(200);
    await until(async () => (await call(s.socket, 'GET', '/v1/job/web/evaluations')).json() as { Status: string }[], (l) => l.some((e) => e.Status === 'blocked'), 'a blocked evaluation');
    expect((await call(s.socket, 'GET', '/v1/job/web/allocations')).json()).toEqual([]);

    const nodeId = ((await call(s.socket, 'GET', '/v1/nodes')).json() as { ID: string }[])[0]!.ID;
    const indexBefore = ((await call(s.socket, 'GET', `/v1/node/${nodeId}`)).json() as { ModifyIndex: number }).ModifyIndex;
    const applied = await call(s.socket, 'POST', '/v1/client/metadata', { NodeID: nodeId, Meta: { ready: '1', zone: null } });
    expect(applied.status, applied.text).toBe(200);
    expect(applied.json()).toEqual({ Meta: { rack: 'r1', ready: '1' }, Dynamic: { ready: '1', zone: null }, Static: { rack: 'r1', zone: 'a' } });
    const node = (await call(s.socket, 'GET', `/v1/node/${nodeId}`)).json() as { Meta: Record<string, string>; ModifyIndex: number };
    expect(node.Meta).toEqual({ rack: 'r1', ready: '1' });
    expect(node.ModifyIndex).toBeGreaterThan(indexBefore);

    // The blocked job is placed, and its task sees the node's new meta.
    const [alloc] = await waitForAllocs(s.socket, '/v1/job/web/allocations', (l) => l[0]?.ClientStatus === 'running');
    const logs = await until(async () => (await call(s.socket, 'GET', `/v1/client/fs/logs/${alloc!.ID}?task=t&type=stdout&plain=true`)).text, (t) => t.includes('ready='), 'the task output');
    expect(logs).toContain('ready=1');

    // Refusals: Nomad's words, nothing applied.
    const bad = await call(s.socket, 'POST', '/v1/client/metadata', { Meta: { '9lives': 'x' } });
    expect([bad.status, bad.text]).toEqual([400, '"9lives" is invalid; metadata keys must be valid dotted hcl identifiers']);
    expect((await call(s.socket, 'POST', '/v1/client/metadata', { NodeID: 'f0000000-0000-4000-8000-000000000000', Meta: { a: 'b' } })).status).toBe(404);

    // The CLI: one more key, then the three sections.
    const apply = await runCli(['node', 'meta', 'apply', '--data-dir', dataDir, '-unset', 'ready', 'owner=ops'], { timeoutMs: 60_000 });
    expect(apply.code, apply.stderr).toBe(0);
    const shown = await runCli(['node', 'meta', 'read', '--data-dir', dataDir], { timeoutMs: 60_000 });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toBe(['All Meta', 'owner = ops', 'rack  = r1', '', 'Dynamic Meta', 'owner = ops', 'ready = <unset>', 'zone  = <unset>', '', 'Static Meta', 'rack = r1', 'zone = a', ''].join('\n'));

    // Durable: a restarted agent has the same meta, the unset keys still unset.
    const before = await read();
    await s.stop();
    s = await serve(dataDir, undefined, opts);
    expect(await read()).toEqual(before);
    await s.stop();
  });
});
