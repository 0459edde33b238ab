/**
 * How an interpolation key is resolved (Nomad's taskenv): `node.*` names the node, `attr.`, `meta.` and
 * `env.` prefixes name a map, and any other key, dots or not, is a variable of the env.
 */
import { describe, expect, it } from 'vitest';
import { buildTaskEnv } from '../../src/env/task-env.ts';
import type { NodeInfo } from '../../src/env/node-info.ts';
import type { AllocSpec, TaskSpec } from '../../src/jobspec/types.ts';

const node: NodeInfo = { id: 'n1', name: 'worker-1', datacenter: 'dc1', region: 'global', attributes: { a: 'attr-a' }, meta: { m: 'meta-m' } };
const task: TaskSpec = { name: 't', driver: 'mock', config: {} };
const alloc: AllocSpec = { id: 'a1', job: 'j', group: 'g', type: 'batch', tasks: [task] };

describe('interpolation keys', () => {
  it('${node.class} is empty for a node without a class, as in Nomad, and the class when it has one', () => {
    expect(buildTaskEnv({ node, alloc, task, allocDir: '/a' }).interpolate('[${node.class}]')).toBe('[]');
    expect(buildTaskEnv({ node: { ...node, class: 'gpu' }, alloc, task, allocDir: '/a' }).interpolate('[${node.class}]')).toBe('[gpu]');
  });

  it('${node.pool} is default for a node that names no pool, as in Nomad, and its pool when it names one', () => {
    expect(buildTaskEnv({ node, alloc, task, allocDir: '/a' }).interpolate('[${node.pool}]')).toBe('[default]');
    expect(buildTaskEnv({ node: { ...node, pool: 'gpu' }, alloc, task, allocDir: '/a' }).interpolate('[${node.pool}]')).toBe('[gpu]');
  });

  it.each(['attrs', 'metadata', 'envoy', 'attr', 'meta'])('a variable named %s (a prefix without its dot) is a variable', (name) => {
    const env = buildTaskEnv({ node, alloc, task, allocDir: '/a', hostEnv: { [name]: 'host' } });
    expect(env.lookup(name)).toBe('host');
    expect(env.interpolate(`\${${name}}`)).toBe('host');
  });

  it.each([
    ['attr.a', 'attr-a'],
    ['meta.m', 'meta-m'],
    ['env.V', 'host-v'],
  ])('${%s} reads its map', (key, expected) => {
    expect(buildTaskEnv({ node, alloc, task, allocDir: '/a', hostEnv: { V: 'host-v' } }).lookup(key)).toBe(expected);
  });
});
