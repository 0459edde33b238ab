/**
 * A jobspec as Nomad's API Job JSON, field by field: each HCL setting lands under Nomad's field name and in
 * Nomad's unit (durations in nanoseconds, sizes in MB, resources in MHz and MB), and the API JSON loads
 * back into the same allocations (`/v1/jobs/parse` then `PUT /v1/jobs` must not change a job).
 */
import { describe, expect, it } from 'vitest';
import { jobToApiJson, type Json } from '../../src/api/job-json.ts';
import { parseJob } from '../../src/jobspec/index.ts';

/** A job of one group `g` with one raw_exec task `t`; `group` and `task` are HCL lines inside those blocks. */
const hcl = ({ job = '', group = '', task = '' }: { job?: string; group?: string; task?: string }) => `job "j" {
  ${job}
  group "g" {
    ${group}
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
      ${task}
    }
  }
}
`;

async function apiOf(parts: Parameters<typeof hcl>[0]): Promise<Json> {
  const loaded = await parseJob(hcl(parts), { format: 'hcl' });
  return jobToApiJson(loaded.job.name, loaded.job.body);
}

const groupOf = (api: Json) => (api.TaskGroups as Json[])[0]!;
const taskOf = (api: Json) => (groupOf(api).Tasks as Json[])[0]!;

describe("task fields in Nomad's names and units", () => {
  it.each<[string, string, Json]>([
    ['kill_timeout in nanoseconds', 'kill_timeout = "3s"', { KillTimeout: 3e9 }],
    ['kill_signal as written', 'kill_signal = "SIGINT"', { KillSignal: 'SIGINT' }],
    ['shutdown_delay in nanoseconds', 'shutdown_delay = "250ms"', { ShutdownDelay: 250e6 }],
    ['leader as a flag', 'leader = true', { Leader: true }],
    ['env and meta as maps', 'env {\n A = "1"\n}\nmeta {\n m = "x"\n}', { Env: { A: '1' }, Meta: { m: 'x' } }],
    ['lifecycle with Sidecar false when not set', 'lifecycle {\n hook = "prestart"\n}', { Lifecycle: { Hook: 'prestart', Sidecar: false } }],
    ['a sidecar lifecycle', 'lifecycle {\n hook = "poststart"\n sidecar = true\n}', { Lifecycle: { Hook: 'poststart', Sidecar: true } }],
    ['logs sizes in MB', 'logs {\n max_files = 3\n max_file_size = 7\n}', { LogConfig: { MaxFiles: 3, MaxFileSizeMB: 7 } }],
    ['resources in MHz and MB', 'resources {\n cpu = 250\n memory = 64\n memory_max = 128\n}', { Resources: { CPU: 250, MemoryMB: 64, MemoryMaxMB: 128 } }],
    ['reserved cores', 'resources {\n cores = 2\n}', { Resources: { Cores: 2 } }],
    ['a task restart block with durations in nanoseconds', 'restart {\n attempts = 4\n interval = "1m"\n delay = "15s"\n mode = "fail"\n}', { RestartPolicy: { Attempts: 4, Interval: 60e9, Delay: 15e9, Mode: 'fail' } }],
  ])('%s', async (_rule, task, expected) => {
    expect(taskOf(await apiOf({ task }))).toMatchObject(expected);
  });

  it('leaves out what the job does not say', async () => {
    const t = taskOf(await apiOf({}));
    for (const field of ['KillTimeout', 'KillSignal', 'ShutdownDelay', 'Lifecycle', 'Resources', 'Env', 'Meta']) expect(t).not.toHaveProperty(field);
  });
});

describe("group and job fields in Nomad's names and units", () => {
  it.each<[string, Parameters<typeof hcl>[0], (api: Json) => Json, Json]>([
    ['count', { group: 'count = 3' }, groupOf, { Count: 3 }],
    ['a group shutdown_delay in nanoseconds', { group: 'shutdown_delay = "5s"' }, groupOf, { ShutdownDelay: 5e9 }],
    ['a group restart block', { group: 'restart {\n attempts = 2\n delay = "1s"\n}' }, groupOf, { RestartPolicy: { Attempts: 2, Delay: 1e9 } }],
    [
      'an update block with every duration in nanoseconds',
      { group: 'update {\n max_parallel = 2\n min_healthy_time = "3s"\n healthy_deadline = "4m"\n progress_deadline = "9m"\n}' },
      groupOf,
      { Update: { MaxParallel: 2, MinHealthyTime: 3e9, HealthyDeadline: 240e9, ProgressDeadline: 540e9 } },
    ],
    ['the job type and datacenters', { job: 'type = "batch"\ndatacenters = ["dc1", "dc2"]' }, (a) => a, { ID: 'j', Name: 'j', Type: 'batch', Datacenters: ['dc1', 'dc2'] }],
    ['job meta', { job: 'meta {\n team = "a"\n}' }, (a) => a, { Meta: { team: 'a' } }],
  ])('%s', async (_rule, parts, at, expected) => {
    expect(at(await apiOf(parts))).toMatchObject(expected);
  });
});

describe('the API JSON of a job', () => {
  it('loads back into the same allocations, whatever the job sets', async () => {
    const text = hcl({
      job: 'type = "service"\nmeta {\n team = "a"\n}',
      group: 'count = 2\nshutdown_delay = "1s"\nrestart {\n attempts = 2\n interval = "10m"\n delay = "3s"\n mode = "delay"\n}\nupdate {\n min_healthy_time = "2s"\n healthy_deadline = "1m"\n}',
      task: 'kill_timeout = "7s"\nkill_signal = "SIGINT"\nshutdown_delay = "500ms"\nleader = true\nenv {\n A = "${NOMAD_TASK_NAME}"\n}\nlogs {\n max_files = 4\n max_file_size = 2\n}\nresources {\n cpu = 300\n memory = 96\n memory_max = 192\n}',
    });
    const fromHcl = await parseJob(text, { format: 'hcl' });
    const api = jobToApiJson(fromHcl.job.name, fromHcl.job.body);
    const fromApi = await parseJob(JSON.stringify({ Job: api }), { format: 'json' });
    expect(fromApi.allocs).toEqual(fromHcl.allocs);
    // And the API JSON of the reloaded job is the same JSON: a parse → register → inspect cycle is stable.
    expect(jobToApiJson(fromApi.job.name, fromApi.job.body)).toEqual(api);
  });
});
