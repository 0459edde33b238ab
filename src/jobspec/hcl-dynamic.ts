/**
 * HCL's `dynamic` blocks, which Nomad's jobspec2 expands (hcl's dynblock extension): one block of the given type
 * per element of `for_each`, its body from `content`, with `<iterator>.key` and `<iterator>.value` in scope
 * (the iterator is named by `iterator`, or after the block type), and `labels` for labelled blocks.
 */
import { isPlainObject as isObject } from './normalize.ts';
import type { PathSegment } from './spec-error.ts';
import { describe } from './hcl-type-constraint.ts';

/** What expansion needs from the evaluator of the file. */
export interface DynamicHost {
  /** The value of a raw value (hcl2json's shape) at `path`, with the iterators in scope; `failed` when reported. */
  evaluate(value: unknown, path: PathSegment[]): unknown;
  /** Runs `fn` with `name` bound to `{ key, value }`. */
  withIterator<T>(name: string, binding: { key: unknown; value: unknown }, fn: () => T): T;
  report(path: PathSegment[], message: string): void;
  failed: unknown;
}

/** Expanded blocks by type: bodies in a list, or (labelled) nested by label down to a list, as hcl2json writes blocks. */
export type ExpandedBlocks = Record<string, unknown>;

/** Expands a body's `dynamic` value: `{ <type>: [ { for_each, iterator?, labels?, content: [ {...} ] } ] }`. */
export function expandDynamic(dynamic: Record<string, unknown>, path: PathSegment[], host: DynamicHost): ExpandedBlocks {
  const out: ExpandedBlocks = {};
  for (const [type, specs] of Object.entries(dynamic)) {
    for (const [i, spec] of (Array.isArray(specs) ? specs : [specs]).entries()) {
      const at = [...path, 'dynamic', type, i];
      if (!isObject(spec)) {
        host.report(at, `a dynamic block is written dynamic "${type}" { for_each = ..., content { ... } }`);
        continue;
      }
      const unknown = Object.keys(spec).find((k) => !['for_each', 'iterator', 'labels', 'content'].includes(k));
      if (unknown !== undefined) host.report([...at, unknown], `Unsupported argument "${unknown}" in dynamic "${type}": it takes for_each, iterator, labels and content`);
      const content = Array.isArray(spec['content']) ? spec['content'][0] : spec['content'];
      if (!isObject(content)) {
        host.report(at, `Missing content block: dynamic "${type}" needs a content { ... } block with the body of each ${type}`);
        continue;
      }
      const iterator = typeof spec['iterator'] === 'string' ? /^\$\{\s*([\p{ID_Start}_][\p{ID_Continue}_-]*)\s*\}$/u.exec(spec['iterator'])?.[1] : type;
      if (iterator === undefined) {
        host.report([...at, 'iterator'], `Invalid dynamic iterator name: iterator = ${String(spec['iterator'])} must be a bare name, such as iterator = item`);
        continue;
      }
      const coll = host.evaluate(spec['for_each'], [...at, 'for_each']);
      if (coll === host.failed) continue;
      if (coll === null || typeof coll !== 'object') {
        host.report([...at, 'for_each'], `Invalid dynamic for_each value: for_each needs a list, set, map or object, got ${describe(coll)}`);
        continue;
      }
      const entries: [unknown, unknown][] = Array.isArray(coll) ? coll.map((v, k) => [k, v]) : Object.keys(coll).sort().map((k) => [k, (coll as Record<string, unknown>)[k]]);
      for (const [key, value] of entries) {
        host.withIterator(iterator, { key, value }, () => {
          const labels = spec['labels'] === undefined ? [] : host.evaluate(spec['labels'], [...at, 'labels']);
          if (labels === host.failed) return;
          if (!Array.isArray(labels) || labels.some((l) => typeof l !== 'string' && typeof l !== 'number')) {
            host.report([...at, 'labels'], `Invalid dynamic block labels: labels must be a list of strings, got ${describe(labels)}`);
            return;
          }
          const body = host.evaluate(content, [...at, 'content', 0]);
          if (body !== host.failed) place(out, type, labels.map(String), body);
        });
      }
    }
  }
  return out;
}

function place(out: ExpandedBlocks, type: string, labels: string[], body: unknown): void {
  let holder: Record<string, unknown> = out;
  let key = type;
  for (const label of labels) {
    const next = holder[key];
    holder = (holder[key] = isObject(next) ? next : {}) as Record<string, unknown>;
    key = label;
  }
  const list = holder[key];
  holder[key] = Array.isArray(list) ? [...list, body] : [body];
}

/** Adds expanded blocks to a body's own blocks of the same types (a labelled type merges by label). */
export function mergeBlocks(body: Record<string, unknown>, expanded: ExpandedBlocks): void {
  for (const [type, blocks] of Object.entries(expanded)) body[type] = mergeInto(body[type], blocks);
}

function mergeInto(existing: unknown, added: unknown): unknown {
  if (existing === undefined) return added;
  if (Array.isArray(added)) return [...(Array.isArray(existing) ? existing : [existing]), ...added];
  if (isObject(existing) && isObject(added)) {
    const out: Record<string, unknown> = { ...existing };
    for (const [k, v] of Object.entries(added)) out[k] = mergeInto(out[k], v);
    return out;
  }
  return added;
}
