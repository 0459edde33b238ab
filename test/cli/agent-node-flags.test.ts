/**
 * `allocrun agent --meta KEY=VALUE --node-class NAME --node-pool NAME` (src/cli/agent-node-flags.ts): Nomad's `-meta`,
 * `-node-class` and `-node-pool`. The flags' readings and refusals as rows (keys as Nomad's agent checks Client.Meta,
 * the pool as it checks Client.NodePool), refused starts that leave no data dir, one real agent whose node carries
 * them and whose task interpolates them, and one whose node pool holds across a restart with the flag.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nodeSettingsFromFlags } from '../../src/cli/agent-node-flags.ts';
import { call, startAgent, waitForAllocs, type AgentProcess } from '../api/agent-process.ts';
import { cleanUp, freshDir, mockJob, until } from '../api/in-process-agent.ts';
import { runCli, startCli } from './spawn-cli.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

afterAll(cleanUp);

describe('nodeSettingsFromFlags', () => {
  it.each([
    [{}, { nodeMeta: {} }],
    [{ meta: ['rack=r7'] }, { nodeMeta: { rack: 'r7' } }],
    [{ meta: ['zone.name=eu-west', 'a-b_c=1'] }, { nodeMeta: { 'zone.name': 'eu-west', 'a-b_c': '1' } }],
    [{ meta: ['empty='] }, { nodeMeta: { empty: '' } }],
    [{ meta: ['url=http://x/?a=b'] }, { nodeMeta: { url: 'http://x/?a=b' } }],
    [{ meta: ['rack=r1', 'rack=r2'] }, { nodeMeta: { rack: 'r2' } }],
    [{ 'node-class': 'gpu' }, { nodeClass: 'gpu', nodeMeta: {} }],
    [{ 'node-pool': 'gpu' }, { nodePool: 'gpu', nodeMeta: {} }],
    [{ 'node-pool': 'default' }, { nodePool: 'default', nodeMeta: {} }],
    [{ 'node-pool': 'Gpu_2-a' }, { nodePool: 'Gpu_2-a', nodeMeta: {} }],
    [{ 'node-pool': 'p'.repeat(128) }, { nodePool: 'p'.repeat(128), nodeMeta: {} }],
  ])('%j reads as %j', (flags, settings) => {
    expect(nodeSettingsFromFlags(flags)).toEqual(settings);
  });

  it('keeps a key named __proto__ as plain data', () => {
    const { nodeMeta } = nodeSettingsFromFlags({ meta: ['__proto__=x'] });
    expect(Object.getPrototypeOf(nodeMeta)).toBe(Object.prototype);
    expect(JSON.stringify(nodeMeta)).toBe('{"__proto__":"x"}');
  });

  it.each([
    [{ meta: ['rack'] }, /--meta "rack": expected KEY=VALUE/],
    [{ meta: ['=r7'] }, /--meta "=r7": invalid Client.Meta key ""/],
    [{ meta: ['invalid..key=v'] }, /--meta "invalid..key=v": invalid Client.Meta key "invalid..key"/],
    [{ meta: ['.invalid=v'] }, /invalid Client.Meta key "\.invalid"/],
    [{ meta: ['invalid.=v'] }, /invalid Client.Meta key "invalid\."/],
    [{ 'node-class': '' }, /--node-class must name a class/],
    [{ 'node-class': 'a\0b' }, /--node-class "a\\u0000b": contains a null character/],
    [{ 'node-pool': 'all' }, /--node-pool "all": Invalid node pool: node is not allowed to register in node pool "all"/],
    [{ 'node-pool': '' }, /--node-pool "": Invalid node pool: invalid name "", must match regex \^\[a-zA-Z0-9-_\]\{1,128\}\$/],
    [{ 'node-pool': 'gpu pool' }, /invalid name "gpu pool"/],
    [{ 'node-pool': 'p'.repeat(129) }, /invalid name "p{129}"/],
    [{ 'node-pool': '__proto__!' }, /invalid name "__proto__!"/],
  ])('refuses %j', (flags, why) => {
    expect(() => nodeSettingsFromFlags(flags)).toThrow(why);
  });
});

describe('allocrun agent --meta, --node-class', { timeout: 120_000 }, () => {
  it('refuses a bad meta key before it makes the data dir', async () => {
    const dir = join(freshDir(), 'new');
    const res = await runCli(['agent', '--data-dir', dir, '-meta', 'rack=r7', '-meta', 'invalid..key=v'], { timeoutMs: 60_000 });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('invalid Client.Meta key "invalid..key"');
    expect(existsSync(dir)).toBe(false);
  });

  it('gives the node its class and meta: the node shows them, a task interpolates them', async () => {
    const agent = await startAgent({ args: ['-meta', 'rack=r7', '--meta', 'zone.name=eu-west', '-node-class', 'gpu'] });
    try {
      const [stub] = (await call(agent.socket, 'GET', '/v1/nodes')).json<Json[]>();
      const node = (await call(agent.socket, 'GET', `/v1/node/${stub!['ID']}`)).json<Json>();
      expect([node['NodeClass'], node['Meta']]).toEqual(['gpu', { rack: 'r7', 'zone.name': 'eu-west' }]);
      const body = mockJob('meta-echo', { t: { run_for: '1h', stdout_string: 'rack=${meta.rack} zone=${meta.zone.name} class=${node.class}' } }, { Constraints: [{ LTarget: '${meta.rack}', RTarget: 'r7', Operand: '=' }] });
      expect((await call(agent.socket, 'PUT', '/v1/jobs', body)).status).toBe(200);
      const [alloc] = await waitForAllocs(agent.socket, '/v1/job/meta-echo/allocations', (l) => l.some((a) => a.ClientStatus === 'running'));
      const out = await until(async () => (await call(agent.socket, 'GET', `/v1/client/fs/logs/${alloc!.ID}?task=t&type=stdout&plain=true`)).text, (t) => t.includes('rack='), "the task's stdout", 60_000);
      expect(out).toContain('rack=r7 zone=eu-west class=gpu');
    } finally {
      await agent.stop();
    }
  });
});

describe('allocrun agent --node-pool', { timeout: 120_000 }, () => {
  it('refuses the pool all before it makes the data dir, as Nomad\'s agent refuses it', async () => {
    const dir = join(freshDir(), 'new');
    const res = await runCli(['agent', '--data-dir', dir, '--node-pool', 'all'], { timeoutMs: 60_000 });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('Invalid node pool: node is not allowed to register in node pool "all"');
    expect(existsSync(dir)).toBe(false);
  });

  it('puts the node in the pool, which places the pool\'s jobs, and keeps it there across a restart with the flag', async () => {
    const agent = await startAgent({ args: ['--node-pool', 'gpu'] });
    let restarted: AgentProcess | undefined;
    try {
      const node = (await call(agent.socket, 'GET', '/v1/nodes')).json<Json[]>()[0]!;
      expect(node['NodePool']).toBe('gpu');
      expect((await call(agent.socket, 'PUT', '/v1/jobs', mockJob('trainer', undefined, { NodePool: 'gpu' }))).status).toBe(200);
      const [alloc] = await waitForAllocs(agent.socket, '/v1/job/trainer/allocations', (l) => l.some((a) => a.ClientStatus === 'running'));
      agent.cli.child.kill('SIGTERM');
      await agent.cli.exited;
      // The same data dir, the same flag: the node is in gpu again, the pool exists, its job's allocation runs on.
      const cli = startCli(['agent', '--data-dir', agent.dataDir, '--json', '--node-pool', 'gpu'], { timeoutMs: 20 * 60_000 });
      await cli.waitFor(/API listening on \//);
      restarted = { ...agent, cli, stop: agent.stop };
      expect((await call(agent.socket, 'GET', `/v1/node/${node['ID']}`)).json<Json>()['NodePool']).toBe('gpu');
      expect((await call(agent.socket, 'GET', '/v1/node/pools')).json<Json[]>().map((p) => p['Name'])).toEqual(['all', 'default', 'gpu']);
      const [after] = await waitForAllocs(agent.socket, '/v1/job/trainer/allocations', (l) => l.some((a) => a.ClientStatus === 'running'));
      expect(after!.ID).toBe(alloc!.ID);
      expect((await call(agent.socket, 'GET', '/v1/node/pool/gpu/jobs')).json<Json[]>().map((j) => j['ID'])).toEqual(['trainer']);
    } finally {
      await (restarted ?? agent).stop();
    }
  });
});
