/**
 * `allocrun job plan` and `job run --check-index` against one agent served in process (its data dir's socket),
 * the commands run in this process with their output captured: what Nomad's `job plan` prints for a new job, an
 * unchanged one, an edited one and one no node is eligible for, its exit statuses (0, 1, 255), and the index it
 * names submitted with -check-index. One real CLI process checks the 255 reaches the shell.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobCommand } from '../../src/cli/job.ts';
import { runInProcess } from './in-process-command.ts';
import { call } from '../api/agent-process.ts';
import { cleanUp, serveWithRoom, type Served, SUITE_TIMEOUT, freshDir } from '../api/in-process-agent.ts';
import { runCli } from './spawn-cli.ts';

let s: Served;
beforeAll(async () => {
  s = await serveWithRoom();
});
afterAll(cleanUp);

/** Runs `allocrun job ...args --data-dir <the agent's>` in process. */
const job = (...args: string[]) => runInProcess(jobCommand, args, s.dataDir);

/** A job file of one mock task in `dir`; `extra` lines go in the job block. */
async function jobFile(name: string, opts: { count?: number; runFor?: string; extra?: string } = {}): Promise<string> {
  const file = join(s.dataDir, `${name}-${opts.count ?? 1}-${opts.runFor ?? '1h'}-${(opts.extra ?? '').length}.nomad`);
  await writeFile(file, `job "${name}" {
${opts.extra ?? ''}
  group "g" {
    count = ${opts.count ?? 1}
    task "t" {
      driver = "mock"
      config {
        run_for = "${opts.runFor ?? '1h'}"
      }
    }
  }
}
`);
  return file;
}

const indexOf = async (id: string) => (await call(s.socket, 'GET', `/v1/job/${id}`)).json<{ JobModifyIndex: number }>().JobModifyIndex;

describe('allocrun job plan', { timeout: SUITE_TIMEOUT }, () => {
  it('plans a new job: Nomad\'s diff, every task allocated, the index 0 to submit it with; exit 1; nothing registered', async () => {
    const file = await jobFile('fresh');
    const res = await job('plan', file);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe([
      '+ Job: "fresh"',
      '+ Task Group: "g" (1 create)',
      '  + Task: "t" (forces create)',
      '',
      'Scheduler dry-run:',
      '- All tasks successfully allocated.',
      '',
      'Job Modify Index: 0',
      'To submit the job with version verification run:',
      '',
      `allocrun job run -check-index 0 ${file}`,
      '',
      'With -check-index the job is registered only while its modify index on the agent is still the one',
      'given. If it has moved, the job was changed since this plan and what the plan says may no longer hold.',
      '',
    ].join('\n'));
    expect((await call(s.socket, 'GET', '/v1/job/fresh')).status).toBe(404);
  });

  it('plans an unchanged job as nothing to do: exit 0, its allocation ignored, its current index named', async () => {
    const file = await jobFile('same');
    expect((await job('run', file, '--detach')).code).toBe(0);
    const res = await job('plan', file);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^Job: "same"\nTask Group: "g" \(1 ignore\)\n {2}Task: "t"\n\nScheduler dry-run:\n- All tasks successfully allocated\.\n\nJob Modify Index: (\d+)\n/);
    expect(res.stdout).toContain(`Job Modify Index: ${await indexOf('same')}\n`);
  });

  it('plans an edit: the changed fields with +/- and their values, the replacement and the new instances; exit 1', async () => {
    await job('run', await jobFile('edit'), '--detach');
    const res = await job('plan', await jobFile('edit', { count: 2, runFor: '2h' }));
    expect(res.code).toBe(1);
    expect(res.stdout.split('\nScheduler dry-run:')[0]).toBe([
      '+/- Job: "edit"',
      '+/- Task Group: "g" (1 create, 1 create/destroy update)',
      '  +/- Count: "1" => "2" (forces create)',
      '  +/- Task: "t" (forces create/destroy update)',
      '    +/- Config {',
      '      +/- run_for: "1h" => "2h"',
      '        }',
      '',
    ].join('\n'));
  });

  it('-diff=false leaves the diff out; the exit status still says what would change', async () => {
    const file = await jobFile('nodiff');
    for (const flag of ['-diff=false', '--diff=false', '--no-diff']) {
      const res = await job('plan', flag, file);
      expect([res.code, res.stdout.split('\n')[0]]).toEqual([1, 'Scheduler dry-run:']);
    }
    expect((await job('plan', '-diff=true', file)).stdout.split('\n')[0]).toBe('+ Job: "nodiff"');
  });

  it('-verbose expands an added job\'s fields, groups and tasks', async () => {
    const res = await job('plan', '-verbose', await jobFile('loud'));
    expect(res.stdout).toContain('+ Task Group: "g" (1 create)\n  + Count: "1" (forces create)\n');
    expect(res.stdout).toMatch(/\n {4}\+ Driver: +"mock"\n/);
    expect(res.stdout).toMatch(/\n\+ ID: +"loud"\n/);
  });

  it('names the groups that could not be placed, as Nomad\'s dry-run does: no node in the job\'s datacenters', async () => {
    const res = await job('plan', await jobFile('away', { count: 2, extra: '  datacenters = ["dc9", "west-*"]' }));
    expect(res.code).toBe(1);
    expect(res.stdout).toContain([
      'Scheduler dry-run:',
      '- WARNING: Failed to place all allocations.',
      '  Task Group "g" (failed to place 2 allocations):',
      '    * No nodes were eligible for evaluation',
      '',
      'Job Modify Index: 0',
    ].join('\n'));
  });

  it('fails with 255, not 1, for a file with problems, a bad flag or no agent', async () => {
    const bad = join(s.dataDir, 'bad.nomad');
    await writeFile(bad, 'job "bad" {\n  group "g" {\n    task "t" {\n      driver = "mock"\n      kill_timeout = "soon"\n    }\n  }\n}\n');
    const invalid = await job('plan', bad);
    expect(invalid.code).toBe(255);
    expect(invalid.stderr).toMatch(/the job file has 1 problem\(s\):\n {2}.*bad\.nomad:5:\d+: job\.bad\.group\.g\.task\.t\.kill_timeout: /);
    expect((await job('plan', '-diff=maybe', bad)).code).toBe(255);
    expect((await job('plan')).code).toBe(255);
    const noAgent = await runCli(['job', 'plan', await jobFile('lost'), '--data-dir', freshDir()], { timeoutMs: 60_000 });
    expect(noAgent.code).toBe(255);
    expect(noAgent.stderr).toMatch(/^allocrun: no agent is running/);
  });
});

