/**
 * A guard in front of the WASM HCL parser. HashiCorp's parser recurses once per nesting level, and in
 * WASM a deep enough file (a few thousand `[`, `(`, `{` or `${`) overflows the JS stack *and leaves the Go
 * runtime dead*, so every later parse in the process hangs. Real job files nest a dozen levels; this scan
 * refuses anything deeper than the maxDepth limit (limits.ts) before the parser sees it. It is iterative (no recursion of
 * its own) and follows strings, templates, comments and heredocs so brackets inside them do not count.
 */

type Frame = { kind: 'bracket' } | { kind: 'template' } | { kind: 'string' } | { kind: 'heredoc'; marker: string };

/** The offset where nesting first exceeds `max`, or undefined when the text stays within it. */
export function findExcessiveNesting(src: string, max: number): number | undefined {
  const stack: Frame[] = [];
  const n = src.length;
  let i = 0;
  let lineStart = true;
  const push = (frame: Frame, at: number): boolean => {
    stack.push(frame);
    return stack.length > max && at >= 0;
  };
  while (i < n) {
    const top = stack[stack.length - 1];
    const c = src[i]!;
    if (top?.kind === 'heredoc' && lineStart) {
      // A heredoc ends at a line holding only its marker.
      const end = src.indexOf('\n', i);
      const line = src.slice(i, end < 0 ? n : end);
      if (line.trim() === top.marker) {
        stack.pop();
        i = end < 0 ? n : end;
        continue;
      }
    }
    lineStart = false;
    if (top?.kind === 'string' || top?.kind === 'heredoc') {
      if (c === '\n') {
        lineStart = true;
        if (top.kind === 'string') stack.pop(); // an unterminated string: the parser will say so
        i++;
      } else if (top.kind === 'string' && c === '\\') i += 2;
      else if (top.kind === 'string' && c === '"') {
        stack.pop();
        i++;
      } else if ((c === '$' || c === '%') && src[i + 1] === c && src[i + 2] === '{') i += 3;
      else if ((c === '$' || c === '%') && src[i + 1] === '{') {
        if (push({ kind: 'template' }, i)) return i;
        i += 2;
      } else i++;
      continue;
    }
    // Code: in a body, a bracket or a template interpolation.
    if (c === '\n') {
      lineStart = true;
      i++;
    } else if (c === '#' || (c === '/' && src[i + 1] === '/')) {
      const end = src.indexOf('\n', i);
      i = end < 0 ? n : end;
    } else if (c === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === '"') {
      if (push({ kind: 'string' }, i)) return i;
      i++;
    } else if (c === '<' && src[i + 1] === '<') {
      const m = /<<-?([\p{ID_Start}_][\p{ID_Continue}\-_]*)[ \t]*\r?\n/uy;
      m.lastIndex = i;
      const hit = m.exec(src);
      if (hit) {
        if (push({ kind: 'heredoc', marker: hit[1]! }, i)) return i;
        i = m.lastIndex;
        lineStart = true;
      } else i += 2;
    } else if (c === '(' || c === '[' || c === '{') {
      if (push({ kind: 'bracket' }, i)) return i;
      i++;
    } else if (c === ')' || c === ']' || c === '}') {
      if (top) stack.pop();
      i++;
    } else i++;
  }
  return undefined;
}
