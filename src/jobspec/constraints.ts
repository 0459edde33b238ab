/**
 * Nomad's placement constraints (`constraint` blocks of a job, its groups and tasks) and `datacenters`, judged
 * against the one node allocrun has, as Nomad's scheduler judges each node (scheduler/feasible.go): a group
 * is placed only where every constraint of its job, itself and its tasks holds. Without this a job whose
 * constraint no node meets ran anyway, where Nomad places nothing and says which constraint filtered the node.
 */

/** One constraint as Nomad's API writes it (`api.Constraint`). */
export interface Constraint {
  LTarget: string;
  RTarget: string;
  Operand: string;
}

/** What constraints read of the node: `${node.*}`, `${attr.*}`, `${meta.*}`. */
export interface NodeFacts {
  id: string;
  name: string;
  datacenter: string;
  class: string;
  pool: string;
  attributes: Readonly<Record<string, string>>;
  meta: Readonly<Record<string, string>>;
}

/** Operands placement does not judge per node (they spread allocations over several nodes). */
const SPREADING = new Set(['distinct_hosts', 'distinct_property']);

/** The HCL shorthands (`regexp = "..."`) and the operand each stands for; `value` is their right side. */
const SHORTHANDS = ['version', 'semver', 'regexp', 'set_contains', 'set_contains_any', 'set_contains_all'] as const;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string => (v === undefined || v === null ? '' : String(v));

/** One constraint from HCL's shape (`attribute`/`operator`/`value`, any case) or the API's (`LTarget`/`Operand`/`RTarget`). */
export function constraintOf(raw: Record<string, unknown>): Constraint {
  const get = (name: string): unknown => Object.entries(raw).find(([k]) => k.replace(/_/g, '').toLowerCase() === name.replace(/_/g, '').toLowerCase())?.[1];
  let operand = text(get('Operand') ?? get('operator'));
  let right = text(get('RTarget') ?? get('value'));
  let left = text(get('LTarget') ?? get('attribute'));
  for (const s of SHORTHANDS) {
    if (get(s) !== undefined) (operand = s), (right = text(get(s)));
  }
  if (get('distinct_hosts') === true) operand = 'distinct_hosts';
  if (get('distinct_property') !== undefined) (operand = 'distinct_property'), (left = text(get('distinct_property')));
  return { LTarget: left, RTarget: right, Operand: operand === '' ? '=' : operand };
}

/** Every constraint of a `constraint` value: one block, a list of them (HCL's), or absent. */
export function constraintsOf(raw: unknown): Constraint[] {
  const items = Array.isArray(raw) ? raw : raw === undefined || raw === null ? [] : [raw];
  return items.filter(isObject).map(constraintOf);
}

const OPERANDS = new Set(['=', '==', 'is', '!=', 'not', '<', '<=', '>', '>=', 'version', 'semver', 'regexp', 'set_contains', 'set_contains_all', 'set_contains_any', 'is_set', 'is_not_set', ...SPREADING]);

/**
 * What is wrong with a constraint as Nomad's `Constraint.Validate` says it (an unknown operator, no attribute,
 * a regexp that does not compile), or a note for the spreading operands one node cannot honour; none when fine.
 */
export function constraintProblem(c: Constraint): { problem: string } | { warning: string } | undefined {
  if (!OPERANDS.has(c.Operand)) return { problem: `unknown constraint operator ${JSON.stringify(c.Operand)}; Nomad's are ${[...OPERANDS].map((o) => JSON.stringify(o)).join(', ')}` };
  if (SPREADING.has(c.Operand)) return { warning: `"${c.Operand}" is not judged: allocrun is one node, so every allocation is on the same host` };
  if (c.LTarget === '') return { problem: 'a constraint needs an "attribute" (its left-hand side), e.g. "${attr.kernel.name}"' };
  if (c.Operand === 'regexp') {
    try {
      new RegExp(c.RTarget);
    } catch (e) {
      return { problem: `the regular expression ${JSON.stringify(c.RTarget)} does not compile: ${(e as Error).message}` };
    }
  }
  return undefined;
}

/** Nomad's `Constraint.String()`: what placement failures name. */
export const constraintText = (c: Constraint): string => `${c.LTarget} ${c.Operand} ${c.RTarget}`;

/** A target's value on the node, Nomad's resolveTarget: a literal unless it is `${...}`; unknown keys are not found. */
function resolve(target: string, node: NodeFacts): string | undefined {
  if (!target.startsWith('${')) return target;
  const key = target.slice(2, target.endsWith('}') ? -1 : undefined);
  switch (key) {
    case 'node.unique.id': return node.id;
    case 'node.unique.name': return node.name;
    case 'node.datacenter': return node.datacenter;
    case 'node.class': return node.class;
    case 'node.pool': return node.pool;
  }
  if (key.startsWith('attr.')) return node.attributes[key.slice(5)];
  if (key.startsWith('meta.')) return node.meta[key.slice(5)];
  return undefined;
}

/** Nomad's checkOrder: as integers, else as floats, else as strings. */
function order(l: string, r: string): number {
  if (/^-?\d+$/.test(l) && /^-?\d+$/.test(r)) return Math.sign(Number(l) - Number(r));
  const [fl, fr] = [Number(l), Number(r)];
  if (l.trim() !== '' && r.trim() !== '' && Number.isFinite(fl) && Number.isFinite(fr)) return Math.sign(fl - fr);
  return l < r ? -1 : l > r ? 1 : 0;
}

