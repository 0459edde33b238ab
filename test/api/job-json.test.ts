import { describe, expect, it } from 'vitest';
import { jobToApiJson } from '../../src/api/job-json.ts';
import { parseJob } from '../../src/jobspec/index.ts';

const hcl = `job "web" {
  type = "service"
  meta { team = "a" }
  update {
    max_parallel     = 2
    min_healthy_time = "3s"
  }
  group "api" {
    count = 2
    restart {
      attempts = 1
      delay    = "5s"
    }
    task "server" {
      driver = "raw_exec"
      config {
        command = "/bin/echo"
        args    = ["hi"]
      }
      kill_timeout = "3s"
      logs {
        max_files     = 2
        max_file_size = 5
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`;

describe('jobToApiJson', () => {
  it('writes a jobspec as Nomad API JSON that loads back into the same allocations', async () => {
    const fromHcl = await parseJob(hcl, { format: 'hcl' });
    const api = jobToApiJson(fromHcl.job.name, fromHcl.job.body);
    expect(api).toMatchObject({
      ID: 'web', Type: 'service', Meta: { team: 'a' }, Update: { MaxParallel: 2, MinHealthyTime: 3e9 },
      TaskGroups: [{ Name: 'api', Count: 2, RestartPolicy: { Attempts: 1, Delay: 5e9 }, Tasks: [{ Name: 'server', Driver: 'raw_exec', KillTimeout: 3e9, LogConfig: { MaxFiles: 2, MaxFileSizeMB: 5 }, Resources: { CPU: 100, MemoryMB: 64 } }] }],
    });
    const fromApi = await parseJob(JSON.stringify({ Job: api }), { format: 'json' });
    expect(fromApi.allocs).toEqual(fromHcl.allocs);
    expect(fromApi.allocs[0]!.update).toEqual({ minHealthyTime: 3_000, healthyDeadline: 300_000, healthCheck: 'checks' });
  });
});
