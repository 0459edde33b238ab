/**
 * JSON job files: values from `JSON.parse`, positions from a small strict scanner, because V8's syntax
 * errors only sometimes carry an offset and never a line.
 */
import { LineIndex, locateInTree, type PosNode } from './positions.ts';
import { SpecError } from './spec-error.ts';
import type { ParsedSource } from './source.ts';

class JsonSyntaxError {
  constructor(
    readonly offset: number,
    readonly message: string,
  ) {}
}

/** Parses JSON text into its value and a locator; a syntax error is a SpecError at its line:column. */
export function parseJsonSource(text: string, file: string | undefined, maxDepth: number): ParsedSource {
  const lines = new LineIndex(text);
  let tree: PosNode;
  try {
    tree = scanJson(text, maxDepth);
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    throw new SpecError([{ path: '', message: `JSON syntax error: ${err.message}`, file, ...lines.at(err.offset) }]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // The scanner accepted it, so this is V8 disagreeing on an edge case; its message may hold an offset.
    const message = (err as Error).message;
    const offset = Number(/\bposition (\d+)/.exec(message)?.[1] ?? 0);
    throw new SpecError([{ path: '', message: `JSON syntax error: ${message}`, file, ...lines.at(offset) }]);
  }
  return { value, lines, locate: (path) => locateInTree(tree, path) };
}

/** Builds the position tree of strict JSON (RFC 8259), throwing JsonSyntaxError at the first fault. */
function scanJson(text: string, maxDepth: number): PosNode {
  let i = 0;
  const fail = (at: number, message: string): never => {
    throw new JsonSyntaxError(at, message);
  };
  const ws = (): void => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const describe = (at: number): string => (at >= text.length ? 'end of file' : JSON.stringify(text[at]));

  const str = (): string => {
    const start = i;
    i++;
    for (;;) {
      if (i >= text.length) fail(start, 'unterminated string');
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return JSON.parse(text.slice(start, i)) as string;
      }
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail(i, 'invalid \\u escape in a string');
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else fail(i, `invalid escape ${JSON.stringify(`\\${e ?? ''}`)} in a string`);
        continue;
      }
      if (c < 0x20) fail(i, c === 10 ? 'unterminated string (a newline inside a string must be written \\n)' : 'control character in a string');
      i++;
    }
  };

  const value = (depth: number): PosNode => {
    ws();
    const offset = i;
    const c = text[i];
    if ((c === '{' || c === '[') && depth >= maxDepth) fail(i, `nested more than ${maxDepth} levels deep`);
    if (c === '{') {
      i++;
      const entries = new Map<string, { keyOffset: number; node: PosNode }>();
      ws();
      if (text[i] === '}') {
        i++;
        return { kind: 'map', offset, entries };
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail(i, `expected a double-quoted property name, found ${describe(i)}`);
        const keyOffset = i;
        const key = str();
        ws();
        if (text[i] !== ':') fail(i, `expected ':' after property name ${JSON.stringify(key)}, found ${describe(i)}`);
        i++;
        entries.set(key, { keyOffset, node: value(depth + 1) });
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return { kind: 'map', offset, entries };
        }
        fail(i, `expected ',' or '}' after the value of ${JSON.stringify(key)}, found ${describe(i)}`);
      }
    }
    if (c === '[') {
      i++;
      const items: PosNode[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return { kind: 'seq', offset, items };
      }
      for (;;) {
        items.push(value(depth + 1));
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return { kind: 'seq', offset, items };
        }
        fail(i, `expected ',' or ']' after a list item, found ${describe(i)}`);
      }
    }
    if (c === '"') {
      str();
      return { kind: 'scalar', offset };
    }
    const num = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    num.lastIndex = i;
    if ((c === '-' || (c !== undefined && c >= '0' && c <= '9')) && num.test(text)) {
      i = num.lastIndex;
      return { kind: 'scalar', offset };
    }
    for (const lit of ['true', 'false', 'null']) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return { kind: 'scalar', offset };
      }
    }
    return fail(i, i >= text.length ? 'unexpected end of file' : `unexpected ${describe(i)}`);
  };

  const root = value(0);
  ws();
  if (i < text.length) fail(i, `unexpected ${describe(i)} after the end of the JSON value`);
  return root;
}
