import { mulberry32 } from '../../machines/restart-tracker.ts';
import { describe, expect, it } from 'vitest';
import { buildTaskEnv, type TaskEnv } from '../../src/env/task-env.ts';
import { localNodeInfo, type NodeInfo } from '../../src/env/node-info.ts';
import type { AllocSpec, TaskSpec } from '../../src/jobspec/types.ts';

const node: NodeInfo = {
  id: '9d3f1c2a-0000-4000-8000-000000000001',
  name: 'worker-1',
  datacenter: 'eu-west',
  region: 'europe',
  class: 'compute',
  attributes: { 'kernel.name': 'linux', 'cpu.arch': 'amd64' },
  meta: { rack: 'r42' },
};

const task = (name: string, extra: Partial<TaskSpec> = {}): TaskSpec => ({ name, driver: 'raw_exec', config: {}, ...extra });

const alloc = (tasks: TaskSpec[] = [task('web')], meta: Record<string, string> = { owner: 'team-a' }): AllocSpec => ({
  id: '5b1e8c4f-7a2d-4e3b-9c1d-0123456789ab',
  job: 'shop',
  group: 'frontend',
  type: 'service',
  namespace: 'prod',
  meta,
  tasks,
});

const ALLOC_DIR = '/data/alloc/5b1e8c4f';

