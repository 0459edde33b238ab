/**
 * Issue 27 (ports), end to end with a real agent process and real tasks: a group's network block gives each
 * allocation its host ports, the task listens on ${NOMAD_PORT_http} and answers there; a static port already
 * held blocks the placement with its reason; an agent restarted on its data dir keeps every port.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startCli } from '../cli/spawn-cli.ts';
import { call, freePort, startAgent, waitForAllocs, type AgentProcess, type Alloc } from './agent-process.ts';

let agent: AgentProcess | undefined;
let scratch: string | undefined;
afterAll(async () => {
  await agent?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
}, 60_000);

/** A tiny HTTP server: listens on its first argument and answers with the port variables it was given. */
const SERVER = `
const vars = Object.fromEntries(Object.entries(process.env).filter(([k]) => /^NOMAD_(HOST_|ALLOC_)?(PORT|IP|ADDR)_/.test(k)));
require('node:http').createServer((req, res) => res.end(JSON.stringify(vars))).listen(Number(process.argv[2]));
`;

const hcl = (id: string, count: number, network: string, label: string, server: string) => `job "${id}" {
  group "app" {
    count = ${count}
    network {
${network}
    }
    task "server" {
      driver = "raw_exec"
      kill_timeout = "1s"
      config {
        command = ${JSON.stringify(process.execPath)}
        args    = [${JSON.stringify(server)}, "\${NOMAD_PORT_${label}}"]
      }
    }
  }
}
`;

async function register(to: AgentProcess, text: string): Promise<{ EvalID: string }> {
  const parsed = await call(to.socket, 'POST', '/v1/jobs/parse', { JobHCL: text, Canonicalize: true });
  expect(parsed.status, parsed.text).toBe(200);
  const res = await call(to.socket, 'PUT', '/v1/jobs', { Job: parsed.json() });
  expect(res.status, res.text).toBe(200);
  return res.json();
}


interface PortMapping { Label: string; Value: number; To: number; HostIP: string }
const portsOf = async (to: AgentProcess, a: Alloc): Promise<PortMapping[]> => (await call(to.socket, 'GET', `/v1/allocation/${a.ID}`)).json().AllocatedResources.Shared.Ports;
const running = (n: number) => (l: Alloc[]) => l.filter((a) => a.DesiredStatus === 'run' && a.ClientStatus === 'running').length === n;

/** GET http://127.0.0.1:port/ until the task's server answers (it starts after the task does). */
async function fetchUntilUp(port: number): Promise<{ status: number; body: Record<string, string> }> {
  const end = Date.now() + 20_000;
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/`);
      return { status: res.status, body: (await res.json()) as Record<string, string> };
    } catch (err) {
      if (Date.now() > end) throw new Error(`nothing answered on 127.0.0.1:${port}: ${String(err)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

describe('ports of a real agent', { timeout: 120_000 }, () => {
  it('runs servers on their ports, refuses a taken static port, and keeps the ports across a restart', async () => {
    scratch = await mkdtemp(join(tmpdir(), 'allocrun-ports-'));
    const server = join(scratch, 'server.cjs');
    await writeFile(server, SERVER);
    agent = await startAgent();

    // Two instances, each on its own dynamic port, each answering there with the variables Nomad sets.
    await register(agent, hcl('web', 2, '      port "http" {}', 'http', server));
    const web = await waitForAllocs(agent.socket, '/v1/job/web/allocations', running(2));
    const webPorts = await Promise.all(web.map((a) => portsOf(agent!, a)));
    expect(webPorts[0]![0]!.Value).not.toBe(webPorts[1]![0]!.Value);
    for (const [p] of webPorts) {
      expect(p!.Value >= 20000 && p!.Value <= 32000).toBe(true);
      const answer = await fetchUntilUp(p!.Value);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        NOMAD_PORT_http: String(p!.Value), NOMAD_ALLOC_PORT_http: String(p!.Value), NOMAD_HOST_PORT_http: String(p!.Value),
        NOMAD_IP_http: '127.0.0.1', NOMAD_HOST_IP_http: '127.0.0.1',
        NOMAD_ADDR_http: `127.0.0.1:${p!.Value}`, NOMAD_HOST_ADDR_http: `127.0.0.1:${p!.Value}`,
      });
    }

    // A static port, then a second job asking for the same one: blocked, with the reason, nothing placed.
    const port = await freePort();
    await register(agent, hcl('admin', 1, `      port "admin" {\n        static = ${port}\n      }`, 'admin', server));
    await waitForAllocs(agent.socket, '/v1/job/admin/allocations', running(1));
    expect((await fetchUntilUp(port)).status).toBe(200);
    const clash = await register(agent, hcl('clash', 1, `      port "admin" {\n        static = ${port}\n      }`, 'admin', server));
    const evaluation = (await call(agent.socket, 'GET', `/v1/evaluation/${clash.EvalID}`)).json();
    // Nomad's shape: the registration's evaluation completes with the group's failure; a blocked one waits.
    expect(evaluation).toMatchObject({ Status: 'complete', BlockedEval: expect.any(String), FailedTGAllocs: { app: { DimensionExhausted: { [`network: reserved port collision admin=${port}`]: 1 } } } });
    expect((await call(agent.socket, 'GET', `/v1/evaluation/${evaluation.BlockedEval}`)).json()).toMatchObject({ Status: 'blocked', PreviousEval: clash.EvalID });
    expect((await call(agent.socket, 'GET', '/v1/job/clash/allocations')).json()).toEqual([]);
    expect((await call(agent.socket, 'GET', '/v1/job/clash/summary')).json().Summary.app).toMatchObject({ Queued: 1 });

    // SIGTERM: the agent goes, its tasks stay; the next agent on the data dir knows every allocation's ports.
    agent.cli.child.kill('SIGTERM');
    await agent.cli.exited;
    const next = startCli(['agent', '--data-dir', agent.dataDir, '--json'], { timeoutMs: 20 * 60_000 });
    agent = { ...agent, cli: next };
    await next.waitFor(/API listening on \//);
    const after = await waitForAllocs(agent.socket, '/v1/job/web/allocations', running(2));
    expect(Object.fromEntries(await Promise.all(after.map(async (a) => [a.ID, await portsOf(agent!, a)])))).toEqual(Object.fromEntries(web.map((a, i) => [a.ID, webPorts[i]])));
    for (const [p] of webPorts) expect((await fetchUntilUp(p!.Value)).status).toBe(200);
    const again = await register(agent, hcl('clash2', 1, `      port "admin" {\n        static = ${port}\n      }`, 'admin', server));
    const againEval = (await call(agent.socket, 'GET', `/v1/evaluation/${again.EvalID}`)).json();
    expect((await call(agent.socket, 'GET', `/v1/evaluation/${againEval.BlockedEval}`)).json()).toMatchObject({ Status: 'blocked' });
  });
});
