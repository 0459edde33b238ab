/**
 * What changed in a context since the last one sent, as patches. XState replaces what an `assign` touches
 * and shares the rest, so comparing by identity finds the changed parts without a deep compare: a task
 * event appended to one task's list becomes one `append` op instead of the alloc's whole context again.
 */
import type { ContextPatch, JsonValue } from './protocol.ts';
import { sanitize, type SanitizeCache, type SanitizeLimits } from './sanitize.ts';

// Deeper than this a changed object is sent whole: paths stay short and the walk stays cheap.
const MAX_DEPTH = 4;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
}

/**
 * The patches that turn the sanitized form of `prev` into that of `next`; an empty list when nothing
 * changed. Values are sanitized with the depth left at their path, so the result matches `sanitize(next)`.
 */
export function diffContext(prev: unknown, next: unknown, limits: SanitizeLimits, cache?: SanitizeCache): ContextPatch[] {
  const out: ContextPatch[] = [];
  const value = (v: unknown, depth: number): JsonValue => sanitize(v, { ...limits, depth: Math.max(0, limits.depth - depth) }, depth === 0 ? cache : undefined);
  const walk = (a: unknown, b: unknown, path: string[]) => {
    if (a === b) return;
    const depth = path.length;
    if (depth < MAX_DEPTH && isPlainObject(a) && isPlainObject(b)) {
      const keysA = Object.keys(a);
      const keysB = Object.keys(b);
      // Wide objects would be cut by the sanitizer's item limit: send them whole so the cut stays the same.
      if (keysA.length <= limits.items && keysB.length <= limits.items) {
        for (const k of keysA) if (!(k in b) || b[k] === undefined || typeof b[k] === 'function') if (a[k] !== undefined && typeof a[k] !== 'function') out.push({ path: [...path, k], remove: true });
        for (const k of keysB) {
          const v = b[k];
          if (v === undefined || typeof v === 'function') continue;
          walk(a[k], v, [...path, k]);
        }
        return;
      }
    }
    // Lists that only grew (task events, hook errors) send just the new items.
    if (Array.isArray(a) && Array.isArray(b) && b.length > a.length && b.length <= limits.items && a.every((x, i) => x === b[i])) {
      out.push({ path, append: b.slice(a.length).map((x) => value(x, depth + 1)) });
      return;
    }
    if (depth === 0) out.push({ path, value: value(b, 0) });
    else out.push({ path, value: value(b, depth) });
  };
  walk(prev, next, []);
  return out;
}