describe('allocrun job run --check-index', { timeout: SUITE_TIMEOUT }, () => {
  it('registers at the index the plan named, and refuses once the job moved past it: Nomad\'s words, "Job not updated", exit 1', async () => {
    const first = await jobFile('cas');
    const planned = (await job('plan', first)).stdout;
    const zero = /Job Modify Index: (\d+)/.exec(planned)![1]!;
    expect((await job('run', '-check-index', zero, first, '--detach')).code).toBe(0);
    const index = await indexOf('cas');
    const second = await jobFile('cas', { runFor: '2h' });
    const stale = await job('run', '-check-index', zero, second, '--detach');
    expect([stale.code, stale.stderr]).toEqual([1, 'Enforcing job modify index 0: job already exists\nJob not updated']);
    const wrong = await job('run', '--check-index', String(index + 7), second, '--detach');
    expect(wrong.stderr).toBe(`Enforcing job modify index ${index + 7}: job exists with conflicting job modify index: ${index}\nJob not updated`);
    expect((await call(s.socket, 'GET', '/v1/job/cas')).json<{ Version: number }>().Version).toBe(0);
    expect((await job('run', '-check-index', String(index), second, '--detach')).code).toBe(0);
    expect((await call(s.socket, 'GET', '/v1/job/cas')).json<{ Version: number }>().Version).toBe(1);
  });

  it('refuses an index that is not a non-negative integer, naming the flag', async () => {
    const res = await job('run', '-check-index', 'latest', await jobFile('cas-bad'), '--detach');
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('-check-index must be a non-negative integer');
  });
});

describe('allocrun job status', { timeout: SUITE_TIMEOUT }, () => {
  it("shows Nomad's header: Node Pool, Periodic and Parameterized beside the rest", async () => {
    const file = await jobFile('shown');
    expect((await job('run', '-detach', file)).code).toBe(0);
    const res = await job('status', 'shown');
    expect(res.stdout).toMatch(/^ID +\= shown\nName +\= shown\nSubmit Date += \S+\nType += service\nPriority += 50\nDatacenters += \*\nNamespace += default\nNode Pool += default\nStatus += (pending|running)\nPeriodic += false\nParameterized += false\nVersion += 0\n/);
  });
});
