/**
 * Real Nomad job files (test/walk/jobs/), run as a Nomad user runs them: one `allocrun agent` process for the
 * file, each job submitted with `allocrun job run`, then read back as Nomad's CLI and API show it. Each job
 * says what it exercises; docs/job-compatibility.md is the table of what this walk found and what was fixed.
 * Jobs run concurrently; reads wait on conditions (blocking queries, streams), never on fixed sleeps.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, freePort, startAgent, waitForAllocs, type Alloc, type AgentProcess } from '../api/agent-process.ts';
import { runCli, type CliResult } from '../cli/spawn-cli.ts';
import { tempDir } from '../temp-dirs.ts';

const JOBS = new URL('./jobs/', import.meta.url).pathname;

let agent: AgentProcess;
let files: Server;
let work: string;
/** What the job files' @NAME@ placeholders become: addresses and ports known only at run time. */
const fill: Record<string, string> = {};

/** The job file with its placeholders filled, written where the CLI reads it. */
function jobFile(name: string): string {
  const text = readFileSync(join(JOBS, name), 'utf8').replace(/@([A-Z0-9_]+)@/g, (_m, key: string) => fill[key] ?? `@${key}@`);
  const path = join(work, name);
  writeFileSync(path, text);
  return path;
}

/** An `allocrun` subcommand against the walk's agent. */
const cli = (...args: string[]): Promise<CliResult> => runCli([...args, '--data-dir', agent.dataDir], { timeoutMs: 120_000 });

/** The one allocation of `job` once `ok` holds for it. */
async function allocOf(job: string, ok: (a: Alloc) => boolean): Promise<Alloc> {
  const [a] = await waitForAllocs(agent.socket, `/v1/job/${job}/allocations`, (l) => l.length > 0 && ok(l[0]!));
  return a!;
}

/** A task's whole stdout so far (Nomad's logs endpoint, plain). */
async function logs(alloc: string, task: string): Promise<string> {
  return (await call(agent.socket, 'GET', `/v1/client/fs/logs/${alloc}?task=${task}&type=stdout&plain=true`)).text;
}

/** Waits until a task's stdout holds `text`, reading it again on each change of the allocation. */
async function logsUntil(job: string, task: string, text: string): Promise<string> {
  let seen = '';
  const end = Date.now() + 60_000;
  for (;;) {
    const [a] = (await call(agent.socket, 'GET', `/v1/job/${job}/allocations`)).json<Alloc[]>();
    if (a) seen = await logs(a.ID, task);
    if (seen.includes(text)) return seen;
    if (Date.now() > end) throw new Error(`${job}/${task} never printed ${JSON.stringify(text)}; it printed:\n${seen}`);
    // Output is not an index change: read again shortly (bounded by the deadline, not asserted on time).
    await new Promise((r) => setTimeout(r, 100));
  }
}

const events = (a: Alloc, task: string): string[] => (a.TaskStates[task]?.Events ?? []).map((e) => `${e.Type}: ${e.DisplayMessage}`);

/** Writes a Nomad variable as `nomad var put -force` does. */
async function putVar(path: string, items: Record<string, string>): Promise<void> {
  const res = await call(agent.socket, 'PUT', `/v1/var/${path}`, { Path: path, Items: items });
  expect(res.status, res.text).toBe(200);
}

