/**
 * `allocrun job plan`'s text (src/cli/job-plan-format.ts), row by row against what Nomad's `job plan` prints for
 * the same plan (command/job_plan.go): markers and their alignment, groups' updates, tasks' annotations, the
 * verbose expansion, the scheduler dry-run section, the exit status, and Go's %q.
 */
import { describe, expect, it } from 'vitest';
import { formatDryRun, formatJobDiff, goQuote, jobModifyIndexLines, planExitCode, type JobDiffBody, type PlanResponseBody } from '../../src/cli/job-plan-format.ts';

const added: JobDiffBody = {
  Type: 'Added', ID: 'web',
  Fields: [{ Type: 'Added', Name: 'ID', Old: '', New: 'web' }, { Type: 'Added', Name: 'Type', Old: '', New: 'service' }],
  TaskGroups: [{
    Type: 'Added', Name: 'g', Updates: { create: 1 },
    Fields: [{ Type: 'Added', Name: 'Count', Old: '', New: '1', Annotations: ['forces create'] }],
    Tasks: [{ Type: 'Added', Name: 't', Annotations: ['forces create'], Fields: [{ Type: 'Added', Name: 'Driver', Old: '', New: 'mock' }] }],
  }],
};

const edited: JobDiffBody = {
  Type: 'Edited', ID: 'web',
  Fields: [{ Type: 'Edited', Name: 'Priority', Old: '50', New: '60' }],
  TaskGroups: [{
    Type: 'Edited', Name: 'g', Updates: { 'create/destroy update': 1, create: 2 },
    Fields: [{ Type: 'Edited', Name: 'Count', Old: '1', New: '3', Annotations: ['forces create'] }],
    Tasks: [
      {
        Type: 'Edited', Name: 't', Annotations: ['forces create/destroy update'],
        Fields: [{ Type: 'Added', Name: 'Env[A]', Old: '', New: 'x' }, { Type: 'Edited', Name: 'KillTimeout', Old: '5000000000', New: '9000000000' }],
        Objects: [{ Type: 'Edited', Name: 'Config', Fields: [{ Type: 'Edited', Name: 'run_for', Old: '1h', New: '2h' }, { Type: 'None', Name: 'exit_code', Old: '0', New: '0' }] }],
      },
      { Type: 'None', Name: 'u' },
    ],
  }],
};

const groupGone: JobDiffBody = {
  Type: 'Edited', ID: 'web',
  TaskGroups: [
    { Type: 'Deleted', Name: 'old', Updates: { destroy: 1 }, Tasks: [{ Type: 'Deleted', Name: 't', Annotations: ['forces destroy'] }] },
    { Type: 'None', Name: 'keep', Updates: { ignore: 1 }, Tasks: [{ Type: 'None', Name: 'k' }] },
  ],
};

describe('formatJobDiff', () => {
  it.each<[string, JobDiffBody, boolean, string[]]>([
    ['a new job: one line per group and task, their fields only when verbose', added, false, [
      '+ Job: "web"',
      '+ Task Group: "g" (1 create)',
      '  + Task: "t" (forces create)',
    ]],
    ['a new job, verbose: every field, values aligned under the longest name', added, true, [
      '+ Job: "web"',
      '+ ID:   "web"',
      '+ Type: "service"',
      '+ Task Group: "g" (1 create)',
      '  + Count: "1" (forces create)',
      '  + Task: "t" (forces create)',
      '    + Driver: "mock"',
    ]],
    ['an edited job: markers right-aligned, updates in name order, blocks closed under their marker', edited, false, [
      '+/- Job: "web"',
      '+/- Priority: "50" => "60"',
      '+/- Task Group: "g" (2 create, 1 create/destroy update)',
      '  +/- Count: "1" => "3" (forces create)',
      '  +/- Task: "t" (forces create/destroy update)',
      '    +   Env[A]:      "x"',
      '    +/- KillTimeout: "5000000000" => "9000000000"',
      '    +/- Config {',
      '      +/- run_for:   "1h" => "2h"',
      '          exit_code: "0"',
      '        }',
      '      Task: "u"',
    ]],
    ['an unchanged job: no markers, its allocations ignored', {
      Type: 'None', ID: 'web', TaskGroups: [{ Type: 'None', Name: 'g', Updates: { ignore: 1 }, Tasks: [{ Type: 'None', Name: 't' }] }],
    }, false, [
      'Job: "web"',
      'Task Group: "g" (1 ignore)',
      '  Task: "t"',
    ]],
    ['a deleted group beside an unchanged one: a blank line between groups, the unchanged one and its tasks indented past the markers', groupGone, false, [
      '+/- Job: "web"',
      '- Task Group: "old" (1 destroy)',
      '  - Task: "t" (forces destroy)',
      '',
      '  Task Group: "keep" (1 ignore)',
      '    Task: "k"',
    ]],
    ['names quoted as Go quotes them', { Type: 'None', ID: 'we"b', TaskGroups: [] }, false, ['Job: "we\\"b"']],
  ])('%s', (_name, diff, verbose, lines) => {
    expect(formatJobDiff(diff, verbose).split('\n')).toEqual(lines);
  });
});

