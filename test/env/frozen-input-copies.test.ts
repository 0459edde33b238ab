/**
 * buildTaskEnv copies its inputs so a later edit never leaks in, and copies a frozen input only once
 * (the runtime passes the same frozen node and host env for every task): a node is shared between envs
 * only when it, its attributes and its meta are all frozen, and an unfrozen one is copied afresh each time.
 */
import { describe, expect, it } from 'vitest';
import { buildTaskEnv } from '../../src/env/task-env.ts';
import type { NodeInfo } from '../../src/env/node-info.ts';
import type { AllocSpec, TaskSpec } from '../../src/jobspec/types.ts';

const task: TaskSpec = { name: 't', driver: 'mock', config: {} };
const alloc: AllocSpec = { id: 'a1', job: 'j', group: 'g', type: 'batch', tasks: [task] };
const envFor = (node: NodeInfo) => buildTaskEnv({ node, alloc, task, allocDir: '/a' });

function nodeWith(frozen: { node: boolean; attributes: boolean; meta: boolean }): NodeInfo {
  const attributes = { 'cpu.arch': 'amd64' };
  const meta = { rack: 'r1' };
  const node: NodeInfo = {
    id: 'n1', name: 'w', datacenter: 'dc1', region: 'global',
    attributes: frozen.attributes ? Object.freeze(attributes) : attributes,
    meta: frozen.meta ? Object.freeze(meta) : meta,
  };
  return frozen.node ? Object.freeze(node) : node;
}

const combos = [false, true].flatMap((n) => [false, true].flatMap((a) => [false, true].map((m) => ({ node: n, attributes: a, meta: m }))));

describe('frozen inputs', () => {
  it('a node frozen throughout is copied once: every env built from it shares the copy', () => {
    const node = nodeWith({ node: true, attributes: true, meta: true });
    expect(envFor(node).node).toBe(envFor(node).node);
  });

  it.each(combos.filter((c) => !(c.node && c.attributes && c.meta)))('a node frozen as %j is copied afresh, so its edits reach the next env', (frozen) => {
    const node = nodeWith(frozen);
    const first = envFor(node);
    if (!frozen.node) node.region = 'eu';
    if (!frozen.attributes) node.attributes['cpu.arch'] = 'arm64';
    if (!frozen.meta) node.meta.rack = 'r2';
    const next = envFor(node);
    expect(next.node).not.toBe(first.node);
    expect([next.lookup('node.region'), next.lookup('attr.cpu.arch'), next.lookup('meta.rack')]).toEqual([
      frozen.node ? 'global' : 'eu',
      frozen.attributes ? 'amd64' : 'arm64',
      frozen.meta ? 'r1' : 'r2',
    ]);
    expect([first.lookup('node.region'), first.lookup('attr.cpu.arch'), first.lookup('meta.rack')]).toEqual(['global', 'amd64', 'r1']);
  });

  it('frozen attribute and meta maps are copied once, even inside a node that is not frozen', () => {
    const node = nodeWith({ node: false, attributes: true, meta: true });
    const [a, b] = [envFor(node).node, envFor(node).node];
    expect(a).not.toBe(b);
    expect(a.attributes).toBe(b.attributes);
    expect(a.meta).toBe(b.meta);
  });

  it('unfrozen attribute maps are copied on every build', () => {
    const node = nodeWith({ node: false, attributes: false, meta: false });
    expect(envFor(node).node.attributes).not.toBe(envFor(node).node.attributes);
  });

  it('a node without a class is copied without a class key', () => {
    const node = nodeWith({ node: false, attributes: false, meta: false });
    expect(Object.hasOwn(envFor(node).node, 'class')).toBe(false);
    expect(envFor({ ...node, class: 'gpu' }).node.class).toBe('gpu');
  });
});
