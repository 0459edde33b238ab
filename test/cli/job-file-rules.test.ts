import { describe, expect, it } from 'vitest';
import { agentWarningLines } from '../../src/cli/job-file.ts';
import type { SpecProblem } from '../../src/jobspec/index.ts';

const own: SpecProblem[] = [{ path: 'job.j.constraint', message: 'ignored: allocrun does not implement "constraint"', file: 'j.nomad', line: 3, column: 3 }];

describe('agentWarningLines', () => {
  it.each([
    ['says nothing the file\'s own warnings said (job run printed each twice)', 'job.j.constraint: ignored: allocrun does not implement "constraint"', ''],
    ['keeps what only the agent found', 'job.j.constraint: ignored: allocrun does not implement "constraint"\njob.j.group.g: the agent adds this', 'warning: job.j.group.g: the agent adds this\n'],
    ['says nothing for no warnings', '', ''],
    ['says nothing for an absent field', undefined, ''],
  ])('%s', (_why, agent, out) => {
    expect(agentWarningLines(agent, own)).toBe(out);
  });
});
