/**
 * Where things are written in an HCL job file. hcl2json (HashiCorp's parser) returns values without
 * positions, so this small scanner re-reads the source for its structure: blocks with their labels,
 * attributes, and the keys of object-literal attributes (`env = { A = "1" }`), each with its offset.
 *
 * It runs only on files the real parser accepted. Limits: positions inside expressions (list items, nested
 * object values beyond the first level, template contents) resolve to the enclosing attribute; a heredoc's
 * closing marker is recognised by its trimmed line; it never throws (a confusing input just yields fewer
 * positions, and the problem is reported without a line).
 */
import type { PathSegment } from './spec-error.ts';

/** A key of an object-literal value, with its own nested keys when its value is an object too. */
export interface HclObjectEntry {
  key: string;
  offset: number;
  value?: HclObjectEntry[];
}

/** A block or an attribute of an HCL body. */
export type HclItem =
  | { kind: 'block'; type: string; offset: number; labels: { value: string; offset: number }[]; body: HclItem[] }
  | { kind: 'attribute'; name: string; offset: number; object?: HclObjectEntry[] };

type Token =
  | { t: 'ident'; text: string; offset: number }
  | { t: 'string'; text: string; offset: number }
  | { t: 'punct'; text: string; offset: number }
  | { t: 'newline' | 'other' | 'eof'; text: string; offset: number };

/** Deeper nesting than this is not followed (the positions stop there). */
const MAX_DEPTH = 200;

const IDENT_START = /[\p{ID_Start}_]/u;
const IDENT_PART = /[\p{ID_Continue}\-_]/u;

/** Scans HCL source into tokens: identifiers, strings (templates skipped as a whole), punctuation, newlines. */
function tokenize(src: string): Token[] {
  const out: Token[] = [];
  const n = src.length;
  let i = 0;

  // A quoted template: skips `${ ... }` / `%{ ... }` sequences, which may hold nested strings and braces.
  const skipString = (start: number): number => {
    let k = start + 1;
    while (k < n) {
      const c = src[k];
      if (c === '\\') k += 2;
      else if (c === '"') return k + 1;
      else if (c === '\n') return k;
      else if ((c === '$' || c === '%') && src[k + 1] === c && src[k + 2] === '{') k += 3;
      else if ((c === '$' || c === '%') && src[k + 1] === '{') k = skipTemplate(k + 2);
      else k++;
    }
    return n;
  };
  const skipTemplate = (start: number): number => {
    let depth = 1;
    let k = start;
    while (k < n) {
      const c = src[k];
      if (c === '"') {
        k = skipString(k);
        continue;
      }
      if (c === '{') depth++;
      else if (c === '}' && --depth === 0) return k + 1;
      k++;
    }
    return n;
  };

  while (i < n) {
    const c = src[i]!;
    if (c === '\n') {
      out.push({ t: 'newline', text: c, offset: i });
      i++;
    } else if (c === ' ' || c === '\t' || c === '\r' || c === '\uFEFF') {
      i++;
    } else if (c === '#' || (c === '/' && src[i + 1] === '/')) {
      while (i < n && src[i] !== '\n') i++;
    } else if (c === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === '"') {
      const end = skipString(i);
      out.push({ t: 'string', text: src.slice(i, end), offset: i });
      i = end;
    } else if (c === '<' && src[i + 1] === '<' && /[-\p{ID_Start}_]/u.test(src[i + 2] ?? '')) {
      // A heredoc: everything up to the line holding only its marker is one value.
      const m = /<<-?([\p{ID_Start}_][\p{ID_Continue}\-_]*)/uy;
      m.lastIndex = i;
      const hit = m.exec(src);
      if (!hit) {
        out.push({ t: 'other', text: c, offset: i });
        i++;
        continue;
      }
      const marker = hit[1]!;
      let lineStart = src.indexOf('\n', m.lastIndex);
      let end = n;
      while (lineStart >= 0) {
        const next = src.indexOf('\n', lineStart + 1);
        const line = src.slice(lineStart + 1, next < 0 ? n : next);
        if (line.trim() === marker) {
          end = next < 0 ? n : next;
          break;
        }
        lineStart = next;
      }
      out.push({ t: 'other', text: src.slice(i, end), offset: i });
      i = end;
    } else if (IDENT_START.test(c)) {
      const start = i;
      i++;
      while (i < n && IDENT_PART.test(src[i]!)) i++;
      out.push({ t: 'ident', text: src.slice(start, i), offset: start });
    } else if ('{}[]()=:,'.includes(c)) {
      out.push({ t: 'punct', text: c, offset: i });
      i++;
    } else {
      out.push({ t: 'other', text: c, offset: i });
      i++;
    }
  }
  out.push({ t: 'eof', text: '', offset: n });
  return out;
}

/** A quoted label or key's value (escapes decoded when it is plain JSON-compatible). */
function unquote(text: string): string {
  try {
    return JSON.parse(text) as string;
  } catch {
    return text.slice(1, text.endsWith('"') ? -1 : undefined);
  }
}

