/**
 * YAML job files (the same structure as JSON): parsed with the `yaml` package's document API, whose node
 * ranges give every key's position, and whose errors carry offsets.
 */
import { Composer, Parser, YAMLParseError, isAlias, isMap, isPair, isScalar, isSeq, visit, type Document, type Node as YamlNode } from 'yaml';
import { LineIndex, locateInTree, type PosNode } from './positions.ts';
import { SpecError, type PathSegment, type SpecProblem, formatPath } from './spec-error.ts';
import type { ParsedSource } from './source.ts';
import { findExcessiveCstNesting, findExcessiveYamlNesting } from './yaml-guard.ts';

/** Aliases one document may expand; more is an alias bomb (billion laughs). */
const MAX_ALIAS_COUNT = 100;

/**
 * Parses YAML text into its value and a locator; syntax errors (all of them) become one SpecError.
 * Nesting deeper than `maxDepth` is refused before the recursive parts of the parser run.
 */
export function parseYamlSource(text: string, file: string | undefined, maxDepth: number): ParsedSource {
  const lines = new LineIndex(text);
  const fail = (message: string, offset: number, path = ''): never => {
    throw new SpecError([{ path, message, ...(file !== undefined && { file }), ...lines.at(offset) }]);
  };
  const tooDeep = `nested more than ${maxDepth} levels deep`;
  const early = findExcessiveYamlNesting(text, maxDepth);
  if (early !== undefined) fail(tooDeep, early);
  const tokens = [...new Parser().parse(text)];
  const deep = findExcessiveCstNesting(tokens, maxDepth);
  if (deep !== undefined) fail(tooDeep, deep);

  const doc = firstDocument(new Composer({ uniqueKeys: true }).compose(tokens, true, text.length));
  if (doc.errors.length > 0) {
    throw new SpecError(
      doc.errors.map((e): SpecProblem => ({ path: '', message: `YAML syntax error: ${e.message}`, ...(file !== undefined && { file }), ...lines.at(e.pos[0]) })),
    );
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    // Unresolved aliases and alias bombs are refused by toJS itself; point at the first alias.
    fail(`YAML error: ${(err as Error).message}`, firstAliasOffset(doc));
  }
  const tree = posTree(doc.contents as YamlNode | null, 0, maxDepth);
  const cycle = findCycle(value, [], new Set(), maxDepth);
  if (cycle) fail('this alias refers to a node that contains it; a job file must be a tree', locateInTree(tree, cycle), formatPath(cycle));
  return { value, lines, locate: (path) => locateInTree(tree, path) };
}

/** The first document, as parseDocument keeps it: a second one is an error at its start. */
function firstDocument(docs: Iterable<Document.Parsed>): Document.Parsed {
  let first: Document.Parsed | undefined;
  for (const doc of docs) {
    if (!first) first = doc;
    else {
      first.errors.push(new YAMLParseError([doc.range[0], doc.range[1]], 'MULTIPLE_DOCS', 'the file holds more than one YAML document; a job file holds one'));
      break;
    }
  }
  // compose(..., forceDoc = true) yields a document even for empty text.
  return first!;
}

/** Where the first alias of a document is written (0 when it has none). */
function firstAliasOffset(doc: Document.Parsed): number {
  let offset = 0;
  visit(doc, {
    Alias(_, node) {
      offset = node.range?.[0] ?? 0;
      return visit.BREAK;
    },
  });
  return offset;
}

/** The position tree of a YAML node; aliases are left unresolved (they point at their own offset). */
function posTree(node: YamlNode | null, depth: number, maxDepth: number): PosNode {
  const offset = node?.range?.[0] ?? 0;
  if (!node || depth > maxDepth || isAlias(node) || isScalar(node)) return { kind: 'scalar', offset };
  if (isMap(node)) {
    const entries = new Map<string, { keyOffset: number; node: PosNode }>();
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const key = pair.key as YamlNode | null;
      const name = isScalar(key) ? String(key.value) : undefined;
      if (name === undefined) continue;
      const keyOffset = key?.range?.[0] ?? offset;
      const value = pair.value as YamlNode | null;
      entries.set(name, { keyOffset, node: value ? posTree(value, depth + 1, maxDepth) : { kind: 'scalar', offset: keyOffset } });
    }
    return { kind: 'map', offset, entries };
  }
  if (isSeq(node)) return { kind: 'seq', offset, items: node.items.map((item) => posTree(item as YamlNode | null, depth + 1, maxDepth)) };
  return { kind: 'scalar', offset };
}

/** The path of a value that contains itself (an anchor aliased inside its own node), if any. */
function findCycle(value: unknown, path: PathSegment[], ancestors: Set<unknown>, maxDepth: number): PathSegment[] | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (ancestors.has(value)) return path;
  if (path.length > maxDepth) return undefined;
  ancestors.add(value);
  const children: [PathSegment, unknown][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  for (const [k, v] of children) {
    const found = findCycle(v, [...path, k], ancestors, maxDepth);
    if (found) return found;
  }
  ancestors.delete(value);
  return undefined;
}