/** A version's numeric segments (`1.2.3-beta` → [1, 2, 3]); undefined when it is not one. */
function segments(v: string): number[] | undefined {
  const m = /^v?(\d+(?:\.\d+)*)/.exec(v.trim());
  return m ? m[1]!.split('.').map(Number) : undefined;
}

function compareVersions(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

/** go-version's constraint list (`>= 1.2, < 2.0`, `~> 1.4`): every clause must hold. */
function versionMatches(value: string, constraint: string): boolean {
  const have = segments(value);
  if (!have) return false;
  return constraint.split(',').every((clause) => {
    const m = /^\s*(>=|<=|!=|~>|=|>|<)?\s*(\S+)\s*$/.exec(clause);
    const want = m && segments(m[2]!);
    if (!m || !want) return false;
    const c = compareVersions(have, want);
    switch (m[1] ?? '=') {
      case '=': return c === 0;
      case '!=': return c !== 0;
      case '>': return c > 0;
      case '>=': return c >= 0;
      case '<': return c < 0;
      case '<=': return c <= 0;
      default: // ~>: at least `want`, below the next release of its second-to-last segment
        return c >= 0 && compareVersions(have.slice(0, Math.max(1, want.length - 1)), want.slice(0, Math.max(1, want.length - 1))) === 0;
    }
  });
}

const set = (s: string): string[] => s.split(',').map((x) => x.trim());

/** Whether `c` holds on `node` (Nomad's checkConstraint); spreading operands hold on any single node. */
export function constraintHolds(c: Constraint, node: NodeFacts): boolean {
  if (SPREADING.has(c.Operand)) return true;
  const l = resolve(c.LTarget, node);
  const r = resolve(c.RTarget, node);
  const both = l !== undefined && r !== undefined;
  switch (c.Operand) {
    case '=': case '==': case 'is': return both && l === r;
    case '!=': case 'not': return l !== r;
    case '<': return both && order(l, r) < 0;
    case '<=': return both && order(l, r) <= 0;
    case '>': return both && order(l, r) > 0;
    case '>=': return both && order(l, r) >= 0;
    case 'version': case 'semver': return both && versionMatches(l, r);
    case 'regexp': {
      if (!both) return false;
      try {
        return new RegExp(r).test(l);
      } catch {
        return false;
      }
    }
    case 'set_contains': case 'set_contains_all': return both && set(r).every((x) => set(l).includes(x));
    case 'set_contains_any': return both && set(r).some((x) => set(l).includes(x));
    case 'is_set': return l !== undefined;
    case 'is_not_set': return l === undefined;
    default: return false;
  }
}

/** Nomad's datacenters match a node's by glob (`*`, `eu-*`) since 1.5; an empty list is `["*"]`. */
export function datacenterMatches(datacenters: readonly string[] | undefined, dc: string): boolean {
  const list = datacenters && datacenters.length > 0 ? datacenters : ['*'];
  return list.some((p) => new RegExp(`^${p.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`).test(dc));
}

/** A job's node pool: its `NodePool`, `default` when it names none (Nomad's Job.Canonicalize). */
export function jobNodePool(job: Record<string, unknown>): string {
  const pool = job['NodePool'];
  return typeof pool === 'string' && pool !== '' ? pool : 'default';
}

/** Whether a node in `nodePool` is among the nodes of a job in `jobPool`: Nomad's `all` holds every node. */
export function nodeInPool(nodePool: string, jobPool: string): boolean {
  return jobPool === 'all' || jobPool === nodePool;
}

/**
 * Why a group of `job` (Nomad API JSON) cannot run on `node`: the job's node pool (`pool`, the job's) or datacenter
 * leave the node out of the nodes it is placed on, or the first constraint that fails filters it.
 */
export type Infeasible = { pool: string } | { datacenter: string } | { constraint: string };

/**
 * The job's node pool and datacenters (which nodes Nomad's scheduler considers at all: readyNodesInDCsAndPool), then
 * the job's, the group's and its tasks' constraints, in that order, judged on `node`; undefined when it may run there.
 */
export function infeasibility(job: Record<string, unknown>, group: string, node: NodeFacts): Infeasible | undefined {
  const pool = jobNodePool(job);
  if (!nodeInPool(node.pool, pool)) return { pool };
  const dcs = Array.isArray(job['Datacenters']) ? (job['Datacenters'] as unknown[]).map(String) : undefined;
  if (!datacenterMatches(dcs, node.datacenter)) return { datacenter: node.datacenter };
  const groups = Array.isArray(job['TaskGroups']) ? (job['TaskGroups'] as unknown[]).filter(isObject) : [];
  const g = groups.find((x) => x['Name'] === group);
  const tasks = g && Array.isArray(g['Tasks']) ? (g['Tasks'] as unknown[]).filter(isObject) : [];
  const all = [job, ...(g ? [g] : []), ...tasks].flatMap((x) => constraintsOf(x['Constraints']));
  const failed = all.find((c) => !constraintHolds(c, node));
  return failed && { constraint: constraintText(failed) };
}
