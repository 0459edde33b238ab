/**
 * `allocrun agent --meta KEY=VALUE --node-class NAME` (src/cli/agent-node-flags.ts): Nomad's `-meta` and
 * `-node-class`. The flags' readings and refusals as rows (keys as Nomad's agent checks Client.Meta), one refused
 * start that leaves no data dir, and one real agent whose node carries them and whose task interpolates them.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nodeSettingsFromFlags } from '../../src/cli/agent-node-flags.ts';
import { call, startAgent, waitForAllocs } from '../api/agent-process.ts';
import { cleanUp, freshDir, mockJob, until } from '../api/in-process-agent.ts';
import { runCli } from './spawn-cli.ts';

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
