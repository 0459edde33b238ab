/**
 * Checks against real processes (issue 27, part 3): a raw_exec task keeps a tiny HTTP server on its
 * dynamic port (${NOMAD_PORT_http}); the http and tcp checks pass; the server is killed (its pid, tracked)
 * while the task lives on, the checks fail, and check_restart restarts the task through its restart path
 * after `limit` failures (Restart Signaled with Nomad's reason, the restart counted); the new server
 * passes again on the same port.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CheckQueryResult } from '../../src/checks/result.ts';
import type { AllocSpec } from '../../src/jobspec/types.ts';
import { createAllocRunner, type AllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { freePort, processRunning } from '../api/agent-process.ts';

/** The task: keeps an HTTP server child on argv[2] (answering with its NOMAD_PORT_http), its pid in argv[3]. */
const SUPERVISOR = `
const { spawn } = require('node:child_process');
const { writeFileSync, renameSync } = require('node:fs');
const [port, pidFile] = process.argv.slice(2);
const server = "require('node:http').createServer((q, s) => s.end(String(process.env.NOMAD_PORT_http))).listen(" + Number(port) + ")";
const child = spawn(process.execPath, ['-e', server], { stdio: 'inherit' });
writeFileSync(pidFile + '.tmp', String(child.pid));
renameSync(pidFile + '.tmp', pidFile);
const stop = () => { try { child.kill('SIGKILL'); } catch {} process.exit(0); };
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
setInterval(() => {}, 1 << 30);
`;

const pids: number[] = [];
const runners: AllocRunner[] = [];
let scratch: string | undefined;
afterAll(async () => {
  for (const r of runners) r.send({ type: 'KILL' });
  await Promise.all(runners.map((r) => r.done.catch(() => undefined)));
  for (const pid of pids) if (processRunning(pid)) process.kill(pid, 'SIGKILL');
  if (scratch) await rm(scratch, { recursive: true, force: true });
}, 60_000);