/** Reads the structure of HCL source: its top-level body's blocks and attributes, with offsets. */
export function scanHcl(src: string): HclItem[] {
  const toks = tokenize(src);
  let p = 0;
  const peek = (): Token => toks[p]!;
  const isPunct = (tok: Token, text: string): boolean => tok.t === 'punct' && tok.text === text;

  // Skips an expression up to a newline, a comma, or a closer at depth 0 (not consumed).
  const skipExpression = (stopAtComma: boolean): void => {
    let depth = 0;
    for (;;) {
      const tok = peek();
      if (tok.t === 'eof') return;
      if (depth === 0 && (tok.t === 'newline' || (stopAtComma && isPunct(tok, ',')))) return;
      if (tok.t === 'punct') {
        if ('([{'.includes(tok.text)) depth++;
        else if (')]}'.includes(tok.text)) {
          if (depth === 0) return;
          depth--;
        }
      }
      p++;
    }
  };

  const parseObject = (depth: number): HclObjectEntry[] => {
    p++; // '{'
    const entries: HclObjectEntry[] = [];
    for (;;) {
      const tok = peek();
      if (tok.t === 'eof') return entries;
      if (tok.t === 'newline' || isPunct(tok, ',')) {
        p++;
        continue;
      }
      if (isPunct(tok, '}')) {
        p++;
        return entries;
      }
      let entry: HclObjectEntry | undefined;
      if (tok.t === 'ident' || tok.t === 'string') {
        entry = { key: tok.t === 'string' ? unquote(tok.text) : tok.text, offset: tok.offset };
        p++;
      }
      const sep = peek();
      if (!entry || !(isPunct(sep, '=') || isPunct(sep, ':'))) {
        // Not a plain `key = value` (a `for` expression, a computed key): skip to the next item.
        skipExpression(true);
        if (isPunct(peek(), ')') || isPunct(peek(), ']')) p++;
        continue;
      }
      p++;
      if (isPunct(peek(), '{') && depth < MAX_DEPTH) entry.value = parseObject(depth + 1);
      else skipExpression(true);
      entries.push(entry);
    }
  };

  const parseBody = (depth: number): HclItem[] => {
    const items: HclItem[] = [];
    for (;;) {
      const tok = peek();
      if (tok.t === 'eof' || isPunct(tok, '}')) return items;
      if (tok.t !== 'ident') {
        p++;
        continue;
      }
      p++;
      if (isPunct(peek(), '=')) {
        p++;
        const item: HclItem = { kind: 'attribute', name: tok.text, offset: tok.offset };
        if (isPunct(peek(), '{') && depth < MAX_DEPTH) item.object = parseObject(depth + 1);
        skipExpression(false);
        items.push(item);
        continue;
      }
      const labels: { value: string; offset: number }[] = [];
      while (peek().t === 'string' || peek().t === 'ident') {
        const l = peek();
        labels.push({ value: l.t === 'string' ? unquote(l.text) : l.text, offset: l.offset });
        p++;
      }
      if (!isPunct(peek(), '{')) continue;
      p++;
      const body = depth < MAX_DEPTH ? parseBody(depth + 1) : [];
      if (depth >= MAX_DEPTH) skipExpression(false);
      if (isPunct(peek(), '}')) p++;
      items.push({ kind: 'block', type: tok.text, offset: tok.offset, labels, body });
    }
  };

  const items: HclItem[] = [];
  // A stray '}' at the top level (never in a valid file) must not end the scan early.
  while (peek().t !== 'eof') {
    items.push(...parseBody(0));
    if (peek().t !== 'eof') p++;
  }
  return items;
}

/**
 * The offset where `path` is written: walks blocks by type then label (a number picks the n-th repeat),
 * attributes, and object-literal keys; stops at the deepest part it finds.
 */
export function locateInHcl(items: HclItem[], path: readonly PathSegment[]): number | undefined {
  let body: HclItem[] | undefined = items;
  let object: HclObjectEntry[] | undefined;
  let best: number | undefined;
  let i = 0;
  while (i < path.length) {
    const seg = path[i];
    if (typeof seg !== 'string') break;
    if (object) {
      const entry: HclObjectEntry | undefined = object.find((e) => e.key === seg);
      if (!entry) break;
      best = entry.offset;
      object = entry.value;
      if (!object) break;
      i++;
      continue;
    }
    if (!body) break;
    const named: HclItem[] = body.filter((it) => (it.kind === 'block' ? it.type : it.name) === seg);
    if (named.length === 0) break;
    i++;
    const first = named[0]!;
    if (first.kind === 'attribute') {
      best = first.offset;
      object = first.object;
      body = undefined;
      if (!object) break;
      continue;
    }
    let blocks = named.filter((b): b is Extract<HclItem, { kind: 'block' }> => b.kind === 'block');
    const label = path[i];
    if (typeof label === 'string' && blocks.some((b) => b.labels.length > 0)) {
      const labelled = blocks.filter((b) => b.labels[0]?.value === label);
      if (labelled.length === 0) {
        best = blocks[0]!.offset;
        break;
      }
      blocks = labelled;
      i++;
    }
    let block = blocks[0]!;
    const nth = path[i];
    if (typeof nth === 'number' && blocks[nth]) {
      block = blocks[nth]!;
      i++;
    }
    best = block.offset;
    body = block.body;
  }
  return best;
}
