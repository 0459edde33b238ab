/**
 * Zod issues as problems a user can act on: one problem per unknown key (named, with a suggestion), and
 * messages that say what was expected and what was found, in the words of a job file.
 */
import type { z } from 'zod';
import type { PathSegment } from './spec-error.ts';

/** A problem before it is placed in a file: where (as segments) and what. */
export interface RawProblem {
  path: PathSegment[];
  message: string;
}

/** How a job file says a type, and how code says it (validateAllocSpec's users write TypeScript). */
const EXPECTED: Record<Vocabulary, Record<string, string>> = {
  file: { string: 'a string', number: 'a number', int: 'a whole number', boolean: 'true or false', object: 'a block', record: 'a map', array: 'a list' },
  code: { string: 'a string', number: 'a number', int: 'an integer', boolean: 'a boolean', object: 'an object', record: 'an object', array: 'an array' },
};

/** Whose words a message uses: a job file's (block, list) or code's (object, array). */
export type Vocabulary = 'file' | 'code';

/** A short description of a found value, for "expected X, got Y". */
export function describeValue(value: unknown, words: Vocabulary = 'file'): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return words === 'file' ? 'a list' : 'an array';
  if (typeof value === 'object') return words === 'file' ? 'a block' : 'an object';
  return typeof value;
}

/** What is left as `"${...}"` after evaluation names a runtime value (as in Nomad); say so instead of a bare type error. */
function expressionHint(input: unknown): string {
  return typeof input === 'string' && /^\$\{[\s\S]*\}$/.test(input)
    ? ' (a runtime value such as ${attr.*}, ${meta.*} or ${NOMAD_*} is interpolated only when the task runs; this field needs its value when the job is read)'
    : '';
}

/** The closest known key within a small edit distance, as a "did you mean" suffix. */
export function suggestKey(key: string, known: Iterable<string>): string {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    if (k === key) continue;
    const d = editDistance(key.toLowerCase(), k.toLowerCase());
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best !== undefined && bestDistance <= Math.max(1, Math.min(3, Math.floor(key.length / 3))) ? `; did you mean "${best}"?` : '';
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 3) return Infinity;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * Turns one zod issue into problems (an unknown-keys issue into one per key), paths under `prefix`;
 * `keysAt` gives the keys allowed in the object at a path (relative to the parsed value), for suggestions.
 */
export function issueToProblems(
  issue: z.core.$ZodIssue,
  prefix: readonly PathSegment[],
  keysAt: (path: readonly PathSegment[]) => Iterable<string>,
  words: Vocabulary = 'file',
): RawProblem[] {
  const path: PathSegment[] = [...prefix, ...issue.path.map((seg) => (typeof seg === 'symbol' ? String(seg) : seg))];
  const input = (issue as { input?: unknown }).input;
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) => ({ path: [...path, key], message: `unknown key "${key}"${suggestKey(key, keysAt(path.slice(prefix.length)))}` }));
    case 'invalid_type': {
      if (input === undefined) return [{ path, message: 'is required' }];
      const expected = EXPECTED[words][issue.expected] ?? issue.expected;
      return [{ path, message: `expected ${expected}, got ${describeValue(input, words)}${expressionHint(input)}` }];
    }
    case 'invalid_value': {
      if (input === undefined) return [{ path, message: 'is required' }];
      const values = issue.values.map((v) => JSON.stringify(v)).join(', ');
      return [{ path, message: `must be one of ${values}; got ${describeValue(input, words)}${expressionHint(input)}` }];
    }
    case 'too_big':
    case 'too_small':
      // The found value helps for a number or a string; for a list the message already says it all.
      return [{ path, message: typeof input === 'number' || typeof input === 'string' ? `${issue.message}; got ${describeValue(input)}` : issue.message }];
    default:
      return [{ path, message: issue.message }];
  }
}
