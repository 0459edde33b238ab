/**
 * NOMAD_CPU_LIMIT, NOMAD_MEMORY_LIMIT and NOMAD_MEMORY_MAX_LIMIT are set only for a resource that is given
 * and non-zero, as Nomad's taskenv sets them; a missing one is absent, never "undefined" or "0".
 */
import { describe, expect, it } from 'vitest';
import { buildTaskEnv } from '../../src/env/task-env.ts';
import type { NodeInfo } from '../../src/env/node-info.ts';
import type { AllocSpec, TaskSpec } from '../../src/jobspec/types.ts';

const node: NodeInfo = { id: 'n1', name: 'worker-1', datacenter: 'dc1', region: 'global', attributes: {}, meta: {} };

function limits(resources: TaskSpec['resources']): Record<string, string> {
  const task: TaskSpec = { name: 't', driver: 'mock', config: {}, ...(resources !== undefined ? { resources } : {}) };
  const alloc: AllocSpec = { id: 'a1', job: 'j', group: 'g', type: 'batch', tasks: [task] };
  const vars = buildTaskEnv({ node, alloc, task, allocDir: '/a' }).vars;
  return Object.fromEntries(Object.entries(vars).filter(([k]) => /^NOMAD_(CPU|MEMORY|MEMORY_MAX)_LIMIT$/.test(k)));
}

describe('resource limits in the task env', () => {
  it.each<[string, TaskSpec['resources'], Record<string, string>]>([
    ['no resources block: none', undefined, {}],
    ['an empty block: none', {}, {}],
    ['zero is unset: none', { cpu: 0, memoryMB: 0, memoryMaxMB: 0 }, {}],
    ['each one given', { cpu: 500, memoryMB: 64, memoryMaxMB: 128 }, { NOMAD_CPU_LIMIT: '500', NOMAD_MEMORY_LIMIT: '64', NOMAD_MEMORY_MAX_LIMIT: '128' }],
    ['only memory', { memoryMB: 256 }, { NOMAD_MEMORY_LIMIT: '256' }],
    ['a value that is not a number: none', { cpu: '500' as unknown as number }, {}],
  ])('%s', (_rule, resources, expected) => {
    expect(limits(resources)).toStrictEqual(expected);
  });
});