beforeAll(async () => {
  work = tempDir('allocrun-walk-');
  const served = join(work, 'served');
  mkdirSync(join(served, 'pack'), { recursive: true });
  writeFileSync(join(served, 'hello.txt'), 'hello artifact\n');
  writeFileSync(join(served, 'pack', 'inner.txt'), 'inner file\n');
  execFileSync('tar', ['czf', join(served, 'bundle.tar.gz'), '-C', join(served, 'pack'), 'inner.txt']);
  files = createServer((req, res) => {
    try {
      res.end(readFileSync(join(served, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname).replace(/^\/+/, ''))));
    } catch {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  Object.assign(fill, {
    BASE: `http://127.0.0.1:${(files.address() as { port: number }).port}`,
    SHA256: createHash('sha256').update('hello artifact\n').digest('hex'),
    DIR: served,
    STATIC_PORT: String(await freePort()),
  });
  agent = await startAgent();
});

afterAll(async () => {
  await agent?.stop();
  await new Promise((resolve) => files?.close(resolve));
});

describe('real Nomad job files through allocrun agent and its CLI', { timeout: 120_000 }, () => {
  it.concurrent('ports.nomad: a dynamic and a static port, their NOMAD_* variables, env and meta interpolation; alloc status shows the addresses', async () => {
    const run = await cli('job', 'run', jobFile('ports.nomad'));
    expect(run.code, run.stderr).toBe(0);
    const a = await allocOf('ports', (x) => x.ClientStatus === 'running');
    const out = await logsUntil('ports', 'server', 'Serving HTTP');
    const http = Number(/http=(\d+)/.exec(out)![1]);
    expect(out).toContain(`http=${http} admin=${fill.STATIC_PORT} addr=127.0.0.1:${http} ip=127.0.0.1 host=${fill.STATIC_PORT}`);
    expect(out).toContain('hello from ports.api owner=walk');
    expect((await fetch(`http://127.0.0.1:${http}/`)).status).toBe(200);
    const status = await cli('alloc', 'status', a.ID.slice(0, 8));
    expect(status.stdout).toMatch(new RegExp(`Allocation Addresses \\(mode = "host"\\)\\nLabel +Dynamic +Address\\nhttp +yes +127\\.0\\.0\\.1:${http}\\nadmin +no +127\\.0\\.0\\.1:${fill.STATIC_PORT}`));
  });

  it.concurrent('checks.nomad + consumer.nomad: a service with http and tcp checks, read by another job\'s template (nomadService), its variable template signalling on change', async () => {
    const run = await cli('job', 'run', jobFile('checks.nomad'));
    expect(run.code, run.stderr).toBe(0);
    const web = await allocOf('checks', (x) => x.ClientStatus === 'running');
    let checks: Record<string, { Status: string; Check: string }> = {};
    for (const end = Date.now() + 60_000; Date.now() < end;) {
      checks = (await call(agent.socket, 'GET', `/v1/client/allocation/${web.ID}/checks`)).json();
      if (Object.values(checks).filter((c) => c.Status === 'success').length === 2) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(Object.values(checks).map((c) => `${c.Check}=${c.Status}`).sort()).toEqual(['alive=success', 'port=success']);
    const info = await cli('service', 'info', 'checks-web');
    const address = /127\.0\.0\.1:(\d+)/.exec(info.stdout)![0];
    expect(info.stdout).toMatch(/Job ID +Address +Tags +Node ID +Alloc ID\nchecks +127\.0\.0\.1:\d+ +\[walk,web\]/);

    // The consumer blocks on its variable, then renders the catalog and the variable, and is signalled on a change.
    const consumer = await cli('job', 'run', '-detach', jobFile('consumer.nomad'));
    expect(consumer.code, consumer.stderr).toBe(0);
    const blocked = await allocOf('consumer', (x) => events(x, 'reader').some((e) => e.startsWith('Template: Missing: nomad.var.block(nomad/jobs/consumer@default.global)')));
    expect(blocked.ClientStatus).toBe('pending');
    await putVar('nomad/jobs/consumer', { level: 'info' });
    const first = await logsUntil('consumer', 'reader', 'level=info');
    expect(first).toContain(`upstream ${address}`);
    expect(first).toMatch(/host=\S+ dc=dc1\n/); // the node's attr.* and node.* keys, as Nomad's TaskEnv.All()
    await putVar('nomad/jobs/consumer', { level: 'debug' });
    await logsUntil('consumer', 'reader', 'got HUP');
    // One Signaling event whose message says why, as Nomad records a template's signal.
    const signalled = await allocOf('consumer', (x) => events(x, 'reader').includes('Signaling: Template re-rendered'));
    expect(signalled.TaskStates['reader']!.Restarts).toBe(0);
  });

  it.concurrent('restart-on-var.nomad: a template with change_mode "restart" restarts the task with the new value in its env', async () => {
    await putVar('nomad/jobs/restart-on-var', { color: 'red' });
    const run = await cli('job', 'run', jobFile('restart-on-var.nomad'));
    expect(run.code, run.stderr).toBe(0);
    await logsUntil('restart-on-var', 't', 'color=red');
    await putVar('nomad/jobs/restart-on-var', { color: 'blue' });
    await logsUntil('restart-on-var', 't', 'color=blue');
    const a = await allocOf('restart-on-var', (x) => x.ClientStatus === 'running' && x.TaskStates['t']?.State === 'running' && x.TaskStates['t']!.Restarts === 1);
    expect(events(a, 't')).toContain('Restart Signaled: Template with change_mode restart re-rendered');
  });

  it.concurrent('reload-script.nomad: a template with change_mode "script" runs its change_script in the running task', async () => {
    await putVar('nomad/jobs/reload-script', { v: '1' });
    const run = await cli('job', 'run', jobFile('reload-script.nomad'));
    expect(run.code, run.stderr).toBe(0);
    const a = await allocOf('reload-script', (x) => x.ClientStatus === 'running');
    await logsUntil('reload-script', 't', 'v=1');
    await putVar('nomad/jobs/reload-script', { v: '2' });
    let reloads = '';
    for (const end = Date.now() + 60_000; Date.now() < end && !reloads.includes('\n'); await new Promise((r) => setTimeout(r, 100))) {
      const res = await call(agent.socket, 'GET', `/v1/client/fs/cat/${a.ID}?path=t/local/reloads`);
      if (res.status === 200) reloads = res.text;
    }
    expect(reloads).toBe('reloaded v=2 in t\n');
    const after = await allocOf('reload-script', (x) => events(x, 't').some((e) => e.startsWith('Task hook message: Template successfully ran script /bin/sh with arguments: [-c ')));
    expect(after.TaskStates['t']).toMatchObject({ State: 'running', Restarts: 0 });
  });

  it.concurrent('artifact.nomad: an HTTP artifact checked by sha256 into a dir, an archive unpacked, a file:// copy', async () => {
    const run = await cli('job', 'run', jobFile('artifact.nomad'));
    expect(run.code, run.stderr).toBe(0);
    const a = await allocOf('artifact', (x) => x.ClientStatus === 'complete');
    expect(await logs(a.ID, 't')).toBe('hello artifact\ninner file\nhello artifact\n');
    expect(events(a, 't')).toContain('Downloading Artifacts: Client is downloading artifacts');
  });

  it.concurrent('lifecycle.nomad: prestart, prestart sidecar, poststart and poststop tasks in Nomad\'s order', async () => {
    const run = await cli('job', 'run', jobFile('lifecycle.nomad'));
    expect(run.code, run.stderr).toBe(0);
    const a = await allocOf('lifecycle', (x) => x.ClientStatus === 'complete' && x.TaskStates['cleanup']?.State === 'dead');
    expect(await logs(a.ID, 'main')).toBe('init\nmain done\n');
    expect(await logs(a.ID, 'announce')).toBe('announced\n');
    expect(await logs(a.ID, 'cleanup')).toBe('cleaned up\n');
    // The sidecar ran beside main and was killed once the main tasks were dead.
    expect(events(a, 'sidecar')).toEqual(expect.arrayContaining(['Main Tasks Dead: Main tasks in the group died', 'Killed: Task successfully killed']));
    expect(Object.values(a.TaskStates).every((t) => t.State === 'dead')).toBe(true);
  });

  it.concurrent('failing.nomad: one restart after its delay, then the allocation fails with Nomad\'s Not Restarting reason', async () => {
    const run = await cli('job', 'run', jobFile('failing.nomad'));
    // Nomad's job run ends once the evaluation placed it (0); allocrun's also when it saw the failure (1).
    expect([0, 1], run.stderr).toContain(run.code);
    // reschedule { attempts = 0 } is read, not warned about: it turns the batch default's one reschedule off.
    expect(run.stderr).not.toContain('reschedule');
    const a = await allocOf('failing', (x) => x.ClientStatus === 'failed');
    expect(a.TaskStates['t']).toMatchObject({ State: 'dead', Restarts: 1 });
    expect(events(a, 't')).toContain('Not Restarting: Exceeded allowed attempts 1 in interval 1m0s and mode is "fail"');
    expect(await logs(a.ID, 't')).toBe('trying\ntrying\n');
    expect((a as unknown as { FollowupEvalID: string }).FollowupEvalID).toBe('');
  });

  it.concurrent('kill.nomad: job stop sends kill_signal (SIGINT) and waits kill_timeout; the task exits cleanly', async () => {
    const run = await cli('job', 'run', jobFile('kill.nomad'));
    expect(run.code, run.stderr).toBe(0);
    await logsUntil('kill', 't', 'ready');
    const stop = await cli('job', 'stop', 'kill');
    expect(stop.code, stop.stderr).toBe(0);
    const a = await allocOf('kill', (x) => x.ClientStatus === 'complete');
    expect(await logs(a.ID, 't')).toBe('ready\ncaught INT\n');
    expect(events(a, 't')).toEqual(expect.arrayContaining(['Killing: Sent interrupt. Waiting 10s before force killing', 'Terminated: Exit Code: 0']));
  });

  it.concurrent('constraint-ok.nomad and constraint-no.nomad: constraints the node meets run; one it does not is not placed, named as Nomad names it', async () => {
    const [ok, no] = await Promise.all([cli('job', 'run', jobFile('constraint-ok.nomad')), cli('job', 'run', jobFile('constraint-no.nomad'))]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).not.toContain('constraint');
    const a = await allocOf('constraint-ok', (x) => x.ClientStatus === 'complete');
    expect(await logs(a.ID, 't')).toMatch(/^kernel linux on \S+\n$/);
    expect(no.code).toBe(2);
    expect(no.stdout).toContain('Task Group "g" (failed to place 1 allocation):\n      * Constraint "${attr.kernel.name} = windows": 1 nodes excluded by filter');
    expect((await call(agent.socket, 'GET', '/v1/job/constraint-no/allocations')).json()).toEqual([]);
  });

  it.concurrent('node-pool-all.nomad and node-pool-gpu.nomad: a job in all runs on the node; one in a pool no node is in is refused, in Nomad\'s words', async () => {
    const [all, gpu] = await Promise.all([cli('job', 'run', jobFile('node-pool-all.nomad')), cli('job', 'run', jobFile('node-pool-gpu.nomad'))]);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stderr).not.toContain('node_pool');
    const a = await allocOf('node-pool-all', (x) => x.ClientStatus === 'complete');
    expect(await logs(a.ID, 't')).toBe('pool default\n');
    expect(gpu.code).toBe(1);
    expect(gpu.stderr).toContain('job "node-pool-gpu" is in nonexistent node pool "gpu"');
    expect((await call(agent.socket, 'GET', '/v1/job/node-pool-gpu')).status).toBe(404);
  });

  it.concurrent('script-check is refused before anything runs, with the reason and where', async () => {
    const refused: [string, string][] = [
      ['script-check.nomad', 'job.script-check.group.g.service[0].check[0].type: check type "script" is not supported: Nomad-native service checks are "http" or "tcp"'],
    ];
    const runs = await Promise.all(refused.map(([name]) => cli('job', 'run', jobFile(name))));
    refused.forEach(([name, why], i) => {
      expect(runs[i]!.code, name).toBe(1);
      expect(runs[i]!.stderr).toContain(`${name}:`);
      expect(runs[i]!.stderr).toContain(why);
      expect(runs[i]!.stderr).not.toMatch(/\n\s+at /); // no stack trace
    });
    expect((await call(agent.socket, 'GET', '/v1/job/script-check')).status).toBe(404);
  });

  it.concurrent('parameterized.nomad: registering places nothing; job dispatch with -meta and a payload file runs a child that sees both', async () => {
    const run = await cli('job', 'run', jobFile('parameterized.nomad'));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('Job registration successful\n');
    expect((await call(agent.socket, 'GET', '/v1/job/parameterized/allocations')).json()).toEqual([]);
    const payload = join(work, 'payload.txt');
    writeFileSync(payload, 'from the payload\n');
    const [refused, dispatched] = await Promise.all([cli('job', 'dispatch', 'parameterized'), cli('job', 'dispatch', '-meta', 'target=prod', 'parameterized', payload)]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Failed to dispatch job: Dispatch did not provide required meta keys: [target]');
    expect(dispatched.code, dispatched.stderr).toBe(0);
    const child = /^Dispatched Job ID = (parameterized\/dispatch-\d+-[0-9a-f]{8})\nEvaluation ID     = [0-9a-f]{8}\n\n/.exec(dispatched.stdout)?.[1];
    expect(child, dispatched.stdout).toBeDefined();
    const [a] = await waitForAllocs(agent.socket, `/v1/job/${encodeURIComponent(child!)}/allocations`, (l) => l.length > 0 && l[0]!.ClientStatus === 'complete');
    expect(await logs(a!.ID, 't')).toBe('target=prod\nfrom the payload\n');
    const status = await cli('job', 'status', 'parameterized');
    expect(status.stdout).toContain('Parameterized = true');
    expect(status.stdout).toContain('Parameterized Job\nPayload           = optional\nRequired Metadata = target\n');
    expect(status.stdout).toContain(`Dispatched Jobs\nID${' '.repeat(child!.length)}Status\n${child}  dead`);
    // A payload from stdin; the same idempotency token twice: one child, and the second answer has no evaluation to monitor.
    const once = await runCli(['job', 'dispatch', '-detach', '-idempotency-token', 'walk', '-meta', 'target=x', 'parameterized', '-', '--data-dir', agent.dataDir], { input: 'from stdin\n', timeoutMs: 120_000 });
    const twice = await cli('job', 'dispatch', '-idempotency-token', 'walk', '-meta', 'target=x', 'parameterized');
    expect([once.code, twice.code], once.stderr + twice.stderr).toEqual([0, 0]);
    expect(twice.stdout).toBe(once.stdout.split('\n')[0] + '\n');
    const stdinChild = /^Dispatched Job ID = (\S+)/.exec(twice.stdout)![1]!;
    expect((await call(agent.socket, 'GET', `/v1/job/${encodeURIComponent(stdinChild)}`)).json()).toMatchObject({ Payload: Buffer.from('from stdin\n').toString('base64'), DispatchIdempotencyToken: 'walk' });
  });

  it.concurrent('periodic.nomad: registering places nothing and says the next launch; job periodic force launches a child that runs', async () => {
    const run = await cli('job', 'run', jobFile('periodic.nomad'));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Job registration successful\nApproximate next launch time: \S+ \(.+ from now\)\n$/);
    expect((await call(agent.socket, 'GET', '/v1/job/periodic/allocations')).json()).toEqual([]);
    const forced = await cli('job', 'periodic', 'force', 'periodic');
    expect(forced.code, forced.stderr).toBe(0);
    const child = /==> Launched job "(periodic\/periodic-\d+)"/.exec(forced.stdout)?.[1];
    expect(child, forced.stdout).toBeDefined();
    const [a] = await waitForAllocs(agent.socket, `/v1/job/${encodeURIComponent(child!)}/allocations`, (l) => l.length > 0 && l[0]!.ClientStatus === 'complete');
    expect(await logs(a!.ID, 't')).toMatch(/\d{4}/);
    const status = await cli('job', 'status', 'periodic');
    expect(status.stdout).toMatch(/Next Periodic Launch = \S+ \(.+ from now\)/);
    expect(status.stdout).toContain(`Previously Launched Jobs\nID${' '.repeat(child!.length)}Status\n${child}  dead`);
  });

  it.concurrent('variables.nomad: HCL2 variables, a validation and a local, with nomad job run -var', async () => {
    const [run, refused] = await Promise.all([
      cli('job', 'run', '-var', 'message=bye', '-var', 'instances=1', jobFile('variables.nomad')),
      cli('job', 'run', '-var', 'instances=0', jobFile('variables.nomad')),
    ]);
    expect(run.code, run.stderr).toBe(0);
    const a = await allocOf('variables', (x) => x.ClientStatus === 'complete');
    expect(await logs(a.ID, 't')).toBe('bye! from 0 of variables.g[0]\n');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Invalid value for variable "instances" (from -var instances=0): At least one instance.');
  });

  it.concurrent('expressions.nomad: HCL2 functions, a conditional, for-expressions, a %{for} directive and file() beside the job file', async () => {
    copyFileSync(join(JOBS, 'expressions.txt'), join(work, 'expressions.txt'));
    const run = await cli('job', 'run', '-var', 'ports=[8080, 80, 8443]', jobFile('expressions.nomad'));
    expect(run.code, run.stderr).toBe(0);
    const a = await allocOf('expressions', (x) => x.ClientStatus === 'complete');
    expect(await logs(a.ID, 't')).toBe('expressions HELLO FROM A FILE 8080/tcp,8443/tcp 512 dev-3 0\nport 0: 8080\nport 1: 80\nport 2: 8443\n');
  });
});
