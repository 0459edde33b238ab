/**
 * What changed in a context since the last one sent, as patches. XState replaces what an `assign` touches
 * and shares the rest, so comparing by identity finds the changed parts without a deep compare: a task
 * event appended to one task's list becomes one `append` op instead of the alloc's whole context again.
 */
import type { ContextCopy, ContextPatch, JsonValue } from './protocol.ts';
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

/** The number of own enumerable keys, up to `max + 1` (enough to tell "too wide"). */
function width(o: Record<string, unknown>, max: number): number {
  let n = 0;
  for (const _k in o) if (++n > max) break;
  return n;
}

/**
 * Where the reader already holds `value`, the changed object now at `path`: another actor's context that was
 * sent the very same object (then a `copy` patch stands for the walk of it); undefined to walk it as usual.
 */
export type SharedValue = (path: readonly string[], value: object) => ContextCopy | undefined;

/** One diff's state, handed down the walk (plain functions, no closures per call: a diff runs per transition). */
interface Diff {
  out: ContextPatch[];
  /** One path, pushed and popped as the walk goes: a copy is made only for a patch. */
  path: string[];
  limits: SanitizeLimits;
  /** The sanitizer's limits with the depth left at each depth (made once per limits object, not per diff). */
  limitsAt: SanitizeLimits[];
  shared: SharedValue | undefined;
}

/**
 * The patches that turn the sanitized form of `prev` into that of `next`; an empty list when nothing
 * changed. Values are sanitized with the depth left at their path, so the result matches `sanitize(next)`.
 * `shared` is asked about each changed object field of a walked object (it decides by path, cheaply).
 */
export function diffContext(prev: unknown, next: unknown, limits: SanitizeLimits, shared?: SharedValue): ContextPatch[] {
  // A stream diffs with one limits object all its life: the last one's list is kept at hand, not looked up.
  let limitsAt = limits === lastLimits ? lastLimitsAt : limitsByDepth.get(limits);
  if (!limitsAt) limitsByDepth.set(limits, (limitsAt = []));
  lastLimits = limits;
  lastLimitsAt = limitsAt;
  const d: Diff = { out: [], path: [], limits, limitsAt, shared };
  if (prev !== next) walk(prev, next, d);
  return d.out;
}

const limitsByDepth = new WeakMap<SanitizeLimits, SanitizeLimits[]>();
let lastLimits: SanitizeLimits | undefined;
let lastLimitsAt: SanitizeLimits[] | undefined;

function valueAt(v: unknown, depth: number, d: Diff): JsonValue {
  return sanitize(v, (d.limitsAt[depth] ??= { ...d.limits, depth: Math.max(0, d.limits.depth - depth) }));
}

function walk(a: unknown, b: unknown, d: Diff): void {
  const { path, limits, out } = d;
  const depth = path.length;
  if (depth < MAX_DEPTH && isPlainObject(a) && isPlainObject(b)) {
    const keysOfA = width(a, limits.items);
    // (Wide objects would be cut by the sanitizer's item limit: they are sent whole so the cut stays the same.)
    if (keysOfA <= limits.items && objectPatches(a, b, keysOfA, d)) return;
  }
  // Lists that only grew (task events, hook errors) send just the new items; past the item limit, with the
  // cut the sanitizer makes (the newest items kept), so a long list's growth is still one small op.
  if (Array.isArray(a) && Array.isArray(b) && b.length > a.length && sameKeptPrefix(a, b, limits.items)) {
    const added: JsonValue[] = [];
    for (let i = Math.max(a.length, b.length - limits.items); i < b.length; i++) added.push(valueAt(b[i], depth + 1, d));
    out.push(b.length > limits.items ? { path: [...path], append: added, cut: { keep: limits.items, earlier: b.length - limits.items } } : { path: [...path], append: added });
    return;
  }
  out.push({ path: [...path], value: valueAt(b, depth, d) });
}

/**
 * Patches for two plain objects, `a` of `keysOfA` keys; false (and nothing added) when `b` is wider than the
 * item limit. One pass over `b` reads each field of both and walks what changed; removals (a kept field
 * gone or no longer kept) come first, in `a`'s key order, found by a pass over `a` only when there are any:
 * the first pass counts them, and a key of `a` missing from `b` shows as fewer of `a`'s keys met than `a`
 * has (XState's `assign` copies every key, so that is rare). Reading every field of `a` again on every diff
 * was most of the diff's time.
 */
function objectPatches(a: Record<string, unknown>, b: Record<string, unknown>, keysOfA: number, d: Diff): boolean {
  const { path, out, limits } = d;
  const start = out.length;
  let keysOfB = 0;
  let shared = 0;
  let dropped = false;
  for (const k in b) {
    if (++keysOfB > limits.items) {
      out.length = start;
      return false;
    }
    const v = b[k];
    const was = a[k];
    if (was !== undefined || k in a) shared++;
    if (v === was) continue;
    if (kept(v)) {
      path.push(k);
      const copy = d.shared !== undefined && typeof v === 'object' && v !== null ? d.shared(path, v) : undefined;
      if (copy) out.push({ path: [...path], copy });
      else walk(was, v, d);
      path.pop();
    } else if (kept(was)) dropped = true;
  }
  if (dropped || shared < keysOfA) {
    const removals: ContextPatch[] = [];
    for (const k in a) if (kept(a[k]) && !kept(b[k])) removals.push({ path: [...path, k], remove: true });
    out.splice(start, 0, ...removals);
  }
  return true;
}

/**
 * Whether `b` starts with `a` as far as the page can tell: the items of `a` that both sanitized forms keep
 * (only the last `keep` of each are sent) are the same. Items cut from both do not matter.
 */
function sameKeptPrefix(a: readonly unknown[], b: readonly unknown[], keep: number): boolean {
  for (let i = Math.max(0, a.length - keep, b.length - keep); i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
