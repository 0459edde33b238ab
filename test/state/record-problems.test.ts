/**
 * A stored allocation record is checked before anything reads it (src/state/record-check.ts): each way a
 * record can be damaged is named by the field at fault, every problem of one record is listed, and a sound
 * record has none. Table-tested on the pure function, one damage per row.
 */
import { describe, expect, it } from 'vitest';
import { checkRecord, recordProblems } from '../../src/state/record-check.ts';

type Rec = Record<string, unknown> & { spec: Record<string, unknown>; state: Record<string, unknown> };
const sound = (): Rec => ({
  spec: { id: 'a1', job: 'j', group: 'g', type: 'batch', tasks: [{ name: 't', driver: 'mock', config: {} }] },
  state: { clientStatus: 'running', taskStates: { t: { state: 'running', failed: false, events: [] } } },
  createdAt: 1,
  updatedAt: 2,
});
const TASK_SHAPE = 'expected { state: pending|running|dead, failed, events: [...] }';
const SNAPSHOT = 'snapshot: expected a runner snapshot written by allocrun';

describe('recordProblems', () => {
  it.each(['pending', 'running', 'complete', 'failed'])('a sound record with clientStatus %s has no problem', (clientStatus) => {
    const r = sound();
    r.state.clientStatus = clientStatus;
    expect(recordProblems(r, 'a1')).toEqual([]);
  });

  it.each(['pending', 'running', 'dead'])('a task in state %s is sound', (state) => {
    const r = sound();
    r.state.taskStates = { t: { state, failed: true, events: [{ type: 'Started' }] } };
    expect(recordProblems(r, 'a1')).toEqual([]);
  });

  it('a sound record with its runner snapshot, and one without createdAt, have no problem', () => {
    expect(recordProblems({ ...sound(), snapshot: { __allocrun: 'alloc-runner', snapshot: {} } }, 'a1')).toEqual([]);
    const { createdAt: _c, ...noCreated } = sound();
    expect(recordProblems(noCreated, 'a1')).toEqual([]);
  });

  it.each<[string, unknown, string]>([
    ['a list', [], 'expected a JSON object, got a list'],
    ['null', null, 'expected a JSON object, got null'],
    ['a string', 'x', 'expected a JSON object, got string'],
    ['a number', 3, 'expected a JSON object, got number'],
  ])('a record that is %s is refused as a whole', (_what, value, problem) => {
    expect(recordProblems(value, 'a1')).toEqual([problem]);
  });

  it.each<[string, (r: Rec) => void, string[]]>([
    ['a spec stored under another id', (r) => (r.spec.id = 'b2'), ['spec.id is "b2" but the record is stored for allocation "a1"']],
    ['a spec that is not an object', (r) => (r.spec = 'x' as never), ['spec: expected an AllocSpec object, got "x"']],
    ['a spec with empty task fields, each named', (r) => (r.spec.tasks = [{ name: '', driver: '', config: {} }]), ['spec.tasks[0].name: must not be empty; got ""; spec.tasks[0].driver: must not be empty; got ""']],
    ['a state that is not an object', (r) => (r.state = [] as never), ['state: expected an object']],
    ['an unknown clientStatus', (r) => (r.state.clientStatus = 'lost'), ['state.clientStatus: expected one of pending, running, complete, failed']],
    ['taskStates that is a list', (r) => (r.state.taskStates = []), ['state.taskStates: expected an object']],
    ['a task state that is not an object', (r) => (r.state.taskStates = { 'my task': null }), ['state.taskStates["my task"]: expected an object']],
    ['a task state with an unknown state', (r) => (r.state.taskStates = { t: { state: 'gone', failed: false, events: [] } }), [`state.taskStates["t"]: ${TASK_SHAPE}`]],
    ['a task state whose events are not a list', (r) => (r.state.taskStates = { t: { state: 'dead', failed: false, events: {} } }), [`state.taskStates["t"]: ${TASK_SHAPE}`]],
    ['a task state whose failed is not a boolean', (r) => (r.state.taskStates = { t: { state: 'dead', failed: 'no', events: [] } }), [`state.taskStates["t"]: ${TASK_SHAPE}`]],
    ['an updatedAt that is a string', (r) => (r.updatedAt = '2026-01-01'), ['updatedAt: expected a time in milliseconds']],
    ['an updatedAt that is missing', (r) => delete r.updatedAt, ['updatedAt: expected a time in milliseconds']],
    ['an updatedAt that is not finite (NaN)', (r) => (r.updatedAt = NaN), ['updatedAt: expected a time in milliseconds']],
    ['a createdAt that is not a time', (r) => (r.createdAt = 'yesterday'), ['createdAt: expected a time in milliseconds']],
    ['a snapshot that is not an object', (r) => (r.snapshot = 'x'), [SNAPSHOT]],
    ['a snapshot another program wrote', (r) => (r.snapshot = { __allocrun: 'other', snapshot: {} }), [SNAPSHOT]],
    ['a snapshot without its runner snapshot', (r) => (r.snapshot = { __allocrun: 'alloc-runner', snapshot: 1 }), [SNAPSHOT]],
    ['several damages at once, each listed', (r) => ((r.state.clientStatus = 'lost'), (r.updatedAt = 'x')), ['state.clientStatus: expected one of pending, running, complete, failed', 'updatedAt: expected a time in milliseconds']],
  ])('names %s', (_what, damage, problems) => {
    const r = sound();
    damage(r);
    expect(recordProblems(r, 'a1')).toEqual(problems);
  });
});

describe('checkRecord', () => {
  it('returns a sound record as it is', () => {
    const r = sound();
    expect(checkRecord(r, 'a1')).toBe(r);
  });

  it('throws every problem of a damaged record in one message, joined by "; "', () => {
    const r = sound();
    r.state.clientStatus = 'lost';
    r.updatedAt = 'x';
    expect(() => checkRecord(r, 'a1')).toThrow('state.clientStatus: expected one of pending, running, complete, failed; updatedAt: expected a time in milliseconds');
  });
});