describe('formatDryRun', () => {
  const plan = (failed: PlanResponseBody['FailedTGAllocs']): PlanResponseBody => ({ JobModifyIndex: 0, Diff: null, FailedTGAllocs: failed });
  it.each<[string, PlanResponseBody, string, string[]]>([
    ['everything placed', plan(null), 'service', ['- All tasks successfully allocated.']],
    ['groups that failed, in name order, a blank line between, with why', plan({
      b: { NodesEvaluated: 1, NodesExhausted: 1, DimensionExhausted: { memory: 1 }, CoalescedFailures: 2 },
      a: { NodesEvaluated: 0, NodesAvailable: {} },
    }), 'service', [
      '- WARNING: Failed to place all allocations.',
      '  Task Group "a" (failed to place 1 allocation):',
      '    * No nodes were eligible for evaluation',
      '',
      '  Task Group "b" (failed to place 3 allocations):',
      '    * Resources exhausted on 1 nodes',
      '    * Dimension "memory" exhausted on 1 nodes',
    ]],
    ['a system job is warned about all nodes', plan({ g: { NodesEvaluated: 0 } }), 'system', [
      '- WARNING: Failed to place allocations on all nodes.',
      '  Task Group "g" (failed to place 1 allocation):',
      '    * No nodes were eligible for evaluation',
    ]],
  ])('%s', (_name, p, type, lines) => {
    expect(formatDryRun(p, type)).toEqual(lines);
  });
});

describe('planExitCode', () => {
  const updates = (u: Record<string, number>): PlanResponseBody => ({ JobModifyIndex: 1, Diff: { Type: 'Edited', ID: 'j' }, Annotations: { DesiredTGUpdates: { a: { Ignore: 1 }, g: u } } });
  it.each<[string, PlanResponseBody, 0 | 1]>([
    ['an unchanged job, whatever the groups say', { ...updates({ Place: 1 }), Diff: { Type: 'None', ID: 'j' } }, 0],
    ['no diff at all', { ...updates({ Place: 1 }), Diff: null }, 0],
    ['only updates in place and ignored allocations', updates({ InPlaceUpdate: 2, Ignore: 1 }), 0],
    ['allocations placed', updates({ Place: 1 }), 1],
    ['allocations stopped', updates({ Stop: 1 }), 1],
    ['allocations replaced', updates({ DestructiveUpdate: 1 }), 1],
    ['allocations migrated', updates({ Migrate: 1 }), 1],
    ['canaries placed', updates({ Canary: 1 }), 1],
  ])('%s: %i', (_name, p, code) => {
    expect(planExitCode(p)).toBe(code);
  });
});

describe('goQuote', () => {
  it.each([
    ['plain', '"plain"'],
    ['a"b\\c', '"a\\"b\\\\c"'],
    ['\n\t\r', '"\\n\\t\\r"'],
    ['\x07\x08\x0b\x0c', '"\\a\\b\\v\\f"'],
    ['\x01\x7f', '"\\x01\\x7f"'],
    ['\u0085', '"\\u0085"'],
    ['\u2028', '"\\u2028"'],
    ['é✓', '"é✓"'],
  ])('%j → %s', (s, quoted) => {
    expect(goQuote(s)).toBe(quoted);
  });
});

describe('jobModifyIndexLines', () => {
  it('names the index and the command that submits exactly what was planned', () => {
    const lines = jobModifyIndexLines(42, 'web.nomad');
    expect(lines[0]).toBe('Job Modify Index: 42');
    expect(lines).toContain('allocrun job run -check-index 42 web.nomad');
  });
});
