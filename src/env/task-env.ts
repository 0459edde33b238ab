/**
 * The task environment (Nomad's taskenv), as an immutable value: a pure function of (node, alloc, task?).
 * PR #25373's lesson is built in: there is no builder to mutate, `withTask` derives a fresh value from the
 * frozen inputs, so one task's env or meta can never show up in another's.
 */
import { join } from 'node:path';
import type { AllocatedPort, AllocSpec, TaskSpec } from '../jobspec/types.ts';
import { interpolateString, interpolateValue, type Lookup } from './interpolate.ts';
import type { NodeInfo } from './node-info.ts';

/** What a TaskEnv is built from. Nothing here is kept by reference: everything is copied and frozen. */
export interface TaskEnvInput {
  node: NodeInfo;
  alloc: AllocSpec;
  /** Absent: the alloc (group-level) env, with no task variables. */
  task?: TaskSpec;
  /** The allocation directory; NOMAD_ALLOC_DIR is its `alloc/` subdirectory. */
  allocDir: string;
  /** The task's directory; defaults to `<allocDir>/<task name>`. */
  taskDir?: string;
  /** NOMAD_ALLOC_INDEX and the `[index]` of NOMAD_ALLOC_NAME: else the allocation's own index (the agent's), else 0. */
  allocIndex?: number;
  /** Host variables placed under everything else (Nomad passes the agent's env to raw_exec tasks). */
  hostEnv?: Readonly<Record<string, string | undefined>>;
}

/** A built, frozen environment. Hooks get one per call and must not keep it. */
export interface TaskEnv {
  /** The process environment: NOMAD_* variables, NOMAD_META_*, then the task's own `env`. Frozen. */
  readonly vars: Readonly<Record<string, string>>;
  /** The task this env is for; undefined for the alloc env. */
  readonly taskName: string | undefined;
  /** A frozen copy of the node it was built for. */
  readonly node: Readonly<NodeInfo>;
  /** A new env for `task` (its name, env and meta over the group's); this one is untouched. */
  withTask(task: TaskSpec, opts?: { taskDir?: string }): TaskEnv;
  /** The value of one interpolation key (`NOMAD_ALLOC_ID`, `node.region`, `attr.x`, `meta.x`, `env.X`). */
  lookup(key: string): string | undefined;
  /** Replaces `${key}` references; unknown keys are left as written (Nomad's behaviour). */
  interpolate(text: string): string;
  /** Interpolates every string in a config/args/env value; returns a copy. */
  interpolateDeep<T>(value: T): T;
}

/** The slice of an alloc the env depends on, frozen, so a later edit of the spec cannot leak in. */
interface AllocFacts {
  readonly id: string;
  readonly job: string;
  readonly group: string;
  readonly namespace: string;
  readonly parentJob: string | undefined;
  readonly meta: Readonly<Record<string, string>>;
  readonly ports: readonly Readonly<AllocatedPort>[];
}

interface Frozen {
  readonly node: Readonly<NodeInfo>;
  readonly alloc: AllocFacts;
  readonly allocDir: string;
  readonly allocIndex: number;
  readonly hostEnv: Readonly<Record<string, string>>;
}

/**
 * Frozen inputs seen before, with their clean copies. The host env and the node are the same frozen objects
 * for every task of a runtime (hostEnvFor, localNodeInfo), so each is copied once, not once per env built;
 * only frozen inputs are remembered, since nothing can change them afterwards.
 */
const cleanCopies = new WeakMap<object, Readonly<Record<string, string>>>();
const frozenNodes = new WeakMap<NodeInfo, Readonly<NodeInfo>>();

