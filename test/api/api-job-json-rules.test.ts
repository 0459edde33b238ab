/**
 * Job JSON for what allocrun does not model (src/api/job-json.ts): a group's network block as Nomad's
 * NetworkResource, and blocks allocrun ignores kept with PascalCase keys, a one-element block list
 * unwrapped where the API name is singular.
 */
import { describe, expect, it } from 'vitest';
import { jobToApiJson, type Json } from '../../src/api/job-json.ts';
import { parseJob } from '../../src/jobspec/index.ts';

async function groupOf(groupHcl: string): Promise<Json> {
  const loaded = await parseJob(
    `job "j" {\n  group "g" {\n    ${groupHcl}\n    task "t" {\n      driver = "raw_exec"\n      config {\n        command = "/bin/true"\n      }\n    }\n  }\n}\n`,
    { format: 'hcl' },
  );
  return (jobToApiJson(loaded.job.name, loaded.job.body).TaskGroups as Json[])[0]!;
}

describe('a group network block as a NetworkResource', () => {
  it('static ports under ReservedPorts, dynamic ones under DynamicPorts with Value 0, each with its defaults', async () => {
    const g = await groupOf(`network {
      mode = "host"
      port "http" {
        static = 8080
        to = 80
        host_network = "public"
        ignore_collision = true
      }
      port "db" {}
    }`);
    expect(g.Networks).toEqual([
      {
        Mode: 'host',
        ReservedPorts: [{ Label: 'http', Value: 8080, To: 80, HostNetwork: 'public', IgnoreCollision: true }],
        DynamicPorts: [{ Label: 'db', Value: 0, To: 0, HostNetwork: 'default', IgnoreCollision: false }],
      },
    ]);
  });

  it('a group without a network block has no Networks', async () => {
    expect((await groupOf('')).Networks).toBeUndefined();
  });
});

describe('blocks allocrun does not model keep their content in PascalCase', () => {
  it('a single block under a singular name is unwrapped, its keys PascalCased deep, lists kept', async () => {
    const g = await groupOf(`ephemeral_disk {
      size_mb = 300
      sticky = true
    }
    spread {
      attribute = "node_dc"
      target "dc1" {
        percent = 50
      }
    }
    constraint {
      attribute = "a"
      value = "b"
    }`);
    expect(g.EphemeralDisk).toEqual({ SizeMb: 300, Sticky: true });
    // A plural API name stays a list (Spreads); the content of a block is PascalCased as it is.
    expect(g.Spreads).toEqual([{ Attribute: 'node_dc', Target: { Dc1: [{ Percent: 50 }] } }]);
    // Constraints, which placement reads, are in Nomad's own shape.
    expect(g.Constraints).toEqual([{ LTarget: 'a', RTarget: 'b', Operand: '=' }]);
  });
});
