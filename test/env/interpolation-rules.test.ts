/**
 * The task env's interpolation rules, each pinned by the rule's name: a task's `env` values see the
 * environment as it was before any of them (so the result never depends on the order the keys were
 * written in), and `interpolateString` replaces known keys only.
 */
import { describe, expect, it } from 'vitest';
import { buildTaskEnv } from '../../src/env/task-env.ts';
import { interpolateString } from '../../src/env/interpolate.ts';
import type { NodeInfo } from '../../src/env/node-info.ts';
import type { AllocSpec, TaskSpec } from '../../src/jobspec/types.ts';

const node: NodeInfo = { id: 'n1', name: 'worker-1', datacenter: 'dc1', region: 'global', attributes: {}, meta: {} };

function envOf(env: Record<string, string>, hostEnv: Record<string, string> = {}): Record<string, string> {
  const task: TaskSpec = { name: 't', driver: 'mock', config: {}, env };
  const alloc: AllocSpec = { id: 'a1', job: 'j', group: 'g', type: 'batch', tasks: [task] };
  return { ...buildTaskEnv({ node, alloc, task, allocDir: '/a', hostEnv }).vars };
}

/** Every order of `entries`' keys. */
function permutations<T>(xs: T[]): T[][] {
  if (xs.length <= 1) return [xs];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((rest) => [x, ...rest]));
}

describe('task env interpolation is independent of key order', () => {
  const cases: [string, Record<string, string>, Record<string, string>, Record<string, string>][] = [
    ['a value referring to a sibling key sees no sibling, before or after it', { A: '${B}-a', B: 'b' }, {}, { A: '${B}-a', B: 'b' }],
    ['a value referring to a sibling that shadows a host variable sees the host value', { A: '${B}-a', B: 'task' }, { B: 'host' }, { A: 'host-a', B: 'task' }],
    ['a value referring to a Nomad variable the task overrides sees the runtime value', { X: '${NOMAD_DC}', NOMAD_DC: 'mine' }, {}, { X: 'dc1', NOMAD_DC: 'mine' }],
    ['chains do not resolve through siblings', { A: '${B}', B: '${C}', C: 'c' }, {}, { A: '${B}', B: '${C}', C: 'c' }],
    ['env. references see the same base as bare ones', { A: '${env.B}', B: 'b', C: '${env.HOME}' }, { HOME: '/h' }, { A: '${env.B}', B: 'b', C: '/h' }],
  ];
  it.each(cases)('%s', (_rule, env, hostEnv, expected) => {
    for (const order of permutations(Object.keys(env))) {
      const vars = envOf(Object.fromEntries(order.map((k) => [k, env[k]!])), hostEnv);
      expect(Object.fromEntries(Object.keys(expected).map((k) => [k, vars[k]])), `order ${order.join(',')}`).toEqual(expected);
    }
  });
});

describe('interpolateString', () => {
  const lookup = (k: string) => ({ a: '1', 'x.y': '2', 'd-e': '3', empty: '' })[k];
  it.each([
    ['replaces a known key', '${a}', '1'],
    ['replaces keys with dots and dashes', '${x.y}/${d-e}', '2/3'],
    ['replaces a key known to be empty with nothing', '[${empty}]', '[]'],
    ['leaves an unknown key as written', '${nope}', '${nope}'],
    ['leaves a bare $name alone', '$a', '$a'],
    ['leaves a reference with a space alone', '${a b}', '${a b}'],
    ['replaces every occurrence', '${a}${a}', '11'],
  ])('%s', (_rule, text, expected) => {
    expect(interpolateString(text, lookup)).toBe(expected);
  });

  it('substitutes a value once: a value holding ${...} is not interpolated again', () => {
    expect(interpolateString('${a}', (k) => (k === 'a' ? '${b}' : 'B'))).toBe('${b}');
  });
});

describe('meta keys become NOMAD_META_ names', () => {
  function metaVars(groupMeta: Record<string, string>, taskMeta: Record<string, string> = {}): Record<string, string> {
    const task: TaskSpec = { name: 't', driver: 'mock', config: {}, meta: taskMeta };
    const alloc: AllocSpec = { id: 'a1', job: 'j', group: 'g', type: 'batch', meta: groupMeta, tasks: [task] };
    const vars = buildTaskEnv({ node, alloc, task, allocDir: '/a', hostEnv: {} }).vars;
    return Object.fromEntries(Object.entries(vars).filter(([k]) => k.startsWith('NOMAD_META_')));
  }

  it.each([
    ['a plain key as written and upper-cased', 'owner', ['NOMAD_META_owner', 'NOMAD_META_OWNER']],
    ['a dash becomes an underscore', 'build-id', ['NOMAD_META_build_id', 'NOMAD_META_BUILD_ID']],
    ['a space becomes an underscore', 'my key', ['NOMAD_META_my_key', 'NOMAD_META_MY_KEY']],
    ['dots and underscores are kept', 'tier.x_y', ['NOMAD_META_tier.x_y', 'NOMAD_META_TIER.X_Y']],
    ['an upper-case key is one name', 'ZONE', ['NOMAD_META_ZONE']],
  ])('%s', (_rule, key, names) => {
    const vars = metaVars({ [key]: 'v' });
    expect(Object.keys(vars).sort()).toEqual([...names].sort());
    for (const n of names) expect(vars[n]).toBe('v');
  });

  it("a task's meta value wins over its group's for the same key", () => {
    expect(metaVars({ owner: 'group' }, { owner: 'task' })).toEqual({ NOMAD_META_owner: 'task', NOMAD_META_OWNER: 'task' });
  });
});
