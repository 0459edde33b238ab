/**
 * A job file's `resources` block reaches the task's environment under Nomad's names (taskenv/env.go):
 * NOMAD_CPU_LIMIT (MHz), NOMAD_MEMORY_LIMIT and NOMAD_MEMORY_MAX_LIMIT (MB). The loader and the env must
 * agree on the spec's field names, so these run the whole way: job file → loadJobFile → buildTaskEnv.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTaskEnv } from '../../src/env/task-env.ts';
import type { NodeInfo } from '../../src/env/node-info.ts';
import { loadJobFile } from '../../src/jobspec/load-job-file.ts';

const node: NodeInfo = { id: 'n1', name: 'worker-1', datacenter: 'dc1', region: 'global', attributes: {}, meta: {} };

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'allocrun-env-resources-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The env of the one task of a job file whose task has `resources` as written (or no block at all). */
async function envOfJobFile(resources: string | undefined, format: 'hcl' | 'json' = 'hcl'): Promise<Record<string, string>> {
  const file = join(dir, `job-${Math.random().toString(36).slice(2)}.${format === 'hcl' ? 'nomad' : 'json'}`);
  if (format === 'hcl') {
    const block = resources === undefined ? '' : `      resources {\n${resources}\n      }\n`;
    await writeFile(file, `job "j" {\n  group "g" {\n    task "t" {\n      driver = "mock"\n${block}    }\n  }\n}\n`);
  } else {
    await writeFile(file, resources ?? '');
  }
  const [alloc] = await loadJobFile(file);
  const task = alloc!.tasks[0]!;
  return { ...buildTaskEnv({ node, alloc: alloc!, task, allocDir: '/a', hostEnv: {} }).vars };
}

const resourceVars = (vars: Record<string, string>) => Object.fromEntries(Object.entries(vars).filter(([k]) => /^NOMAD_(CPU|MEMORY)_/.test(k)));

describe('resources in the task env, from a job file', () => {
  it.each([
    ['memory alone sets NOMAD_MEMORY_LIMIT in MB', 'memory = 64', { NOMAD_MEMORY_LIMIT: '64' }],
    ['cpu alone sets NOMAD_CPU_LIMIT in MHz', 'cpu = 500', { NOMAD_CPU_LIMIT: '500' }],
    ['cpu and memory set both', 'cpu = 250\nmemory = 128', { NOMAD_CPU_LIMIT: '250', NOMAD_MEMORY_LIMIT: '128' }],
    ['memory_max sets NOMAD_MEMORY_MAX_LIMIT beside the limit', 'memory = 64\nmemory_max = 256', { NOMAD_MEMORY_LIMIT: '64', NOMAD_MEMORY_MAX_LIMIT: '256' }],
  ])('%s', async (_rule, block, expected) => {
    expect(resourceVars(await envOfJobFile(block))).toEqual(expected);
  });

  it('a task without a resources block gets no resource variables', async () => {
    expect(resourceVars(await envOfJobFile(undefined))).toEqual({});
  });

  it("a job in Nomad's API JSON gets the same variables as its HCL", async () => {
    const json = JSON.stringify({ Job: { ID: 'j', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'mock', Resources: { CPU: 300, MemoryMB: 96, MemoryMaxMB: 192 } }] }] } });
    expect(resourceVars(await envOfJobFile(json, 'json'))).toEqual({ NOMAD_CPU_LIMIT: '300', NOMAD_MEMORY_LIMIT: '96', NOMAD_MEMORY_MAX_LIMIT: '192' });
  });

  it('a task can interpolate its memory limit into its own env', async () => {
    const file = join(dir, 'interp.nomad');
    await writeFile(file, 'job "j" {\n  group "g" {\n    task "t" {\n      driver = "mock"\n      env {\n        HEAP = "${NOMAD_MEMORY_LIMIT}m"\n      }\n      resources {\n        memory = 64\n      }\n    }\n  }\n}\n');
    const [alloc] = await loadJobFile(file);
    const env = buildTaskEnv({ node, alloc: alloc!, task: alloc!.tasks[0]!, allocDir: '/a', hostEnv: {} });
    expect(env.vars.HEAP).toBe('64m');
  });
});
