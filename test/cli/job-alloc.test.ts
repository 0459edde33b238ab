/**
 * The `job` and `alloc` commands (and `status`) against one running agent: each command is the real CLI
 * process, the agent a real `allocrun agent` serving its data dir's socket and a TCP address.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startAgent, waitForAllocs, type AgentProcess } from '../api/agent-process.ts';
import { runCli, startCli } from './spawn-cli.ts';

let agent: AgentProcess;
let file: string;
let allocId: string;
const cli = (...args: string[]) => runCli([...args, '--data-dir', agent.dataDir], { timeoutMs: 60_000 });

beforeAll(async () => {
  agent = await startAgent({ http: true });
  file = join(agent.dataDir, 'web.nomad');
  await writeFile(file, `job "web" {
  group "api" {
    task "server" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "trap 'echo poked' USR1; echo ready; echo oops >&2; while true; do sleep 0.1; done"]
      }
      kill_timeout = "1s"
    }
  }
}
`);
}, 60_000);
afterAll(async () => {
  await agent?.stop();
}, 60_000);

describe('allocrun job and alloc against a running agent', { timeout: 90_000 }, () => {
  it('job run submits the file and waits until its allocation runs', async () => {
    const res = await cli('job', 'run', file);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/==> Job "web" registered: version 0/);
    expect(res.stdout).toMatch(/Allocation "[0-9a-f]{8}" running/);
    const [alloc] = await waitForAllocs(agent.socket, '/v1/job/web/allocations', (l) => l.length === 1);
    allocId = alloc!.ID;
    const again = await cli('job', 'run', file);
    expect(again.stdout).toContain('is unchanged: nothing to do');
  });

  it('job run names what the scheduler could not place, as Nomad does, and exits 2', async () => {
    const big = join(agent.dataDir, 'big.nomad');
    await writeFile(big, 'job "big" {\n  group "g" {\n    task "t" {\n      driver = "mock"\n      config {\n        run_for = "1h"\n      }\n      resources {\n        memory = 100000000\n      }\n    }\n  }\n}\n');
    const res = await cli('job', 'run', big);
    expect(res.code).toBe(2);
    expect(res.stdout).toMatch(/==> Evaluation "[0-9a-f]{8}" finished with status "complete" but failed to place all allocations:\n    Task Group "g" \(failed to place 1 allocation\):\n      \* Resources exhausted on 1 nodes\n      \* Dimension "memory" exhausted on 1 nodes\n    Evaluation "[0-9a-f]{8}" waiting for additional capacity/);
    await cli('job', 'stop', '-purge', 'big');
  });

  it('job run reports an invalid file as validate does, and registers nothing', async () => {
    const bad = join(agent.dataDir, 'bad.nomad');
    // One problem only: the kill timeout (a raw_exec task without a command would be a second).
    await writeFile(bad, 'job "bad" {\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      kill_timeout = "soon"\n      config {\n        command = "/bin/true"\n      }\n    }\n  }\n}\n');
    const [res, validate] = await Promise.all([cli('job', 'run', bad), runCli(['validate', bad], { timeoutMs: 60_000 })]);
    expect(res.code).toBe(1);
    const problem = validate.stderr.split('\n')[1]!.trim();
    expect(problem).toMatch(/bad\.nomad:5:\d+: job\.bad\.group\.g\.task\.t\.kill_timeout: /);
    expect(res.stderr).toContain(problem);
    expect((await call(agent.socket, 'GET', '/v1/job/bad')).status).toBe(404);
  });

  it('job status lists the jobs, and shows one with its summary and allocations', async () => {
    const [list, one] = await Promise.all([cli('job', 'status'), cli('job', 'status', 'web')]);
    expect(list.stdout).toMatch(/^ID\s+Type\s+Priority\s+Status\s+Submit Date\nweb\s+service\s+50\s+running/);
    expect(one.stdout).toMatch(/ID\s+= web/);
    expect(one.stdout).toMatch(/api\s+0\s+0\s+1\s+0\s+0\s+0\s+0/);
    expect(one.stdout).toContain(`${allocId.slice(0, 8)}  api         0        run      running`);
  });

  it('alloc status shows the allocation by short ID; status reads it from the agent', async () => {
    const [res, status] = await Promise.all([cli('alloc', 'status', allocId.slice(0, 6)), cli('status')]);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(new RegExp(`ID\\s+= ${allocId}`));
    expect(res.stdout).toMatch(/server\s+main\s+raw_exec\s+running/);
    expect(status.stdout).toMatch(new RegExp(`${allocId.slice(0, 8)}\\s+web\\s+api\\s+run\\s+running`));
  });

  it('alloc logs prints stdout, and stderr with Nomad\'s -stderr', async () => {
    const [out, err] = await Promise.all([cli('alloc', 'logs', allocId.slice(0, 8)), cli('alloc', 'logs', '-stderr', allocId, 'server')]);
    expect(out.stdout).toMatch(/^ready\n/);
    expect(err.stdout).toBe('oops\n');
  });

  it('alloc logs -f sees a line written after it started; alloc signal -s sends the signal', async () => {
    const follow = startCli(['alloc', 'logs', '-f', allocId, '--data-dir', agent.dataDir], { timeoutMs: 60_000 });
    await follow.waitFor(/ready\n/);
    const before = follow.stdout().split('poked').length;
    const sig = await cli('alloc', 'signal', '-s', 'SIGUSR1', allocId, 'server');
    expect(sig.code).toBe(0);
    await follow.waitFor(new RegExp(`(poked\\n[^]*){${before}}`));
    follow.child.kill('SIGTERM');
    await follow.exited;
  });

  it('alloc exec runs a command in the task with our stdin, its stdout and stderr, and exits with its code; -t is refused', async () => {
    const short = allocId.slice(0, 8);
    const res = await runCli(['alloc', 'exec', '--data-dir', agent.dataDir, short, '/bin/sh', '-c', 'read x; echo "got $x in $(basename "$PWD")"; echo err >&2; exit 3'], { timeoutMs: 60_000, input: 'hello\n' });
    expect(res).toMatchObject({ code: 3, stdout: 'got hello in server\n', stderr: 'err\n' });
    const tty = await cli('alloc', 'exec', '-t', short, 'true');
    expect(tty.code).not.toBe(0);
    expect(tty.stderr).toContain('alloc exec: -t: allocrun cannot give the command a terminal');
  });

  it('alloc restart restarts the task', async () => {
    const res = await cli('alloc', 'restart', allocId, 'server');
    expect(res.stdout).toContain(`Restart of task "server" in allocation "${allocId.slice(0, 8)}" sent`);
    await waitForAllocs(agent.socket, '/v1/job/web/allocations', (l) => l.find((a) => a.ID === allocId)!.TaskStates.server!.Restarts === 1);
  });

  it('reaches the agent over TCP with --address and the token, and is refused a wrong token', async () => {
    const address = `http://127.0.0.1:${agent.tcp!.port}`;
    const [ok, wrong] = await Promise.all([
      runCli(['job', 'status', '--address', address, '--token', agent.tcp!.token], { timeoutMs: 60_000 }),
      runCli(['job', 'status'], { env: { ALLOCRUN_ADDR: address, ALLOCRUN_TOKEN: 'nope' }, timeoutMs: 60_000 }),
    ]);
    expect(ok.stdout).toMatch(/web\s+service/);
    expect([wrong.code, wrong.stderr]).toEqual([1, expect.stringMatching(/^allocrun: Permission denied: the agent at http:\/\/127.0.0.1:\d+ does not know the token sent/)]);
  });

  it('alloc stop stops the allocation and the agent places a replacement', async () => {
    const res = await cli('alloc', 'stop', allocId);
    expect(res.stdout).toContain(`Allocation "${allocId.slice(0, 8)}" stopped (complete)`);
    await waitForAllocs(agent.socket, '/v1/job/web/allocations', (l) => l.some((a) => a.PreviousAllocation === allocId && a.ClientStatus === 'running'));
  });

  it('job stop stops every allocation of the job', async () => {
    const res = await cli('job', 'stop', 'web');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('==> Job "web" has no running allocations');
    const allocs = await waitForAllocs(agent.socket, '/v1/job/web/allocations', () => true);
    expect(allocs.every((a) => a.ClientStatus === 'complete')).toBe(true);
  });

  it('says which agent is missing when none serves the data dir', async () => {
    const res = await runCli(['job', 'status', '--data-dir', join(agent.dataDir, 'elsewhere')], { timeoutMs: 60_000 });
    expect([res.code, res.stderr]).toEqual([1, expect.stringContaining('no agent is running on data dir')]);
  });
});
