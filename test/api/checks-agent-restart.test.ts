/**
 * Checks across an agent restart (a real agent process each time): the agent leaves each check's last
 * status in its store; the allocation's checks start again in the agent that takes over the data dir,
 * report through its API, and their check_restart still restarts the task when its server turns sick.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startCli } from '../cli/spawn-cli.ts';
import { call, startAgent, waitForAllocs, type AgentProcess } from './agent-process.ts';
import { until } from './in-process-agent.ts';
import { loadCheckResults } from '../../src/checks/check-persistence.ts';
import { AgentStore } from '../../src/state/agent-store.ts';

let agent: AgentProcess | undefined;
afterAll(async () => {
  await agent?.stop();
}, 60_000);

/** Answers 200 until the trigger file appears; then removes it and answers 500 for the rest of its life. */
const server = (trigger: string) => `
const fs = require('node:fs');
let sick = false;
require('node:http').createServer((q, s) => {
  if (fs.existsSync(${JSON.stringify(trigger)})) { fs.rmSync(${JSON.stringify(trigger)}, { force: true }); sick = true; }
  s.statusCode = sick ? 500 : 200;
  s.end(sick ? 'sick' : 'ok');
}).listen(Number(process.argv[2]));
`;

const job = (script: string) => `job "kept" {
  group "app" {
    # Short, so the check_restart below is seen within the wait (a service job's default delay is 15s + jitter).
    restart {
      delay = "1s"
    }
    network {
      port "http" {}
    }
    task "server" {
      driver = "raw_exec"
      kill_timeout = "1s"
      config {
        command = ${JSON.stringify(process.execPath)}
        args    = [${JSON.stringify(script)}, "\${NOMAD_PORT_http}"]
      }
      service {
        name     = "kept"
        port     = "http"
        provider = "nomad"
        check {
          name     = "alive"
          type     = "http"
          path     = "/"
          interval = "1s"
          timeout  = "1s"
          check_restart {
            limit = 2
            grace = "3s"
          }
        }
      }
    }
  }
}
`;

type Result = { Status: string; Output: string; Task?: string };
type TaskState = { Restarts: number; State: string; Events: { Type: string; RestartReason?: string; DisplayMessage?: string }[] };

describe('checks of an agent restarted on its data dir', { timeout: 180_000 }, () => {
  it('start again in the new agent, and check_restart still restarts a sick task', async () => {
    agent = await startAgent();
    const script = join(agent.dataDir, 'server.cjs');
    const trigger = join(agent.dataDir, 'sick');
    await writeFile(script, server(trigger));
    const parsed = await call(agent.socket, 'POST', '/v1/jobs/parse', { JobHCL: job(script), Canonicalize: true });
    expect(parsed.status, parsed.text).toBe(200);
    expect((await call(agent.socket, 'PUT', '/v1/jobs', { Job: parsed.json() })).status).toBe(200);
    const [alloc] = await waitForAllocs(agent.socket, '/v1/job/kept/allocations', (l) => l.some((a) => a.ClientStatus === 'running'));
    const checks = () => call(agent!.socket, 'GET', `/v1/client/allocation/${alloc!.ID}/checks`).then((r) => Object.values(r.json<Record<string, Result>>()));
    await until(checks, (c) => c[0]?.Status === 'success', 'a passing check');

    // SIGTERM: the agent goes, its task stays; a new agent takes over and runs the check again.
    agent.cli.child.kill('SIGTERM');
    await agent.cli.exited;
    // The agent left the check's last status in its store, for the next one to start from.
    const left = AgentStore.open(agent.dataDir, { readOnly: true });
    try {
      expect(loadCheckResults(left, (m) => expect.fail(m)).get(alloc!.ID)?.map((r) => [r.Check, r.Status])).toEqual([['alive', 'success']]);
    } finally {
      await left.close();
    }
    const next = startCli(['agent', '--data-dir', agent.dataDir, '--json'], { timeoutMs: 20 * 60_000 });
    agent = { ...agent, cli: next };
    await next.waitFor(/API listening on \//);
    const [resumed] = await until(checks, (c) => c[0]?.Status === 'success', 'the check passing under the new agent');
    expect(resumed).toMatchObject({ Output: 'nomad: http ok', Task: 'server' });

    // The server turns sick: two failures and the new agent restarts the task, counted, with Nomad's reason.
    await writeFile(trigger, '');
    const task = () => call(agent!.socket, 'GET', `/v1/allocation/${alloc!.ID}`).then((r) => r.json<{ TaskStates: { server: TaskState } }>().TaskStates.server);
    const restarted = await until(task, (t) => t.Restarts === 1 && t.State === 'running', 'the restarted task');
    expect(restarted.Events.find((e) => e.Type === 'Restart Signaled')?.DisplayMessage).toBe('healthcheck: check "alive" unhealthy');
    await until(checks, (c) => c[0]?.Status === 'success', 'the check passing after the restart');
  });
});
