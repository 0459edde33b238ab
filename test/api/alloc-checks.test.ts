/**
 * Checks through the agent's API (issue 27, part 3): an HCL service job of a real HTTP server task with an
 * http check and `health_check = "checks"`. `GET /v1/client/allocation/:id/checks` answers Nomad's shape
 * (check ID → CheckQueryResult); the allocation turns healthy only min_healthy_time after its check first
 * passed, not when the task alone has run that long; a killed allocation has no checks left.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { call, freePort, waitForAllocs, type Alloc } from './agent-process.ts';
import { cleanUp, freshDir, serve, until, type Served } from './in-process-agent.ts';

afterEach(cleanUp, 60_000);

/** Answers 503 for its first `sickMs`, then 200: a server that takes a while to be ready. */
const SERVER = `
const started = Date.now();
require('node:http').createServer((q, s) => { s.statusCode = Date.now() - started < Number(process.argv[3]) ? 503 : 200; s.end('ready?'); }).listen(Number(process.argv[2]));
`;

const job = (script: string, sickMs: number) => `job "api-checks" {
  group "app" {
    network {
      port "http" {}
    }
    service {
      name     = "web"
      port     = "http"
      provider = "nomad"
      check {
        name     = "alive"
        type     = "http"
        path     = "/"
        interval = "1s"
        timeout  = "1s"
      }
    }
    update {
      health_check     = "checks"
      min_healthy_time = "2s"
      healthy_deadline = "1m"
    }
    task "server" {
      driver = "raw_exec"
      kill_timeout = "1s"
      config {
        command = ${JSON.stringify(process.execPath)}
        args    = [${JSON.stringify(script)}, "\${NOMAD_PORT_http}", "${sickMs}"]
      }
    }
  }
}
`;

async function register(s: Served, hcl: string): Promise<void> {
  const parsed = await call(s.socket, 'POST', '/v1/jobs/parse', { JobHCL: hcl, Canonicalize: true });
  expect(parsed.status, parsed.text).toBe(200);
  const res = await call(s.socket, 'PUT', '/v1/jobs', { Job: parsed.json() });
  expect(res.status, res.text).toBe(200);
}

type Result = { ID: string; Check: string; Group: string; Mode: string; Output: string; Service: string; Status: string; StatusCode?: number; Task?: string; Timestamp: number };
const checksOf = async (s: Served, id: string): Promise<Record<string, Result>> => {
  const res = await call(s.socket, 'GET', `/v1/client/allocation/${id}/checks`);
  expect(res.status, res.text).toBe(200);
  return res.json();
};

describe('checks through the API', { timeout: 120_000 }, () => {
  it("serves each check's latest result in Nomad's shape and holds deployment health until the checks have passed min_healthy_time", async () => {
    const dir = freshDir();
    const script = join(dir, 'server.cjs');
    await writeFile(script, SERVER);
    const s = await serve(dir);
    await register(s, job(script, 4_000));
    const [alloc] = await waitForAllocs(s.socket, '/v1/job/api-checks/allocations', (l) => l.some((a) => a.ClientStatus === 'running'));

    // Failing first (503 with the body as output), then passing.
    // (Before the server listens the check fails too, with the connection error: wait for its answer.)
    const failing = await until(() => checksOf(s, alloc!.ID), (c) => Object.values(c)[0]?.Status === 'failure' && Object.values(c)[0]?.StatusCode !== undefined, 'a failing check');
    expect(Object.values(failing)[0]).toMatchObject({ StatusCode: 503, Output: 'ready?' });
    const passing = await until(() => checksOf(s, alloc!.ID), (c) => Object.values(c)[0]?.Status === 'success', 'a passing check');
    const [id, result] = Object.entries(passing)[0]!;
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(result).toEqual({ ID: id, Check: 'alive', Group: 'api-checks.app[0]', Mode: 'healthiness', Output: 'nomad: http ok', Service: 'web', Status: 'success', StatusCode: 200, Timestamp: expect.any(Number) });
    expect(Math.abs(result.Timestamp - Date.now() / 1000)).toBeLessThan(30);

    // Healthy, but only min_healthy_time (2s) after the check passed: the server was sick for its first 4s,
    // so not before 6s after the task started (task states alone would have said healthy after 2s).
    const read = () => call(s.socket, 'GET', `/v1/allocation/${alloc!.ID}`).then((r) => r.json<{ DeploymentStatus?: { Healthy: boolean | null; Timestamp: string }; TaskStates: { server: { StartedAt: string } } }>());
    const healthy = await until(read, (a) => a.DeploymentStatus?.Healthy === true, 'a healthy allocation');
    const healthyAt = Date.parse(healthy.DeploymentStatus!.Timestamp);
    expect(healthyAt - Date.parse(healthy.TaskStates.server.StartedAt)).toBeGreaterThanOrEqual(4_000 + 2_000);
    const deployment = await until(() => call(s.socket, 'GET', '/v1/job/api-checks/deployment').then((r) => r.json<{ Status: string }>()), (d) => d.Status === 'successful', 'a successful deployment');
    expect(deployment.Status).toBe('successful');

    // Stopped: its checks are stopped and forgotten.
    const stop = await call(s.socket, 'DELETE', '/v1/job/api-checks');
    expect(stop.status, stop.text).toBe(200);
    await waitForAllocs(s.socket, '/v1/job/api-checks/allocations', (l) => l.every((a: Alloc) => a.ClientStatus !== 'running'));
    expect(await checksOf(s, alloc!.ID)).toEqual({});
    expect((await call(s.socket, 'GET', '/v1/client/allocation/nope/checks')).status).toBe(404);
  });

  it('runs examples/web.nomad: its python server passes its check and the allocation turns healthy', async () => {
    const s = await serve();
    const admin = await freePort();
    const text = (await readFile(new URL('../../examples/web.nomad', import.meta.url), 'utf8')).replace('static = 9901', `static = ${admin}`);
    await register(s, text);
    const allocs = await waitForAllocs(s.socket, '/v1/job/web/allocations', (l) => l.some((a) => a.ClientStatus === 'running'));
    const alloc = allocs.find((a) => a.ClientStatus === 'running')!;
    const passing = await until(() => checksOf(s, alloc.ID), (c) => Object.values(c)[0]?.Status === 'success', 'the example check passing', 60_000);
    expect(Object.values(passing)[0]).toMatchObject({ Service: 'web', Output: 'nomad: http ok', StatusCode: 200 });
    const read = () => call(s.socket, 'GET', `/v1/allocation/${alloc.ID}`).then((r) => r.json<{ DeploymentStatus?: { Healthy: boolean | null } }>());
    await until(read, (a) => a.DeploymentStatus?.Healthy === true, 'the example allocation healthy', 60_000);
    // Stopped before the agent goes: the allocation blocked on the static port is not evaluated again meanwhile.
    expect((await call(s.socket, 'DELETE', '/v1/job/web')).status).toBe(200);
    await waitForAllocs(s.socket, '/v1/job/web/allocations', (l) => l.every((a: Alloc) => a.ClientStatus !== 'running'));
  });
});
