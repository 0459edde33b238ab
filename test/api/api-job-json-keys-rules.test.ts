/**
 * Which job-file keys the API JSON models and which it copies as they are (src/api/job-json.ts): a modelled
 * key is written once in its API form, never again as an ignored copy; an ignored key is copied under the
 * API name of its level (Nomad's names: DiskMB, MBits, Constraints), kept as a list under a plural name and
 * unwrapped only when one block stands under a singular one.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { jobToApiJson, type Json } from '../../src/api/job-json.ts';
import { parseJob } from '../../src/jobspec/index.ts';

async function apiJob(text: string, format: 'hcl' | 'json' = 'hcl'): Promise<Json> {
  const loaded = await parseJob(text, { format });
  return jobToApiJson(loaded.job.name, loaded.job.body);
}

const hclJob = (jobBody: string, groupBody: string, taskBody: string) => `job "j" {
  ${jobBody}
  group "g" {
    ${groupBody}
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
      ${taskBody}
    }
  }
}
`;

// The HCL parser loads on first use (seconds on a loaded machine, more under Stryker's instrumentation).
beforeAll(async () => {
  await parseJob('job "warm" {\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      config {\n        command = "/bin/true"\n      }\n    }\n  }\n}\n', { format: 'hcl' });
}, 120_000);

const groupOf = (job: Json) => (job['TaskGroups'] as Json[])[0]!;
const taskOf = (job: Json) => (groupOf(job)['Tasks'] as Json[])[0]!;

describe('the keys a job file gives, in the API JSON', () => {
  it('copies an ignored resources key under its API name: disk is DiskMB', async () => {
    const job = await apiJob(hclJob('', '', 'resources {\n        memory = 64\n        disk = 100\n      }'));
    expect(taskOf(job)['Resources']).toEqual({ MemoryMB: 64, DiskMB: 100 });
  });

  it('keeps an env and a meta map\'s keys as written, at the task and the group', async () => {
    const job = await apiJob(hclJob('', 'meta {\n      team_name = "a"\n    }', 'env {\n        foo_bar = "x"\n      }'));
    expect(taskOf(job)['Env']).toEqual({ foo_bar: 'x' });
    expect(groupOf(job)['Meta']).toEqual({ team_name: 'a' });
  });

  it('copies an ignored task block as a list under its plural API name: affinity is Affinities', async () => {
    const job = await apiJob(hclJob('', '', 'affinity {\n        attribute = "${node.datacenter}"\n        value = "dc1"\n      }'));
    expect(taskOf(job)['Affinities']).toEqual([{ Attribute: '${node.datacenter}', Value: 'dc1' }]);
    expect(taskOf(job)).not.toHaveProperty('Affinity');
  });

  it('copies an ignored network key under the network\'s own API name: mbits is MBits', async () => {
    const job = await apiJob(hclJob('', 'network {\n      mbits = 10\n      port "http" {}\n    }', ''));
    expect((groupOf(job)['Networks'] as Json[])[0]).toMatchObject({ Mode: 'host', MBits: 10 });
  });

  it("writes a constraint block as Nomad's API Constraint (LTarget, RTarget, Operand; operator \"=\" by default)", async () => {
    const job = await apiJob(hclJob('constraint {\n    attribute = "${attr.kernel.name}"\n    value = "linux"\n  }', '', ''));
    expect(job['Constraints']).toEqual([{ LTarget: '${attr.kernel.name}', RTarget: 'linux', Operand: '=' }]);
  });

  it('keeps two blocks under a singular API name as a list, and a list of one value as a list', async () => {
    const job = await apiJob(JSON.stringify({
      job: { j: { group: { g: {
        ephemeral_disk: [{ size: 100 }, { size: 200 }],
        task: { t: { driver: 'raw_exec', config: { command: '/bin/true' }, kind: ['connect-proxy'] } },
      } } } },
    }), 'json');
    expect(groupOf(job)['EphemeralDisk']).toEqual([{ Size: 100 }, { Size: 200 }]);
    expect(taskOf(job)['Kind']).toEqual(['connect-proxy']);
  });
});
