/**
 * Guards in front of the `yaml` package. Its composer and toJS recurse once per nesting level, and a
 * stack overflow there is not always a catchable RangeError: 6 KB of `- - - ...` parsed twice aborts Node
 * (V8 runs out of stack while compiling a regular expression, which is fatal). So nesting is bounded
 * twice, without recursion of our own: a scan of the lexer's tokens before parsing (the CST parser is
 * iterative but slows down with depth, so a 4 MiB file of `- ` must not reach it), and an exact count on
 * the CST before the recursive composer sees it.
 */
import { CST, Lexer } from 'yaml';

type Open = { indent: number; kind: 'seq' | 'map' };

/** Lexer markers that stand for no source text. */
const MARKERS = new Set([CST.BOM, CST.DOCUMENT, CST.FLOW_END, CST.SCALAR]);

/**
 * An estimate of the nesting of YAML text from its tokens alone: block collections tracked by indentation
 * and their indicators (`- `, `? `, `key:`), flow collections by their brackets. It errs on the high
 * side. Returns the offset where the estimate first exceeds `max`, or undefined.
 */
export function findExcessiveYamlNesting(text: string, max: number): number | undefined {
  const blocks: Open[] = [];
  let flow = 0;
  let offset = 0;
  let col = 0;
  /** Where the node before a `:` started on this line: the key's column (its map's indent) and offset. */
  let keyCol = -1;
  let keyAt = 0;
  const open = (indent: number, kind: Open['kind']): boolean => {
    while (blocks.length > 0 && blocks[blocks.length - 1]!.indent > indent) blocks.pop();
    let top = blocks[blocks.length - 1];
    if (top?.indent === indent && top.kind !== kind && kind === 'map') {
      blocks.pop(); // a key at the indent of a sequence under a map ends that sequence
      top = blocks[blocks.length - 1];
    }
    if (top?.indent === indent && top.kind === kind) return false; // the next item of the same collection
    blocks.push({ indent, kind });
    return blocks.length + flow > max;
  };
  for (const token of new Lexer().lex(text)) {
    if (MARKERS.has(token)) continue;
    const at = offset;
    switch (CST.tokenType(token)) {
      case 'newline':
        keyCol = -1;
        break;
      case 'doc-start':
      case 'doc-end':
        blocks.length = 0;
        flow = 0;
        break;
      case 'flow-map-start':
      case 'flow-seq-start':
        flow++;
        if (blocks.length + flow > max) return at;
        break;
      case 'flow-map-end':
      case 'flow-seq-end':
        flow = Math.max(0, flow - 1);
        break;
      case 'seq-item-ind':
      case 'explicit-key-ind':
        if (flow === 0 && open(col, token === '-' ? 'seq' : 'map')) return at;
        keyCol = -1;
        break;
      case 'map-value-ind':
        if (flow === 0 && open(keyCol >= 0 ? keyCol : col, 'map')) return keyCol >= 0 ? keyAt : at;
        keyCol = -1;
        break;
      case 'space':
      case 'comment':
      case 'comma':
        break;
      default:
        // A scalar, alias, anchor, tag or block scalar header: a node (or a key) starts here.
        if (keyCol < 0) [keyCol, keyAt] = [col, at];
    }
    offset += token.length;
    const nl = token.lastIndexOf('\n');
    col = nl < 0 ? col + token.length : token.length - nl - 1;
    if (nl >= 0 && CST.tokenType(token) !== 'newline') keyCol = -1;
  }
  return undefined;
}

/** The offset of the first collection in `tokens` nested deeper than `max`, counted exactly on the CST. */
export function findExcessiveCstNesting(tokens: readonly CST.Token[], max: number): number | undefined {
  const todo: [CST.Token, number][] = tokens.map((t) => [t, 0]);
  while (todo.length > 0) {
    const [token, depth] = todo.pop()!;
    switch (token.type) {
      case 'document':
        if (token.value) todo.push([token.value, depth]);
        break;
      case 'block-map':
      case 'block-seq':
      case 'flow-collection':
        if (depth + 1 > max) return token.offset;
        for (const item of token.items) {
          if ('key' in item && item.key) todo.push([item.key, depth + 1]);
          if (item.value) todo.push([item.value, depth + 1]);
        }
        break;
      default:
        break;
    }
  }
  return undefined;
}
