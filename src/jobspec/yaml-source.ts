/**
 * YAML job files (the same structure as JSON): parsed with the `yaml` package's document API, whose node
 * ranges give every key's position, and whose errors carry offsets.
 */
import { isAlias, isMap, isPair, isScalar, isSeq, parseDocument, type Node as YamlNode } from 'yaml';
import { LineIndex, locateInTree, type PosNode } from './positions.ts';
import { SpecError, type PathSegment, formatPath } from './spec-error.ts';
import type { ParsedSource } from './source.ts';

/** Deeper nesting than this is refused rather than risking the stack. */
const MAX_DEPTH = 256;

/** Parses YAML text into its value and a locator; syntax errors (all of them) become one SpecError. */
export function parseYamlSource(text: string, file?: string): ParsedSource {
  const lines = new LineIndex(text);
  let doc: ReturnType<typeof parseDocument>;
  try {
    doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
  } catch (err) {
    // The yaml package reports faults as doc.errors; a throw here is a resource limit (deep nesting).
    throw new SpecError([{ path: '', message: `YAML syntax error: ${(err as Error).message}`, file }]);
  }
  if (doc.errors.length > 0) {
    throw new SpecError(
      doc.errors.map((e) => ({ path: '', message: `YAML syntax error: ${e.message}`, file, ...lines.at(e.pos[0]) })),
    );
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    // Unresolved aliases and alias bombs are refused by toJS itself.
    throw new SpecError([{ path: '', message: `YAML error: ${(err as Error).message}`, file }]);
  }
  const tree = posTree(doc.contents as YamlNode | null, 0);
  const cycle = findCycle(value, [], new Set());
  if (cycle) {
    throw new SpecError([
      { path: formatPath(cycle), message: 'this alias refers to a node that contains it; a job file must be a tree', file, ...lines.at(locateInTree(tree, cycle)) },
    ]);
  }
  return { value, lines, locate: (path) => locateInTree(tree, path) };
}

/** The position tree of a YAML node; aliases are left unresolved (they point at their own offset). */
function posTree(node: YamlNode | null, depth: number): PosNode {
  const offset = node?.range?.[0] ?? 0;
  if (!node || depth > MAX_DEPTH || isAlias(node) || isScalar(node)) return { kind: 'scalar', offset };
  if (isMap(node)) {
    const entries = new Map<string, { keyOffset: number; node: PosNode }>();
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const key = pair.key as YamlNode | null;
      const name = isScalar(key) ? String(key.value) : undefined;
      if (name === undefined) continue;
      const keyOffset = key?.range?.[0] ?? offset;
      const value = pair.value as YamlNode | null;
      entries.set(name, { keyOffset, node: value ? posTree(value, depth + 1) : { kind: 'scalar', offset: keyOffset } });
    }
    return { kind: 'map', offset, entries };
  }
  if (isSeq(node)) return { kind: 'seq', offset, items: node.items.map((item) => posTree(item as YamlNode | null, depth + 1)) };
  return { kind: 'scalar', offset };
}

/** The path of a value that contains itself (an anchor aliased inside its own node), if any. */
function findCycle(value: unknown, path: PathSegment[], ancestors: Set<unknown>): PathSegment[] | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (ancestors.has(value)) return path;
  if (path.length > MAX_DEPTH) return undefined;
  ancestors.add(value);
  const children: [PathSegment, unknown][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  for (const [k, v] of children) {
    const found = findCycle(v, [...path, k], ancestors);
    if (found) return found;
  }
  ancestors.delete(value);
  return undefined;
}
