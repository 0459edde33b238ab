/** Nomad's constraint operators and datacenters judged against one node, as scheduler/feasible.go judges each (rows). */
import { describe, expect, it } from 'vitest';
import { constraintHolds, constraintOf, constraintProblem, datacenterMatches, infeasibility, type NodeFacts } from '../../src/jobspec/constraints.ts';

const node: NodeFacts = {
  id: '11111111-2222-4333-8444-555555555555', name: 'box', datacenter: 'dc1', class: '', pool: 'default',
  attributes: { 'kernel.name': 'linux', 'cpu.numcores': '2', 'nomad.version': '1.7.3', 'driver.raw_exec': '1', 'os.name': 'linux', tags: 'a,b,c' },
  meta: { rack: 'r1' },
};
const holds = (attribute: string, operator: string, value = '') => constraintHolds(constraintOf({ attribute, operator, value }), node);

describe('constraintHolds', () => {
  it.each([
    ['${attr.kernel.name}', '=', 'linux', true],
    ['${attr.kernel.name}', '==', 'windows', false],
    ['${attr.kernel.name}', 'is', 'linux', true],
    ['${attr.kernel.name}', '!=', 'windows', true],
    ['${attr.missing}', '!=', 'x', true],
    ['${attr.missing}', '=', '', false],
    ['${attr.cpu.numcores}', '>=', '2', true],
    ['${attr.cpu.numcores}', '>', '10', false],
    ['${attr.cpu.numcores}', '<', '10', true],
    ['${attr.nomad.version}', 'version', '>= 1.6, < 2.0', true],
    ['${attr.nomad.version}', 'version', '~> 1.6', true],
    ['${attr.nomad.version}', 'semver', '< 1.7.0', false],
    ['${attr.kernel.name}', 'regexp', '^lin', true],
    ['${attr.tags}', 'set_contains', 'a, c', true],
    ['${attr.tags}', 'set_contains_all', 'a,z', false],
    ['${attr.tags}', 'set_contains_any', 'z,b', true],
    ['${attr.driver.raw_exec}', 'is_set', '', true],
    ['${attr.driver.docker}', 'is_not_set', '', true],
    ['${meta.rack}', '=', 'r1', true],
    ['${node.datacenter}', '=', 'dc1', true],
    ['${node.unique.name}', '=', 'box', true],
    ['${node.class}', '=', '', true],
    ['${attr.kernel.name}', 'distinct_hosts', '', true],
  ])('%s %s %j → %s', (attribute, operator, value, want) => {
    expect(holds(attribute, operator, value)).toBe(want);
  });

  it('reads the HCL shorthands and the API shape alike', () => {
    expect(constraintOf({ attribute: '${attr.kernel.name}', regexp: 'l.*x' })).toEqual({ LTarget: '${attr.kernel.name}', RTarget: 'l.*x', Operand: 'regexp' });
    expect(constraintOf({ LTarget: 'a', RTarget: 'b', Operand: '!=' })).toEqual({ LTarget: 'a', RTarget: 'b', Operand: '!=' });
    expect(constraintOf({ Attribute: 'a', Value: 'b' })).toEqual({ LTarget: 'a', RTarget: 'b', Operand: '=' });
    expect(constraintOf({ distinct_hosts: true })).toMatchObject({ Operand: 'distinct_hosts' });
  });
});

describe('constraintProblem', () => {
  it.each([
    [{ attribute: 'a', operator: 'like', value: 'b' }, 'problem', 'unknown constraint operator "like"'],
    [{ operator: '=', value: 'b' }, 'problem', 'a constraint needs an "attribute"'],
    [{ attribute: 'a', operator: 'regexp', value: '((' }, 'problem', 'the regular expression "((" does not compile'],
    [{ distinct_hosts: true }, 'warning', '"distinct_hosts" is not judged'],
  ])('%j: a %s', (raw, kind, text) => {
    const said = constraintProblem(constraintOf(raw));
    expect(said).toHaveProperty(kind);
    expect(Object.values(said!)[0]).toContain(text);
  });

  it('says nothing of a good one', () => {
    expect(constraintProblem(constraintOf({ attribute: '${attr.kernel.name}', value: 'linux' }))).toBeUndefined();
  });
});

describe('datacenters and a job\'s constraints', () => {
  it.each([
    [undefined, true], [[], true], [['*'], true], [['dc1'], true], [['dc*'], true], [['eu-west-1'], false], [['d.1'], false],
  ])('datacenters %j on dc1 → %s', (dcs, want) => {
    expect(datacenterMatches(dcs, 'dc1')).toBe(want);
  });

  const job = (over: Record<string, unknown> = {}) => ({
    ID: 'j', Datacenters: ['dc1'], Constraints: [{ LTarget: '${attr.kernel.name}', RTarget: 'linux', Operand: '=' }],
    TaskGroups: [
      { Name: 'g', Constraints: [{ LTarget: '${attr.cpu.numcores}', RTarget: '1', Operand: '>=' }], Tasks: [{ Name: 't', Constraints: [{ LTarget: '${meta.rack}', RTarget: 'r2', Operand: '=' }] }] },
      { Name: 'h', Tasks: [{ Name: 't' }] },
    ],
    ...over,
  });

  it('judges the job\'s, the group\'s and its tasks\' constraints, naming the first that fails', () => {
    expect(infeasibility(job(), 'g', node)).toEqual({ constraint: '${meta.rack} = r2' });
    expect(infeasibility(job(), 'h', node)).toBeUndefined();
    expect(infeasibility(job({ Datacenters: ['eu-west-1'] }), 'h', node)).toEqual({ datacenter: 'dc1' });
  });
});
