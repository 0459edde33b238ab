import { describe, expect, it } from 'vitest';
import { plainView, tableView } from '../../src/cli/run-view.ts';
import type { AllocSpec, AllocState, TaskState } from '../../src/jobspec/types.ts';

const alloc: AllocSpec = {
  id: 'a1',
  job: 'j',
  group: 'g',
  type: 'batch',
  tasks: [
    { name: 'cleanup', driver: 'mock', config: {}, lifecycle: { hook: 'poststop' } },
    { name: 'main', driver: 'mock', config: {} },
  ],
};
const task = (state: TaskState['state'], failed = false): TaskState => ({ state, failed, restarts: 0, events: [] });
const allocState = (clientStatus: AllocState['clientStatus'], main: TaskState, cleanup: TaskState): AllocState => ({ clientStatus, taskStates: { main, cleanup } });

function sink() {
  let text = '';
  return { out: { write: (s: string) => (text += s), columns: 100 }, text: () => text };
}

describe('run views', () => {
  it('redraws the table in place: cursor up over the old table, clear, draw', () => {
    const { out, text } = sink();
    const view = tableView(out, { color: false, now: () => 0 });
    view.start({ title: 'running job.nomad', dataDir: '/d', allocs: [alloc] });
    view.note('hello');
    view.state(alloc, allocState('complete', task('dead'), task('dead')));
    view.finish({ dataDir: '/d', results: [{ alloc, state: allocState('complete', task('dead'), task('dead')) }], exitCode: 0, forced: false });
    const t = text();
    // Header + column titles + two tasks = 4 lines to move back over each time.
    expect(t.split('\x1b[4A\r\x1b[J').length).toBeGreaterThanOrEqual(3);
    expect(t).toContain('hello\n');
    // Tasks in run order (main before its poststop task), whatever the job file's order.
    const last = t.slice(t.lastIndexOf('\x1b[J'));
    expect(last.indexOf('main')).toBeLessThan(last.indexOf('cleanup'));
    expect(last).toMatch(/alloc a1 {2}job j {2}group g {2}complete/);
    expect(t).toContain('\x1b[?25h'); // the cursor comes back
  });

  it('prints only the first start and the outcome of an allocation in plain mode', () => {
    const { out, text } = sink();
    const view = plainView(out, () => 0);
    view.start({ title: 'running job.nomad', dataDir: '/d', allocs: [alloc] });
    for (const s of ['pending', 'running', 'pending', 'running', 'complete'] as const) view.state(alloc, allocState(s, task('dead'), task('dead')));
    expect(text().match(/alloc a1 is \w+/g)).toEqual(['alloc a1 is running', 'alloc a1 is complete']);
  });
});
