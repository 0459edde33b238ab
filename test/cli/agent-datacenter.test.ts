/**
 * `allocrun agent --dc NAME` (src/cli/agent-datacenter.ts): the node's datacenter, Nomad's `-dc`. Its refusals as
 * rows, one refused start that leaves no data dir, and one real agent whose node and tasks are in the datacenter.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentDatacenter } from '../../src/cli/agent-datacenter.ts';
import { call, startAgent } from '../api/agent-process.ts';
import { cleanUp, freshDir } from '../api/in-process-agent.ts';
import { runCli } from './spawn-cli.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

afterAll(cleanUp);

describe('agentDatacenter', () => {
  it.each([
    [undefined, 'dc1'],
    ['east-1', 'east-1'],
    ['-dash', '-dash'],
  ])('--dc %j is %j', (flag, dc) => {
    expect(agentDatacenter(flag)).toBe(dc);
  });

  it.each([
    ['east*', /Datacenter contains invalid characters \(null or '\*'\)/],
    ['a\0b', /Datacenter contains invalid characters/],
    ['', /--dc must name a datacenter/],
  ])('refuses --dc %j', (flag, why) => {
    expect(() => agentDatacenter(flag)).toThrow(why);
  });
});

describe('allocrun agent --dc', { timeout: 120_000 }, () => {
  it('refuses a glob before it makes the data dir', async () => {
    const dir = join(freshDir(), 'new');
    const res = await runCli(['agent', '--data-dir', dir, '-dc', 'east*'], { timeoutMs: 60_000 });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("Datacenter contains invalid characters (null or '*')");
    expect(existsSync(dir)).toBe(false);
  });

  it('puts the node in the datacenter: the node and the agent say so', async () => {
    const agent = await startAgent({ args: ['--dc', 'east-1'] });
    try {
      const [node] = (await call(agent.socket, 'GET', '/v1/nodes')).json<Json[]>();
      expect(node!['Datacenter']).toBe('east-1');
      expect((await call(agent.socket, 'GET', '/v1/agent/self')).json<Json>()['config']['Datacenter']).toBe('east-1');
    } finally {
      await agent.stop();
    }
  });
});