function frozenRecord(r: Readonly<Record<string, string | undefined>> | undefined): Readonly<Record<string, string>> {
  const known = r && cleanCopies.get(r);
  if (known) return known;
  const entries = Object.entries(r ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string');
  const copy = Object.freeze(Object.fromEntries(entries));
  if (r && Object.isFrozen(r)) cleanCopies.set(r, copy);
  return copy;
}

function freezeNode(node: NodeInfo): Readonly<NodeInfo> {
  const known = frozenNodes.get(node);
  if (known) return known;
  const copy = copyNode(node);
  if (Object.isFrozen(node) && Object.isFrozen(node.attributes) && Object.isFrozen(node.meta)) frozenNodes.set(node, copy);
  return copy;
}

function copyNode(node: NodeInfo): Readonly<NodeInfo> {
  return Object.freeze({
    id: node.id,
    name: node.name,
    datacenter: node.datacenter,
    region: node.region,
    ...(node.class !== undefined ? { class: node.class } : {}),
    ...(node.pool !== undefined ? { pool: node.pool } : {}),
    attributes: frozenRecord(node.attributes),
    meta: frozenRecord(node.meta),
  });
}

/** Nomad turns characters other than `[A-Za-z0-9_.]` in meta keys into `_` for NOMAD_META_*. */
function cleanKey(key: string): string {
  return key.replace(/[^A-Za-z0-9_.]/g, '_');
}

function has(r: Readonly<Record<string, string>>, key: string): boolean {
  return Object.hasOwn(r, key);
}

function lookupIn(node: Readonly<NodeInfo>, vars: Readonly<Record<string, string>>): Lookup {
  return (key) => {
    switch (key) {
      case 'node.unique.id':
        return node.id;
      case 'node.unique.name':
        return node.name;
      case 'node.datacenter':
        return node.datacenter;
      case 'node.region':
        return node.region;
      case 'node.class':
        return node.class ?? '';
      case 'node.pool':
        return node.pool ?? 'default';
    }
    const dot = key.indexOf('.');
    if (dot > 0) {
      const rest = key.slice(dot + 1);
      switch (key.slice(0, dot)) {
        case 'attr':
          return has(node.attributes, rest) ? node.attributes[rest] : undefined;
        case 'meta':
          return has(node.meta, rest) ? node.meta[rest] : undefined;
        case 'env':
          return has(vars, rest) ? vars[rest] : undefined;
      }
    }
    return has(vars, key) ? vars[key] : undefined;
  };
}

function computeVars(f: Frozen, task: TaskSpec | undefined, taskDir: string | undefined): Readonly<Record<string, string>> {
  // A Map while building: plain-object assignment of a `__proto__` key would change the prototype.
  const vars = new Map<string, string>(Object.entries(f.hostEnv));
  const a = f.alloc;
  vars.set('NOMAD_ALLOC_ID', a.id);
  vars.set('NOMAD_SHORT_ALLOC_ID', a.id.slice(0, 8));
  vars.set('NOMAD_ALLOC_NAME', `${a.job}.${a.group}[${f.allocIndex}]`);
  vars.set('NOMAD_ALLOC_INDEX', String(f.allocIndex));
  vars.set('NOMAD_ALLOC_DIR', join(f.allocDir, 'alloc'));
  vars.set('NOMAD_GROUP_NAME', a.group);
  vars.set('NOMAD_JOB_NAME', a.job);
  vars.set('NOMAD_JOB_ID', a.job);
  // Nomad sets it only for a job launched by another (a periodic or a dispatched child).
  if (a.parentJob) vars.set('NOMAD_JOB_PARENT_ID', a.parentJob);
  vars.set('NOMAD_NAMESPACE', a.namespace);
  vars.set('NOMAD_DC', f.node.datacenter);
  vars.set('NOMAD_REGION', f.node.region);
  for (const p of a.ports) setPortVars(vars, p);
  if (task) {
    const dir = taskDir ?? join(f.allocDir, task.name);
    vars.set('NOMAD_TASK_NAME', task.name);
    vars.set('NOMAD_TASK_DIR', join(dir, 'local'));
    vars.set('NOMAD_SECRETS_DIR', join(dir, 'secrets'));
    // The spec's names (job-to-allocs: `cpu` in MHz, `memoryMB`, `memoryMaxMB`), set only when given, as
    // Nomad sets them only when non-zero.
    const r = task.resources ?? {};
    const limits: [string, unknown][] = [['NOMAD_CPU_LIMIT', r.cpu], ['NOMAD_MEMORY_LIMIT', r.memoryMB], ['NOMAD_MEMORY_MAX_LIMIT', r.memoryMaxMB]];
    for (const [name, value] of limits) if (typeof value === 'number' && value > 0) vars.set(name, String(value));
  }
  // Group meta overlaid with this task's meta: a fresh merge per build, never a shared map.
  const meta: [string, string][] = [...Object.entries(a.meta), ...Object.entries(task?.meta ?? {})];
  for (const [k, v] of meta) {
    const key = cleanKey(k);
    vars.set(`NOMAD_META_${key}`, v);
    vars.set(`NOMAD_META_${key.toUpperCase()}`, v);
  }
  if (task?.env) {
    // Task env values see the env as it was before any of them, so the result never depends on key order.
    const base = Object.freeze(Object.fromEntries(vars));
    const lookup = lookupIn(f.node, base);
    for (const [k, v] of Object.entries(task.env)) vars.set(k, interpolateString(String(v), lookup));
  }
  return Object.freeze(Object.fromEntries(vars));
}

/** `host:port`, with an IPv6 host in brackets (Go's net.JoinHostPort). */
function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * One allocated port's variables, as Nomad's taskenv sets them from AllocatedResources.Shared.Ports in host
 * mode: the host's address and port, and NOMAD_PORT_ / NOMAD_ALLOC_PORT_ as `to` when it is set.
 */
function setPortVars(vars: Map<string, string>, p: Readonly<AllocatedPort>): void {
  const host = String(p.value);
  const inAlloc = String(p.to > 0 ? p.to : p.value);
  vars.set(`NOMAD_ADDR_${p.label}`, joinHostPort(p.hostIP, p.value));
  vars.set(`NOMAD_HOST_ADDR_${p.label}`, joinHostPort(p.hostIP, p.value));
  vars.set(`NOMAD_IP_${p.label}`, p.hostIP);
  vars.set(`NOMAD_HOST_IP_${p.label}`, p.hostIP);
  vars.set(`NOMAD_PORT_${p.label}`, inAlloc);
  vars.set(`NOMAD_ALLOC_PORT_${p.label}`, inAlloc);
  vars.set(`NOMAD_HOST_PORT_${p.label}`, host);
}

function makeEnv(f: Frozen, task: TaskSpec | undefined, taskDir: string | undefined): TaskEnv {
  const vars = computeVars(f, task, taskDir);
  const lookup = lookupIn(f.node, vars);
  return Object.freeze({
    vars,
    taskName: task?.name,
    node: f.node,
    withTask: (next: TaskSpec, opts?: { taskDir?: string }) => makeEnv(f, next, opts?.taskDir),
    lookup,
    interpolate: (text: string) => interpolateString(text, lookup),
    interpolateDeep: <T>(value: T): T => interpolateValue(value, lookup),
  });
}

/** Builds the env for an alloc (and optionally one of its tasks). Pure: same inputs, same value. */
export function buildTaskEnv(input: TaskEnvInput): TaskEnv {
  const frozen: Frozen = Object.freeze({
    node: freezeNode(input.node),
    alloc: Object.freeze({
      id: input.alloc.id,
      job: input.alloc.job,
      group: input.alloc.group,
      namespace: input.alloc.namespace ?? 'default',
      parentJob: input.alloc.parentJob,
      meta: frozenRecord(input.alloc.meta),
      ports: Object.freeze((input.alloc.ports ?? []).map((p) => Object.freeze({ ...p }))),
    }),
    allocDir: input.allocDir,
    allocIndex: input.allocIndex ?? input.alloc.index ?? 0,
    hostEnv: frozenRecord(input.hostEnv),
  });
  return makeEnv(frozen, input.task, input.taskDir);
}
