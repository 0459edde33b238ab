/**
 * `allocrun service list|info` against a real agent running the example web job as it is
 * (examples/web.nomad): two python3 HTTP servers on dynamic ports, registered as the Nomad-native service
 * "web", and answering where `service info` says they are.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startAgent, waitForAllocs, type AgentProcess } from '../api/agent-process.ts';
import { ROOT, runCli } from './spawn-cli.ts';

let agent: AgentProcess;
const file = join(ROOT, 'examples/web.nomad');
const cli = (...args: string[]) => runCli([...args, '--data-dir', agent.dataDir], { timeoutMs: 90_000 });

beforeAll(async () => {
  agent = await startAgent();
}, 60_000);
afterAll(async () => {
  await agent?.stop();
}, 90_000);

/** GET http://address/ until it answers 200. */
async function answers(address: string): Promise<boolean> {
  const end = Date.now() + 30_000;
  while (Date.now() < end) {
    const ok = await fetch(`http://${address}/`).then((r) => r.ok, () => false);
    if (ok) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

describe('allocrun service against a running agent', { timeout: 120_000 }, () => {
  it('runs the example web job, lists its service and shows where each instance answers', async () => {
    const run = await cli('job', 'run', file);
    expect(run.code, run.stderr).toBe(0);
    const allocs = await waitForAllocs(agent.socket, '/v1/job/web/allocations', (l) => l.filter((a) => a.ClientStatus === 'running').length === 2);
    const end = Date.now() + 30_000;
    while ((await call(agent.socket, 'GET', '/v1/service/web')).json<unknown[]>().length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 100));

    const list = await cli('service', 'list');
    expect(list.code, list.stderr).toBe(0);
    // The tag interpolated from the job's meta (version = "1").
    expect(list.stdout).toMatch(/^Service Name\s+Tags\nweb\s+\[v1\]\n$/);

    const info = await cli('service', 'info', 'web');
    expect(info.code, info.stderr).toBe(0);
    const lines = info.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^Job ID\s+Address\s+Tags\s+Node ID\s+Alloc ID$/);
    expect(lines).toHaveLength(3);
    for (const a of allocs) expect(info.stdout).toContain(a.ID.slice(0, 8));
    const addresses = lines.slice(1).map((l) => /^web\s+(127\.0\.0\.1:\d+)\s+\[v1\]/.exec(l)![1]!);
    for (const address of addresses) expect(await answers(address), address).toBe(true);
  });

  it('shows every field with --verbose and the API\'s JSON with --json', async () => {
    const [verbose, json] = await Promise.all([cli('service', 'info', 'web', '--verbose'), cli('service', 'info', 'web', '--json')]);
    expect(verbose.stdout).toMatch(/ID\s+= _nomad-task-[0-9a-f-]+-group-app-web-http\n/);
    expect(verbose.stdout).toMatch(/Address\s+= 127\.0\.0\.1:\d+/);
    const regs = JSON.parse(json.stdout) as { ServiceName: string; Port: number }[];
    expect(regs.map((r) => r.ServiceName)).toEqual(['web', 'web']);
    expect(regs.every((r) => r.Port >= 20000 && r.Port <= 32000)).toBe(true);
  });

  it('says so when a service has no registrations, and refuses a missing name', async () => {
    const none = await cli('service', 'info', 'nothing');
    expect(none.code).toBe(0);
    expect(none.stdout).toBe('No service registrations found\n');
    const missing = await cli('service', 'info');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/service info/);
  });
});