describe('buildTaskEnv', () => {
  it("sets Nomad's variables for a task", () => {
    const env = buildTaskEnv({ node, alloc: alloc(), task: task('web'), allocDir: ALLOC_DIR, taskDir: `${ALLOC_DIR}/web`, allocIndex: 2 });
    expect(env.vars).toMatchObject({
      NOMAD_ALLOC_ID: '5b1e8c4f-7a2d-4e3b-9c1d-0123456789ab',
      NOMAD_SHORT_ALLOC_ID: '5b1e8c4f',
      NOMAD_ALLOC_NAME: 'shop.frontend[2]',
      NOMAD_ALLOC_INDEX: '2',
      NOMAD_ALLOC_DIR: `${ALLOC_DIR}/alloc`,
      NOMAD_TASK_DIR: `${ALLOC_DIR}/web/local`,
      NOMAD_SECRETS_DIR: `${ALLOC_DIR}/web/secrets`,
      NOMAD_TASK_NAME: 'web',
      NOMAD_GROUP_NAME: 'frontend',
      NOMAD_JOB_NAME: 'shop',
      NOMAD_JOB_ID: 'shop',
      NOMAD_NAMESPACE: 'prod',
      NOMAD_DC: 'eu-west',
      NOMAD_REGION: 'europe',
      NOMAD_META_owner: 'team-a',
      NOMAD_META_OWNER: 'team-a',
    });
    expect(env.taskName).toBe('web');
  });

  it("takes NOMAD_ALLOC_INDEX and the name's [index] from the allocation's own index, and an explicit index over it", () => {
    const indexed = { ...alloc(), index: 4 };
    const own = buildTaskEnv({ node, alloc: indexed, task: task('web'), allocDir: ALLOC_DIR, taskDir: `${ALLOC_DIR}/web` });
    expect([own.vars.NOMAD_ALLOC_INDEX, own.vars.NOMAD_ALLOC_NAME]).toEqual(['4', 'shop.frontend[4]']);
    const slot = buildTaskEnv({ node, alloc: indexed, task: task('web'), allocDir: ALLOC_DIR, taskDir: `${ALLOC_DIR}/web`, allocIndex: 1 });
    expect([slot.vars.NOMAD_ALLOC_INDEX, slot.vars.NOMAD_ALLOC_NAME]).toEqual(['1', 'shop.frontend[1]']);
    const none = buildTaskEnv({ node, alloc: alloc(), task: task('web'), allocDir: ALLOC_DIR, taskDir: `${ALLOC_DIR}/web` });
    expect([none.vars.NOMAD_ALLOC_INDEX, none.vars.NOMAD_ALLOC_NAME]).toEqual(['0', 'shop.frontend[0]']);
  });

  it('builds the alloc env without task variables', () => {
    const env = buildTaskEnv({ node, alloc: alloc(), allocDir: ALLOC_DIR });
    expect(env.taskName).toBeUndefined();
    expect(env.vars.NOMAD_ALLOC_ID).toBeDefined();
    expect(Object.keys(env.vars).filter((k) => k.startsWith('NOMAD_TASK') || k === 'NOMAD_SECRETS_DIR')).toEqual([]);
    expect(env.vars.NOMAD_NAMESPACE).toBe('prod');
    expect(buildTaskEnv({ node, alloc: { ...alloc(), namespace: undefined }, allocDir: ALLOC_DIR }).vars.NOMAD_NAMESPACE).toBe('default');
  });

  it('overlays task meta on group meta and cleans meta keys', () => {
    const t = task('web', { meta: { owner: 'team-b', 'build-id': '77' } });
    const env = buildTaskEnv({ node, alloc: alloc([t], { owner: 'team-a', tier: 'gold' }), task: t, allocDir: ALLOC_DIR });
    expect(env.vars).toMatchObject({ NOMAD_META_owner: 'team-b', NOMAD_META_tier: 'gold', NOMAD_META_build_id: '77', NOMAD_META_BUILD_ID: '77' });
  });

  it('interpolates the task env, which overrides and sees the Nomad variables', () => {
    const t = task('web', { env: { GREETING: 'hi from ${NOMAD_TASK_NAME} in ${node.region}', NOMAD_DC: 'mine', RACK: '${meta.rack}' } });
    const env = buildTaskEnv({ node, alloc: alloc([t]), task: t, allocDir: ALLOC_DIR });
    expect(env.vars.GREETING).toBe('hi from web in europe');
    expect(env.vars.NOMAD_DC).toBe('mine');
    expect(env.vars.RACK).toBe('r42');
  });

  it('puts host variables underneath everything else', () => {
    const t = task('web', { env: { HOME: '/task-home' } });
    const env = buildTaskEnv({ node, alloc: alloc([t]), task: t, allocDir: ALLOC_DIR, hostEnv: { PATH: '/usr/bin', HOME: '/root', NOMAD_TASK_NAME: 'spoof', UNSET: undefined } });
    expect(env.vars).toMatchObject({ PATH: '/usr/bin', HOME: '/task-home', NOMAD_TASK_NAME: 'web' });
    expect('UNSET' in env.vars).toBe(false);
  });
});

describe('interpolation', () => {
  const t = task('web', { env: { PORT: '8080' }, meta: { version: '1.2' } });
  const env = buildTaskEnv({ node, alloc: alloc([t]), task: t, allocDir: ALLOC_DIR });

  it.each([
    ['${NOMAD_ALLOC_ID}', '5b1e8c4f-7a2d-4e3b-9c1d-0123456789ab'],
    ['${NOMAD_META_version}', '1.2'],
    ['${node.unique.id}', node.id],
    ['${node.unique.name}', 'worker-1'],
    ['${node.datacenter}', 'eu-west'],
    ['${node.region}', 'europe'],
    ['${node.class}', 'compute'],
    ['${attr.kernel.name}', 'linux'],
    ['${meta.rack}', 'r42'],
    ['${env.PORT}', '8080'],
    ['${PORT}', '8080'],
    ['http://${attr.cpu.arch}:${env.PORT}/', 'http://amd64:8080/'],
  ])('replaces %s', (input, expected) => {
    expect(env.interpolate(input)).toBe(expected);
  });

  it('leaves unknown references as written, including prototype names', () => {
    expect(env.interpolate('${NOMAD_META_nope} ${attr.nope} ${env.nope} ${toString} ${meta.constructor} $PORT')).toBe(
      '${NOMAD_META_nope} ${attr.nope} ${env.nope} ${toString} ${meta.constructor} $PORT',
    );
  });

  it('interpolates config, args and env deeply without touching the input', () => {
    const config = Object.freeze({
      command: '${NOMAD_TASK_DIR}/bin/app',
      args: Object.freeze(['--port', '${env.PORT}', '--dc=${node.datacenter}']),
      nested: Object.freeze({ list: Object.freeze([Object.freeze({ v: '${meta.rack}' })]), n: 3, flag: true, none: null }),
    });
    const out = env.interpolateDeep(config);
    expect(out).toEqual({
      command: `${ALLOC_DIR}/web/local/bin/app`,
      args: ['--port', '8080', '--dc=eu-west'],
      nested: { list: [{ v: 'r42' }], n: 3, flag: true, none: null },
    });
    expect(config.args[1]).toBe('${env.PORT}');
    expect(out).not.toBe(config);
  });

  it('keeps a `__proto__` key as data', () => {
    const input = JSON.parse('{"__proto__": "${env.PORT}"}') as Record<string, unknown>;
    const out = env.interpolateDeep(input);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toBe('8080');
  });
});

