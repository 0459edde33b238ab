/**
 * A job's `node_pool` (HCL) and `NodePool` (API JSON) are read, not ignored: no warning, and the job's API JSON
 * carries the pool placement judges (constraints.ts) and the agent checks exists (api/node-pools.ts).
 */
import { describe, expect, it } from 'vitest';
import { parseJob } from '../../src/jobspec/index.ts';
import { jobToApiJson } from '../../src/api/job-json.ts';
import { infeasibility, type NodeFacts } from '../../src/jobspec/constraints.ts';

const hcl = (pool: string) => `job "j" {\n  node_pool = "${pool}"\n  group "g" {\n    task "t" {\n      driver = "mock"\n    }\n  }\n}\n`;
const api = (pool: string) => JSON.stringify({ Job: { ID: 'j', NodePool: pool, TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'mock' }] }] } });

describe('node_pool', () => {
  it.each([
    ['HCL', () => parseJob(hcl('gpu'), { format: 'hcl', file: 'job.nomad' })],
    ['API JSON', () => parseJob(api('gpu'), { format: 'json' })],
  ])('is read from %s without a warning, and the API JSON carries it', async (_format, load) => {
    const loaded = await load();
    expect(loaded.warnings).toEqual([]);
    expect(loaded.job.body.node_pool).toBe('gpu');
    expect(jobToApiJson(loaded.job.name, loaded.job.body)['NodePool']).toBe('gpu');
  });

  it('is absent from the API JSON of a job that names none (the agent reads that as "default")', async () => {
    const loaded = await parseJob(hcl('x').replace('  node_pool = "x"\n', ''), { format: 'hcl', file: 'job.nomad' });
    expect(jobToApiJson(loaded.job.name, loaded.job.body)).not.toHaveProperty('NodePool');
  });
});

describe('a job\'s node pool judged on the node', () => {
  const node = (pool: string): NodeFacts => ({ id: 'n', name: 'box', datacenter: 'dc1', class: '', pool, attributes: {}, meta: {} });
  const job = (over: Record<string, unknown>) => ({ ID: 'j', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't' }] }], ...over });
  it.each([
    [{}, 'default', undefined],
    [{ NodePool: '' }, 'default', undefined],
    [{ NodePool: 'default' }, 'default', undefined],
    [{ NodePool: 'all' }, 'default', undefined],
    [{ NodePool: 'all' }, 'gpu', undefined],
    [{ NodePool: 'gpu' }, 'gpu', undefined],
    [{ NodePool: 'gpu' }, 'default', { pool: 'gpu' }],
    [{}, 'gpu', { pool: 'default' }],
    // The pool leaves the node out before its datacenter is looked at, as Nomad picks the pool's nodes first.
    [{ NodePool: 'gpu', Datacenters: ['eu'] }, 'default', { pool: 'gpu' }],
  ])('job %j on a node in %s → %j', (over, pool, want) => {
    expect(infeasibility(job(over), 'g', node(pool))).toEqual(want);
  });
});
