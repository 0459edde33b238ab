import { describe, expect, it } from 'vitest';
import { destructiveChange, groupUpdate } from '../../src/api/job-diff.ts';
import type { AllocSpec, TaskSpec } from '../../src/jobspec/types.ts';

const task: TaskSpec = { name: 't', driver: 'raw_exec', config: { command: '/bin/true' }, killTimeout: 5000 };
const base: AllocSpec = { id: 'a', job: 'j', group: 'g', type: 'service', tasks: [task] };
const withTask = (t: Partial<TaskSpec>): AllocSpec => ({ ...base, tasks: [{ ...task, ...t }] });

describe('groupUpdate (Nomad tasksUpdated)', () => {
  it.each([
    ['the same spec under another id', { ...base, id: 'b', modifyIndex: 9 }, 'ignore'],
    ['the same spec in another deployment (the version\'s, not the group\'s)', { ...base, deploymentId: 'd2' }, 'ignore'],
    ['a kill timeout', withTask({ killTimeout: 9000 }), 'inplace'],
    ['a kill signal', withTask({ killSignal: 'SIGINT' }), 'inplace'],
    ['a restart policy', { ...base, restart: { attempts: 1, interval: 1, delay: 1, mode: 'fail' } }, 'inplace'],
    ['a shutdown delay', withTask({ shutdownDelay: 100 }), 'inplace'],
    ['the driver', withTask({ driver: 'mock' }), 'destructive'],
    ['the config', withTask({ config: { command: '/bin/false' } }), 'destructive'],
    ['the env', withTask({ env: { A: '1' } }), 'destructive'],
    ['the task meta', withTask({ meta: { a: '1' } }), 'destructive'],
    ['the job or group meta', { ...base, meta: { a: '1' } }, 'destructive'],
    ['the resources', withTask({ resources: { memoryMB: 64 } }), 'destructive'],
    ['the log config', withTask({ logs: { maxFiles: 2, maxFileSize: 1 } }), 'destructive'],
    ['the lifecycle', withTask({ lifecycle: { hook: 'prestart' } }), 'destructive'],
    ['the user it runs as', withTask({ user: 'nobody' }), 'destructive'],
    ['a task added', { ...base, tasks: [task, { ...task, name: 'u' }] }, 'destructive'],
    ['a task renamed', withTask({ name: 'u' }), 'destructive'],
  ] as const)('%s → %s', (_what, next, expected) => {
    expect(groupUpdate(base, next as AllocSpec)).toBe(expected);
  });

  it('says what made a change destructive', () => {
    expect(destructiveChange(base, withTask({ config: {} }))).toBe('task "t": config changed');
    expect(destructiveChange(base, base)).toBeUndefined();
  });
});
