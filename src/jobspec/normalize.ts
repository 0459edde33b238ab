/**
 * From a file's raw structure to one job body the schema can check: finds the single `job "name"` block,
 * unwraps blocks that hcl2json (or a JSON/YAML file in its shape) writes as lists of one body, drops
 * nulls (HCL's "unset"), and reports what the schema cannot see: missing labels, repeated blocks, names
 * that are not safe as directory names, and Nomad blocks allocrun ignores (as warnings).
 */
import { normalizeArtifacts } from './artifact-rules.ts';
import { IGNORED_KEYS } from './jobspec-schema.ts';
import { shownName, unsafeNameReason } from './names.ts';
import { constraintProblem, constraintsOf } from './constraints.ts';
import type { PathSegment } from './spec-error.ts';
import { describeValue, type RawProblem } from './zod-problems.ts';

/** The one job of a file: its name (label) and its normalised body. */
export interface NormalizedJob {
  name: string;
  body: Record<string, unknown>;
}

/** Where normalisation reports: `problems` fail the load, `warnings` do not. */
export interface Report {
  problems: RawProblem[];
  warnings: RawProblem[];
}

type Level = 'job' | 'group' | 'task';
const CHILD: Record<Level, { key: string; level: Level } | undefined> = {
  job: { key: 'group', level: 'group' },
  group: { key: 'task', level: 'task' },
  task: undefined,
};
const IGNORED: Record<Level, ReadonlySet<string>> = {
  job: new Set(IGNORED_KEYS.job),
  group: new Set(IGNORED_KEYS.group),
  task: new Set(IGNORED_KEYS.task),
};
const IGNORED_RESOURCES: ReadonlySet<string> = new Set(IGNORED_KEYS.resources);

/** A plain (non-list) object. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Finds the job of a file and normalises it; undefined (with problems reported) when there is none. */
export function normalizeJobFile(value: unknown, report: Report): NormalizedJob | undefined {
  if (!isPlainObject(value)) {
    report.problems.push({ path: [], message: 'a job file holds one job block: job "name" { ... }' });
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (key === 'job') continue;
    report.problems.push({ path: [key], message: `unknown top-level key "${key}": a job file holds one job block (and, in HCL, variable and locals blocks)` });
  }
  const jobs = value['job'];
  if (jobs === undefined || jobs === null) {
    report.problems.push({ path: [], message: 'no job block found: write job "name" { ... }' });
    return undefined;
  }
  if (!isPlainObject(jobs)) {
    const message = Array.isArray(jobs) ? 'the job block needs a name: job "name" { ... }' : `expected a job block, got ${describeValue(jobs)}`;
    report.problems.push({ path: ['job'], message });
    return undefined;
  }
  const names = Object.keys(jobs);
  if (names.length === 0) {
    report.problems.push({ path: ['job'], message: 'no job block found: write job "name" { ... }' });
    return undefined;
  }
  for (const extra of names.slice(1)) {
    report.problems.push({ path: ['job', extra], message: `a job file holds one job; "${names[0]}" is already defined` });
  }
  const name = names[0]!;
  const path = ['job', name];
  checkName(name, 'job', path, report);
  const body = unwrapBlock(jobs[name], path, report);
  if (!body) return undefined;
  return { name, body: normalizeBody(body, path, 'job', report) };
}

/** A block's body: a list of one body is unwrapped; repeats are reported and the first is used. */
function unwrapBlock(value: unknown, path: PathSegment[], report: Report): Record<string, unknown> | undefined {
  let body = value;
  if (Array.isArray(value)) {
    if (value.length > 1) {
      const name = path[path.length - 1];
      report.problems.push({ path: [...path, 1], message: `"${String(name)}" is defined ${value.length} times; it may appear only once` });
    }
    body = value[0];
  }
  if (!isPlainObject(body)) {
    report.problems.push({ path, message: `expected a block, got ${body === undefined ? 'an empty list' : describeValue(body)}` });
    return undefined;
  }
  return body;
}

