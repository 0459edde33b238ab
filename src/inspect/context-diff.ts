/**
 * What changed in a context since the last one sent, as patches. XState replaces what an `assign` touches
 * and shares the rest, so comparing by identity finds the changed parts without a deep compare: a task
 * event appended to one task's list becomes one `append` op instead of the alloc's whole context again.
 */
import type { ContextPatch, JsonValue } from './protocol.ts';
import { sanitize, type SanitizeLimits } from './sanitize.ts';

// Deeper than this a changed object is sent whole: paths stay short and the walk stays cheap.
const MAX_DEPTH = 4;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
}

/** Whether the sanitizer keeps a field (it drops undefined and functions). */
function kept(v: unknown): boolean {
  return v !== undefined && typeof v !== 'function';
}

/** One diff's state, handed down the walk (plain functions, no closures per call: a diff runs per transition). */
interface Diff {
  out: ContextPatch[];
  /** One path, pushed and popped as the walk goes: a copy is made only for a patch. */
  path: string[];
  limits: SanitizeLimits;
  /** The sanitizer's limits with the depth left at each depth, made when first needed. */
  limitsAt: SanitizeLimits[];
}

/**
 * The patches that turn the sanitized form of `prev` into that of `next`; an empty list when nothing
 * changed. Values are sanitized with the depth left at their path, so the result matches `sanitize(next)`.
 */
export function diffContext(prev: unknown, next: unknown, limits: SanitizeLimits): ContextPatch[] {
  const d: Diff = { out: [], path: [], limits, limitsAt: [] };
  if (prev !== next) walk(prev, next, d);
  return d.out;
}

function valueAt(v: unknown, depth: number, d: Diff): JsonValue {
  return sanitize(v, (d.limitsAt[depth] ??= { ...d.limits, depth: Math.max(0, d.limits.depth - depth) }));
}

function walk(a: unknown, b: unknown, d: Diff): void {
  const { path, limits, out } = d;
  const depth = path.length;
  if (depth < MAX_DEPTH && isPlainObject(a) && isPlainObject(b) && walkObject(a, b, d)) return;
  // Lists that only grew (task events, hook errors) send just the new items.
  if (Array.isArray(a) && Array.isArray(b) && b.length > a.length && b.length <= limits.items && isPrefix(a, b)) {
    const added: JsonValue[] = [];
    for (let i = a.length; i < b.length; i++) added.push(valueAt(b[i], depth + 1, d));
    out.push({ path: [...path], append: added });
    return;
  }
  out.push({ path: [...path], value: valueAt(b, depth, d) });
}

/**
 * Diffs two plain objects field by field, in one pass over each (a diff runs for every transition sent):
 * removed fields first, then changed ones in `b`'s order. False, having written nothing, when either is
 * wider than the item limit: the sanitizer would cut it, so it is sent whole and the cut stays the same.
 */
function walkObject(a: Record<string, unknown>, b: Record<string, unknown>, d: Diff): boolean {
  const { path, limits, out } = d;
  let removed: string[] | undefined;
  let n = 0;
  for (const k in a) {
    if (++n > limits.items) return false;
    if (kept(a[k]) && !kept(b[k])) (removed ??= []).push(k);
  }
  let changed: string[] | undefined;
  n = 0;
  for (const k in b) {
    if (++n > limits.items) return false;
    const v = b[k];
    if (v !== a[k] && kept(v)) (changed ??= []).push(k);
  }
  if (removed) for (const k of removed) out.push({ path: [...path, k], remove: true });
  if (changed) {
    for (const k of changed) {
      path.push(k);
      walk(a[k], b[k], d);
      path.pop();
    }
  }
  return true;
}

function isPrefix(a: readonly unknown[], b: readonly unknown[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