describe('immutability (PR #25373)', () => {
  it('freezes the env, its vars and its node', () => {
    const env = buildTaskEnv({ node, alloc: alloc(), task: task('web'), allocDir: ALLOC_DIR });
    for (const v of [env, env.vars, env.node, env.node.attributes, env.node.meta]) expect(Object.isFrozen(v)).toBe(true);
    expect(() => {
      (env.vars as Record<string, string>).NOMAD_TASK_NAME = 'other';
    }).toThrow(TypeError);
  });

  it('withTask returns a new env and leaves the original alone', () => {
    const web = task('web', { env: { ONLY_WEB: '1' }, meta: { secret: 'w' } });
    const api = task('api');
    const base = buildTaskEnv({ node, alloc: alloc([web, api]), allocDir: ALLOC_DIR });
    const before = { ...base.vars };
    const forWeb = base.withTask(web);
    const forApi = forWeb.withTask(api);
    expect(base.vars).toEqual(before);
    expect(forWeb.vars.ONLY_WEB).toBe('1');
    expect(forApi.vars.ONLY_WEB).toBeUndefined();
    expect(forApi.vars.NOMAD_META_secret).toBeUndefined();
    expect(forApi.interpolate('${NOMAD_META_secret}')).toBe('${NOMAD_META_secret}');
    expect(forWeb.vars.NOMAD_TASK_DIR).toBe(`${ALLOC_DIR}/web/local`);
  });

  it('is not affected by later changes to the specs it was built from', () => {
    const t = task('web', { env: { A: '1' }, meta: { m: 'x' } });
    const a = alloc([t], { g: 'y' });
    const n: NodeInfo = { ...node, attributes: { ...node.attributes }, meta: { ...node.meta } };
    const env = buildTaskEnv({ node: n, alloc: a, task: t, allocDir: ALLOC_DIR });
    t.env!.A = '2';
    t.meta!.m = 'changed';
    a.meta!.g = 'changed';
    n.attributes['kernel.name'] = 'changed';
    expect(env.vars).toMatchObject({ A: '1', NOMAD_META_m: 'x', NOMAD_META_g: 'y' });
    expect(env.interpolate('${attr.kernel.name}')).toBe('linux');
    expect(env.withTask(task('api')).vars.NOMAD_META_g).toBe('y');
  });
});