function normalizeBody(body: Record<string, unknown>, path: PathSegment[], level: Level, report: Report): Record<string, unknown> {
  const out: [string, unknown][] = [];
  const child = CHILD[level];
  for (const [key, value] of Object.entries(body)) {
    if (value === null || reserved(key, [...path, key], report)) continue;
    const at = [...path, key];
    if (key === 'constraint') {
      // Honoured by placement (constraints.ts): checked here, kept as written.
      constraintsOf(value).forEach((c, i) => {
        const said = constraintProblem(c);
        const where = Array.isArray(value) && value.length > 1 ? [...at, i] : at;
        if (said && 'problem' in said) report.problems.push({ path: where, message: said.problem });
        if (said && 'warning' in said) report.warnings.push({ path: where, message: said.warning });
      });
      out.push([key, value]);
    } else if (IGNORED[level].has(key)) {
      report.warnings.push({ path: at, message: `ignored: allocrun does not implement "${key}" (kept for compatibility with Nomad job files)` });
      out.push([key, value]);
    } else if ((level === 'group' || level === 'task') && key === 'service') {
      out.push([key, normalizeRepeated(value, at, 'service', report)]);
    } else if (level === 'task' && key === 'template') {
      out.push([key, normalizeRepeated(value, at, 'template', report)]);
    } else if (child && key === child.key) {
      out.push([key, normalizeLabelled(value, at, child.level, report)]);
    } else if (level === 'task' && key === 'artifact') {
      out.push([key, normalizeArtifacts(value, at, report)]);
    } else if (level === 'task' && key === 'config') {
      // Driver config is free-form: only the block itself is unwrapped, its contents are the driver's.
      const config = isBlockList(value) ? unwrapBlock(value, at, report) : value;
      if (isPlainObject(config)) for (const k of Object.keys(config)) reserved(k, [...at, k], report);
      out.push([key, config]);
    } else {
      out.push([key, unwrapNested(value, at, report, key === 'resources')]);
    }
  }
  return Object.fromEntries(out);
}

/**
 * Blocks that may repeat (`service`, a service's `check`, `template`): always a list of bodies, whether written as
 * repeated HCL blocks, a JSON/YAML list, or one JSON/YAML object. A service's checks are lists in turn.
 */
function normalizeRepeated(value: unknown, path: PathSegment[], kind: 'service' | 'check' | 'template', report: Report): unknown {
  const items = isPlainObject(value) ? [value] : value;
  if (!Array.isArray(items)) return value; // the schema says what it expected
  return items.map((item, i) => {
    const at = [...path, i];
    if (!isPlainObject(item)) return item;
    const out: [string, unknown][] = [];
    for (const [key, inner] of Object.entries(item)) {
      if (inner === null || reserved(key, [...at, key], report)) continue;
      if (kind === 'service' && key === 'check') out.push([key, normalizeRepeated(inner, [...at, key], 'check', report)]);
      else out.push([key, unwrapNested(inner, [...at, key], report)]);
    }
    return Object.fromEntries(out);
  });
}

/** `group "a" {}` / `task "b" {}`: a map of label to body; unlabelled blocks and bad names are reported. */
function normalizeLabelled(value: unknown, path: PathSegment[], level: Level, report: Report): unknown {
  if (Array.isArray(value)) {
    report.problems.push({ path, message: `a ${level} block needs a name: ${level} "name" { ... }` });
    return {};
  }
  if (!isPlainObject(value)) return value; // the schema says what it expected
  const out: [string, unknown][] = [];
  for (const [label, raw] of Object.entries(value)) {
    const at = [...path, label];
    if (reserved(label, at, report)) continue;
    checkName(label, level, at, report);
    const body = unwrapBlock(raw, at, report);
    if (body) out.push([label, normalizeBody(body, at, level, report)]);
  }
  return Object.fromEntries(out);
}

/** Unwraps nested blocks (restart, lifecycle, logs, resources, env, meta) and drops nulls inside them. */
function unwrapNested(value: unknown, path: PathSegment[], report: Report, isResources = false, depth = 0): unknown {
  let v = value;
  // The jobspec's nested blocks are one level deep; anything deeper is left for the schema to reject.
  if (depth > 2) return v;
  if (isBlockList(v)) {
    v = unwrapBlock(v, path, report);
    if (v === undefined) return value;
  }
  if (!isPlainObject(v)) return v;
  const out: [string, unknown][] = [];
  for (const [key, inner] of Object.entries(v)) {
    if (inner === null || reserved(key, [...path, key], report)) continue;
    if (isResources && IGNORED_RESOURCES.has(key)) {
      report.warnings.push({ path: [...path, key], message: `ignored: allocrun does not implement "${key}" resources` });
      out.push([key, inner]);
    } else {
      out.push([key, unwrapNested(inner, [...path, key], report, false, depth + 1)]);
    }
  }
  return Object.fromEntries(out);
}

/**
 * `__proto__` parses as an own key (JSON.parse, YAML) but vanishes, or worse, when copied into a plain
 * object further on; a job that silently lost a group would be worse than an error.
 */
function reserved(key: string, path: PathSegment[], report: Report): boolean {
  if (key !== '__proto__') return false;
  report.problems.push({ path, message: 'the key "__proto__" is reserved' });
  return true;
}

/** hcl2json's block shape: a non-empty list whose items are all bodies. */
function isBlockList(value: unknown): value is Record<string, unknown>[] {
  return Array.isArray(value) && value.length > 0 && value.every(isPlainObject);
}

/** Names become directory names and alloc ids (`<job>-<group>-<index>`), so they must be path-safe. */
function checkName(name: string, level: Level, path: PathSegment[], report: Report): void {
  const why = unsafeNameReason(name, level);
  if (why) report.problems.push({ path, message: `${level} name ${shownName(name)} ${why}` });
}
