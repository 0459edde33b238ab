/**
 * Why an update cannot be applied in place (destructiveChange in src/api/job-diff.ts): each reason by its
 * exact words, the first that applies.
 */
import { describe, expect, it } from 'vitest';
import { destructiveChange } from '../../src/api/job-diff.ts';
import type { AllocSpec, TaskSpec } from '../../src/jobspec/types.ts';

const task: TaskSpec = { name: 't', driver: 'raw_exec', config: { command: '/bin/true' } };
const base: AllocSpec = { id: 'a', job: 'j', group: 'g', type: 'service', tasks: [task] };

describe('destructiveChange', () => {
  it.each<[string, AllocSpec, string | undefined]>([
    ['no change', { ...base }, undefined],
    ['a network block added', { ...base, network: { mode: 'host', ports: [] } } as AllocSpec, 'the network block changed'],
    ['a task added', { ...base, tasks: [task, { ...task, name: 'u' }] }, 'the number of tasks changed'],
    ['a task renamed', { ...base, tasks: [{ ...task, name: 'u' }] }, 'task "t" was removed'],
    ['the group meta', { ...base, meta: { a: '1' } }, 'task "t": meta changed'],
    ['the driver', { ...base, tasks: [{ ...task, driver: 'mock' }] }, 'task "t": driver changed'],
  ])('%s', (_what, next, reason) => {
    expect(destructiveChange(base, next)).toBe(reason);
  });
});
