/**
 * A group's `scaling` block (Nomad's horizontal scaling policy): kept in the job's API JSON as Nomad's server
 * canonicalises it (Min defaulting to the count, Enabled to true, the policy block as written), read back from
 * Nomad's API JSON, and checked with Nomad's rules (max required, min ≤ max, the count between them).
 */
import { describe, expect, it } from 'vitest';
import { parseJob } from '../../src/jobspec/index.ts';
import { jobToApiJson } from '../../src/api/job-json.ts';
import { problemsOf } from './problems-of.ts';

const jobWith = (count: number, scaling: string) =>
  `job "j" {\n  group "g" {\n    count = ${count}\n${scaling}\n    task "t" {\n      driver = "mock"\n    }\n  }\n}\n`;

async function apiScaling(text: string, format: 'hcl' | 'json' = 'hcl') {
  const loaded = await parseJob(text, { format });
  const job = jobToApiJson(loaded.job.name, loaded.job.body) as { TaskGroups: { Scaling?: unknown }[] };
  return { scaling: job.TaskGroups[0]!.Scaling, warnings: loaded.warnings, job };
}

describe('the group scaling block', () => {
  it("is kept as Nomad's server shows it, with no warning", async () => {
    const { scaling, warnings } = await apiScaling(jobWith(2, '    scaling {\n      max = 5\n      policy {\n        cooldown = "1m"\n      }\n    }'));
    expect(scaling).toEqual({ Type: 'horizontal', Target: { Namespace: 'default', Job: 'j', Group: 'g' }, Min: 2, Max: 5, Enabled: true, Policy: { cooldown: '1m' } });
    expect(warnings).toEqual([]);
  });

  it("reads Nomad's API JSON back as it was, a disabled policy and a zero minimum included", async () => {
    const first = await apiScaling(jobWith(1, '    scaling {\n      min = 0\n      max = 3\n      enabled = false\n    }'));
    const again = await apiScaling(JSON.stringify({ Job: { ...first.job, TaskGroups: [{ ...first.job.TaskGroups[0], Scaling: { ...(first.scaling as object), ID: 'x', CreateIndex: 9, ModifyIndex: 9 } }] } }), 'json');
    expect(again.scaling).toEqual(first.scaling);
    expect(again.scaling).toMatchObject({ Min: 0, Enabled: false, Policy: null });
    expect(again.warnings).toEqual([]);
  });

  it.each([
    ['no max', 3, '    scaling {\n      min = 1\n    }', 'job.j.group.g.scaling: maximum count must be specified'],
    ['a min above the max', 3, '    scaling {\n      min = 4\n      max = 3\n    }', 'job.j.group.g.scaling.max: maximum count must not be less than minimum count (3 < 4)'],
    ['a count above the max', 5, '    scaling {\n      max = 4\n    }', 'job.j.group.g.scaling.max: task group count must not be greater than maximum count in scaling policy (count 5 > max 4)'],
    ['a count below the min', 1, '    scaling {\n      min = 2\n      max = 4\n    }', 'job.j.group.g.scaling.min: task group count must not be less than minimum count in scaling policy (count 1 < min 2)'],
    ['a type other than horizontal', 1, '    scaling {\n      max = 4\n      type = "vertical_cpu"\n    }', 'job.j.group.g.scaling.type: must be one of "horizontal"; got "vertical_cpu"'],
  ])('refuses %s, naming the field', async (_what, count, block, problem) => {
    expect(await problemsOf(jobWith(count, block))).toContainEqual(expect.stringContaining(problem));
  });

  it("still warns about a task's scaling block (Nomad Enterprise's vertical scaling)", async () => {
    const text = 'job "j" {\n  group "g" {\n    task "t" {\n      driver = "mock"\n      scaling "cpu" {\n        max = 500\n      }\n    }\n  }\n}\n';
    const { warnings } = await parseJob(text, { format: 'hcl' });
    expect(warnings.map((w) => `${w.path}: ${w.message}`)).toEqual([expect.stringContaining('job.j.group.g.task.t.scaling: ignored')]);
  });
});
