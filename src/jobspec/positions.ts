/**
 * Source positions for job files: offsets to line:column, and a small position tree (maps, lists, scalars
 * with their offsets) that JSON and YAML sources build so a problem's path can be pointed at in the file.
 */
import type { PathSegment } from './spec-error.ts';

/** 1-based line and column. */
export interface LineCol {
  line: number;
  column: number;
}

/** Turns string offsets into 1-based line:column; built once per file. */
export class LineIndex {
  private readonly starts: number[] = [0];

  constructor(text: string) {
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) this.starts.push(i + 1);
  }

  /** The line and column of `offset` (clamped to the text). */
  at(offset: number): LineCol {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: Math.max(0, offset - this.starts[lo]!) + 1 };
  }
}

/** A parsed value's shape with offsets: enough to find where a path is written. */
export type PosNode =
  | { kind: 'map'; offset: number; entries: Map<string, { keyOffset: number; node: PosNode }> }
  | { kind: 'seq'; offset: number; items: PosNode[] }
  | { kind: 'scalar'; offset: number };

/** Finds where a path is written: the offset of its deepest key (or list item) present in the tree. */
export type Locator = (path: readonly PathSegment[]) => number | undefined;

/**
 * Walks `path` through a position tree. A list met by a key is a block written as a list of one object
 * (hcl2json's shape), so the walk steps into its first item; a number picks a list item or a repeated block.
 */
export function locateInTree(root: PosNode, path: readonly PathSegment[]): number {
  let node = root;
  let best = root.offset;
  for (const seg of path) {
    if (node.kind === 'seq') {
      const item = node.items[typeof seg === 'number' ? seg : 0];
      if (!item) break;
      if (typeof seg === 'number') {
        node = item;
        best = item.offset;
        continue;
      }
      node = item;
    }
    if (node.kind !== 'map' || typeof seg !== 'string') break;
    const entry = node.entries.get(seg);
    if (!entry) break;
    best = entry.keyOffset;
    node = entry.node;
  }
  return best;
}