async function until<T>(read: () => T | Promise<T>, ok: (v: T) => boolean, what: string, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const byName = (results: Record<string, CheckQueryResult>, name: string) => Object.values(results).find((r) => r.Check === name);

describe('service checks of a real task', { timeout: 180_000 }, () => {
  it('pass while the server answers; a killed server fails them and check_restart restarts the task', async () => {
    scratch = await mkdtemp(join(tmpdir(), 'allocrun-checks-'));
    const supervisor = join(scratch, 'supervisor.cjs');
    const pidFile = join(scratch, 'server.pid');
    await writeFile(supervisor, SUPERVISOR);
    const port = await freePort();
    const spec: AllocSpec = {
      id: 'chk1', job: 'web', group: 'app', type: 'service',
      ports: [{ label: 'http', value: port, to: 0, hostIP: '127.0.0.1' }],
      restart: { attempts: 3, interval: 3_600_000, delay: 500, mode: 'fail' },
      tasks: [{
        name: 'server', driver: 'raw_exec', killSignal: 'SIGTERM', killTimeout: 2_000,
        config: { command: process.execPath, args: [supervisor, '${NOMAD_PORT_http}', pidFile] },
        services: [{
          name: 'web', provider: 'nomad', port: 'http', addressMode: 'auto', onUpdate: 'require_healthy',
          checks: [
            { name: 'http-alive', type: 'http', path: '/', interval: 1_000, timeout: 1_000, successBeforePassing: 0, failuresBeforeCritical: 0, onUpdate: 'require_healthy', checkRestart: { limit: 2, grace: 5_000, ignoreWarnings: false } },
            { name: 'tcp-alive', type: 'tcp', interval: 1_000, timeout: 1_000, successBeforePassing: 0, failuresBeforeCritical: 0, onUpdate: 'require_healthy' },
          ],
        }],
      }],
    };
    const runner = createAllocRunner(spec, { dataDir: scratch }).start();
    runners.push(runner);

    // The port variable reached the task and its server listens there.
    const firstPid = Number(await until(() => readFile(pidFile, 'utf8').catch(() => ''), (s) => s !== '', 'the server pid'));
    pids.push(firstPid);
    const answer = await until(() => fetch(`http://127.0.0.1:${port}/`).then((r) => r.text(), () => ''), (t) => t !== '', `the server on ${port}`);
    expect(answer).toBe(String(port));

    // Both checks pass.
    await until(() => runner.checks(), (c) => byName(c, 'http-alive')?.Status === 'success' && byName(c, 'tcp-alive')?.Status === 'success', 'passing checks');
    expect(byName(runner.checks(), 'http-alive')).toMatchObject({ Output: 'nomad: http ok', StatusCode: 200, Service: 'web', Task: 'server', Mode: 'healthiness' });
    expect(byName(runner.checks(), 'tcp-alive')).toMatchObject({ Output: 'nomad: tcp ok' });

    // The server dies, the task lives on: the checks fail, and after 2 failures the task is restarted.
    process.kill(firstPid, 'SIGKILL');
    await until(() => runner.checks(), (c) => byName(c, 'http-alive')?.Status === 'failure' && byName(c, 'tcp-alive')?.Status === 'failure', 'failing checks');
    const events = () => runner.getState().taskStates.server!.events;
    const signaled = await until(events, (es) => es.some((e) => e.type === 'Restart Signaled'), 'Restart Signaled');
    expect(signaled.find((e) => e.type === 'Restart Signaled')?.restartReason).toBe('healthcheck: check "http-alive" unhealthy');

    // Back up: a new server on the same port, the checks pass again, one restart counted.
    await until(() => runner.getState().taskStates.server!, (ts) => ts.state === 'running' && ts.restarts === 1, 'the restarted task');
    const secondPid = Number(await until(() => readFile(pidFile, 'utf8').catch(() => ''), (s) => s !== '' && Number(s) !== firstPid, 'the new server pid'));
    pids.push(secondPid);
    await until(() => runner.checks(), (c) => byName(c, 'http-alive')?.Status === 'success' && byName(c, 'tcp-alive')?.Status === 'success', 'passing checks after the restart');
    const types = events().map((e) => e.type);
    expect(types.slice(types.indexOf('Restart Signaled'), types.indexOf('Restart Signaled') + 4)).toEqual(['Restart Signaled', 'Terminated', 'Restarting', 'Started']);
    expect(types.filter((t) => t === 'Restart Signaled')).toHaveLength(1);
    expect(runner.getState().taskStates.server).toMatchObject({ failed: false, restarts: 1 });
  });

  it('ignore_warnings: a server answering 429 Too Many Requests is a warning, and its task is not restarted', async () => {
    scratch ??= await mkdtemp(join(tmpdir(), 'allocrun-checks-'));
    // The server answering 429 is the test's own, listening before the task starts: with `grace` 0 and `limit`
    // 1, a task's server still starting on a loaded machine would fail the first check (refused) and restart it.
    let hits = 0;
    const server = createServer((_q, s) => {
      hits++;
      s.statusCode = 429;
      s.end('busy');
    });
    const port = await freePort();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    try {
      const spec: AllocSpec = {
        id: 'chk2', job: 'web', group: 'app', type: 'service',
        ports: [{ label: 'http', value: port, to: 0, hostIP: '127.0.0.1' }],
        tasks: [{
          name: 'server', driver: 'raw_exec', killSignal: 'SIGTERM', killTimeout: 2_000,
          config: { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1 << 30)'] },
          services: [{
            name: 'web', provider: 'nomad', port: 'http', addressMode: 'auto', onUpdate: 'require_healthy',
            checks: [{ name: 'busy', type: 'http', path: '/', interval: 1_000, timeout: 1_000, successBeforePassing: 0, failuresBeforeCritical: 0, onUpdate: 'require_healthy', checkRestart: { limit: 1, grace: 0, ignoreWarnings: true } }],
          }],
        }],
      };
      const runner = createAllocRunner(spec, { dataDir: scratch }).start();
      runners.push(runner);
      await until(() => hits, (n) => n >= 4, 'four check runs');
      expect(byName(runner.checks(), 'busy')).toMatchObject({ Status: 'warning', StatusCode: 429, Output: 'busy' });
      const ts = runner.getState().taskStates.server!;
      expect(ts.events.some((e) => e.type === 'Restart Signaled')).toBe(false);
      expect(ts).toMatchObject({ state: 'running', restarts: 0 });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