describe('per-task isolation, property-tested', () => {
  /** The restart tracker's seeded PRNG, so every failure can be replayed from its seed. */
  function rng(seed: number): () => number {
    const r = mulberry32(seed);
    return () => r.next();
  }

  const META_KEYS = ['a', 'b', 'c', 'owner', 'tier'];
  const ENV_KEYS = ['FOO', 'BAR', 'BAZ', 'QUX'];

  function generate(seed: number) {
    const r = rng(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const word = () => Math.floor(r() * 1e9).toString(36);
    const someOf = (keys: string[], value: () => string) =>
      Object.fromEntries(keys.filter(() => r() < 0.4).map((k) => [k, value()]));
    const groupMeta = someOf(META_KEYS, word);
    const tasks = Array.from({ length: 2 + Math.floor(r() * 4) }, (_, i) =>
      task(`t${i}`, {
        meta: someOf(META_KEYS, word),
        // Env values refer to meta keys the task may or may not have: the classic leak path.
        env: someOf(ENV_KEYS, () => (r() < 0.5 ? word() : `${word()}-\${NOMAD_META_${pick(META_KEYS)}}`)),
      }),
    );
    const order = Array.from({ length: tasks.length * 3 }, () => pick(tasks));
    return { a: alloc(tasks, groupMeta), tasks, order };
  }

  /** What one task's env must hold, computed from that task and the group alone. */
  function expectIsolated(env: TaskEnv, t: TaskSpec, groupMeta: Record<string, string>): void {
    const meta = { ...groupMeta, ...t.meta };
    for (const k of META_KEYS) {
      expect(env.vars[`NOMAD_META_${k}`]).toBe(meta[k]);
      expect(env.vars[`NOMAD_META_${k.toUpperCase()}`]).toBe(meta[k]);
    }
    for (const k of ENV_KEYS) {
      const raw = t.env?.[k];
      const expected = raw?.replace(/\$\{NOMAD_META_(\w+)\}/g, (whole, mk: string) => meta[mk] ?? whole);
      expect(env.vars[k]).toBe(expected);
    }
    expect(env.vars.NOMAD_TASK_NAME).toBe(t.name);
    expect(env.taskName).toBe(t.name);
    expect(Object.isFrozen(env) && Object.isFrozen(env.vars)).toBe(true);
  }

  it('one task never sees another task’s env or meta, whatever the order envs are derived in', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const { a, tasks, order } = generate(seed);
      const groupMeta = a.meta ?? {};
      const base = buildTaskEnv({ node, alloc: a, allocDir: ALLOC_DIR });
      const baseBefore = JSON.stringify(base.vars);
      const made: [TaskSpec, TaskEnv, string][] = [];
      // Derive from the base and from other tasks' envs in a random chain, as hooks looping over tasks would.
      let prev: TaskEnv = base;
      for (const t of order) {
        const env = (seed + made.length) % 2 === 0 ? base.withTask(t) : prev.withTask(t);
        made.push([t, env, JSON.stringify(env.vars)]);
        prev = env;
      }
      try {
        expect(JSON.stringify(base.vars)).toBe(baseBefore);
        for (const [t, env, snapshot] of made) {
          expectIsolated(env, t, groupMeta);
          // Later derivations did not change an env handed out earlier.
          expect(JSON.stringify(env.vars)).toBe(snapshot);
          // Pure: the same as building for that task directly.
          expect(env.vars).toEqual(buildTaskEnv({ node, alloc: a, task: t, allocDir: ALLOC_DIR }).vars);
        }
        for (const t of tasks) expectIsolated(base.withTask(t), t, groupMeta);
      } catch (err) {
        throw new Error(`seed ${seed}: ${(err as Error).message}`);
      }
    }
  });
});

describe('localNodeInfo', () => {
  it('describes this machine with a stable id', () => {
    const a = localNodeInfo();
    expect(a.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(localNodeInfo().id).toBe(a.id);
    expect(a).toMatchObject({ datacenter: 'dc1', region: 'global' });
    expect(a.attributes['kernel.name']).toBe(process.platform);
    expect(localNodeInfo({ datacenter: 'x', meta: { k: 'v' } })).toMatchObject({ datacenter: 'x', meta: { k: 'v' } });
  });
});
