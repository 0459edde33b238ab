/**
 * Nomad's `filter` expressions (HashiCorp's go-bexpr), written against its documented grammar: matches
 * joined by `and` / `or`, negated by `not`, grouped by parentheses. A match is one of
 *
 *     Selector == Value         Selector != Value
 *     Selector is empty         Selector is not empty
 *     Value in Selector         Value not in Selector
 *     Selector contains Value   Selector not contains Value
 *     Selector matches "re"     Selector not matches "re"
 *
 * A selector names a field of the JSON object (`Status`, `Meta.tag`, `TaskStates["web"].State`); a value is a
 * string (`"double quoted"` or `` `raw` ``), a number, `true`/`false`, or a bare word taken as a string.
 * A value is compared as the field's type, as go-bexpr converts it.
 */

/** A filter expression that does not parse: the message says where and what was expected. */
export class FilterError extends Error {
  readonly code = 'ErrBadFilter';
  constructor(message: string) {
    super(message);
    this.name = 'FilterError';
  }
}

type Selector = string[];
type Literal = { kind: 'string' | 'number' | 'bool' | 'word'; text: string };

/** A parsed expression. */
export type Expr =
  | { op: 'and' | 'or'; left: Expr; right: Expr }
  | { op: 'not'; expr: Expr }
  | { op: '==' | '!='; selector: Selector; value: Literal }
  | { op: 'empty' | 'not empty'; selector: Selector }
  | { op: 'in' | 'not in'; selector: Selector; value: Literal }
  | { op: 'contains' | 'not contains'; selector: Selector; value: Literal }
  | { op: 'matches' | 'not matches'; selector: Selector; value: Literal; re: RegExp };

type Token = { t: 'word' | 'string' | 'number' | 'op' | 'punct'; v: string; at: number };

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '"') {
      let j = i + 1;
      let v = '';
      while (j < src.length && src[j] !== '"') {
        if (src[j] === '\\' && j + 1 < src.length) {
          const e = src[j + 1]!;
          v += e === 'n' ? '\n' : e === 't' ? '\t' : e === 'r' ? '\r' : e;
          j += 2;
        } else v += src[j++];
      }
      if (j >= src.length) throw new FilterError(`unterminated string starting at character ${i + 1}`);
      out.push({ t: 'string', v, at: i });
      i = j + 1;
    } else if (c === '`') {
      const j = src.indexOf('`', i + 1);
      if (j < 0) throw new FilterError(`unterminated raw string starting at character ${i + 1}`);
      out.push({ t: 'string', v: src.slice(i + 1, j), at: i });
      i = j + 1;
    } else if (src.startsWith('==', i) || src.startsWith('!=', i)) {
      out.push({ t: 'op', v: src.slice(i, i + 2), at: i });
      i += 2;
    } else if ('()[].'.includes(c)) {
      out.push({ t: 'punct', v: c, at: i });
      i++;
    } else if (/[-0-9]/.test(c) && /^-?\d/.test(src.slice(i))) {
      const m = /^-?\d+(\.\d+)?([eE][-+]?\d+)?/.exec(src.slice(i))!;
      out.push({ t: 'number', v: m[0], at: i });
      i += m[0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_\-/]*/.exec(src.slice(i))!;
      out.push({ t: 'word', v: m[0], at: i });
      i += m[0].length;
    } else {
      throw new FilterError(`unexpected ${JSON.stringify(c)} at character ${i + 1}`);
    }
  }
  return out;
}

/** Parses a filter expression; throws a FilterError naming what is wrong and where. */
export function parseFilter(src: string): Expr {
  const tokens = tokenize(src);
  let pos = 0;
  const peek = (k = 0) => tokens[pos + k];
  const where = () => (peek() ? `at character ${peek()!.at + 1}` : 'at the end');
  const isWord = (v: string, k = 0) => peek(k)?.t === 'word' && peek(k)!.v === v;
  const expectWord = (v: string) => {
    if (!isWord(v)) throw new FilterError(`expected "${v}" ${where()}`);
    pos++;
  };

  const selector = (): Selector => {
    const first = peek();
    if (first?.t !== 'word') throw new FilterError(`expected a field name ${where()}`);
    pos++;
    const path = [first.v];
    for (;;) {
      if (peek()?.t === 'punct' && peek()!.v === '.') {
        pos++;
        const w = peek();
        if (w?.t !== 'word' && w?.t !== 'number') throw new FilterError(`expected a field name after "." ${where()}`);
        path.push(w.v);
        pos++;
      } else if (peek()?.t === 'punct' && peek()!.v === '[') {
        pos++;
        const k = peek();
        if (k?.t !== 'string') throw new FilterError(`expected a quoted key in [...] ${where()}`);
        pos++;
        if (!(peek()?.t === 'punct' && peek()!.v === ']')) throw new FilterError(`expected "]" ${where()}`);
        pos++;
        path.push(k.v);
      } else return path;
    }
  };

  const value = (): Literal => {
    const v = peek();
    if (!v) throw new FilterError('expected a value at the end');
    pos++;
    if (v.t === 'string') return { kind: 'string', text: v.v };
    if (v.t === 'number') return { kind: 'number', text: v.v };
    if (v.t === 'word') return v.v === 'true' || v.v === 'false' ? { kind: 'bool', text: v.v } : { kind: 'word', text: v.v };
    throw new FilterError(`expected a value, got ${JSON.stringify(v.v)} at character ${v.at + 1}`);
  };

  const regex = (lit: Literal): RegExp => {
    try {
      return new RegExp(lit.text);
    } catch (err) {
      throw new FilterError(`${JSON.stringify(lit.text)} is not a regular expression: ${(err as Error).message}`);
    }
  };

  const match = (): Expr => {
    // `Value in Selector` starts with a value: a string or number, or a word followed by `in` / `not in`.
    const t = peek();
    const valueFirst = t && (t.t === 'string' || t.t === 'number' || (t.t === 'word' && (isWord('in', 1) || (isWord('not', 1) && isWord('in', 2)))));
    if (valueFirst) {
      const v = value();
      let negated = false;
      if (isWord('not')) (pos++, (negated = true));
      expectWord('in');
      return { op: negated ? 'not in' : 'in', selector: selector(), value: v };
    }
    const sel = selector();
    const op = peek();
    if (op?.t === 'op') {
      pos++;
      return { op: op.v as '==' | '!=', selector: sel, value: value() };
    }
    if (isWord('is')) {
      pos++;
      if (isWord('not')) {
        pos++;
        expectWord('empty');
        return { op: 'not empty', selector: sel };
      }
      expectWord('empty');
      return { op: 'empty', selector: sel };
    }
    let negated = false;
    if (isWord('not')) (pos++, (negated = true));
    if (isWord('contains')) {
      pos++;
      return { op: negated ? 'not contains' : 'contains', selector: sel, value: value() };
    }
    if (isWord('matches')) {
      pos++;
      const v = value();
      return { op: negated ? 'not matches' : 'matches', selector: sel, value: v, re: regex(v) };
    }
    throw new FilterError(`expected ==, !=, is, contains or matches after ${sel.join('.')} ${where()}`);
  };

  const unary = (): Expr => {
    if (isWord('not') && !isWord('in', 1) && !isWord('contains', 1) && !isWord('matches', 1)) {
      pos++;
      return { op: 'not', expr: unary() };
    }
    if (peek()?.t === 'punct' && peek()!.v === '(') {
      pos++;
      const e = or();
      if (!(peek()?.t === 'punct' && peek()!.v === ')')) throw new FilterError(`expected ")" ${where()}`);
      pos++;
      return e;
    }
    return match();
  };
  const and = (): Expr => {
    let left = unary();
    while (isWord('and')) {
      pos++;
      left = { op: 'and', left, right: unary() };
    }
    return left;
  };
  const or = (): Expr => {
    let left = and();
    while (isWord('or')) {
      pos++;
      left = { op: 'or', left, right: and() };
    }
    return left;
  };

  if (tokens.length === 0) throw new FilterError('the filter is empty');
  const expr = or();
  if (pos < tokens.length) throw new FilterError(`unexpected ${JSON.stringify(peek()!.v)} at character ${peek()!.at + 1}`);
  return expr;
}

const MISSING = Symbol('missing');

function select(obj: unknown, path: Selector): unknown {
  let v: unknown = obj;
  for (const key of path) {
    if (typeof v !== 'object' || v === null || !Object.prototype.hasOwnProperty.call(v, key)) return MISSING;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** The literal as the field's type (go-bexpr converts the value to the selected field's kind). */
function equal(field: unknown, lit: Literal): boolean {
  if (typeof field === 'number') return lit.kind !== 'bool' && Number(lit.text) === field;
  if (typeof field === 'boolean') return (lit.text === 'true' || lit.text === 'false') && (lit.text === 'true') === field;
  if (typeof field === 'string') return field === lit.text;
  if (field === null) return lit.text === '' || lit.text === 'null';
  return false;
}

function contains(collection: unknown, lit: Literal): boolean {
  if (typeof collection === 'string') return collection.includes(lit.text);
  if (Array.isArray(collection)) return collection.some((item) => equal(item, lit));
  if (typeof collection === 'object' && collection !== null) return Object.prototype.hasOwnProperty.call(collection, lit.text);
  return false;
}

function isEmpty(v: unknown): boolean {
  if (v === MISSING || v === null || v === undefined || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.keys(v as object).length === 0;
  return false;
}

/** Whether `obj` (a JSON object) matches the expression. */
export function evaluateFilter(expr: Expr, obj: unknown): boolean {
  switch (expr.op) {
    case 'and':
      return evaluateFilter(expr.left, obj) && evaluateFilter(expr.right, obj);
    case 'or':
      return evaluateFilter(expr.left, obj) || evaluateFilter(expr.right, obj);
    case 'not':
      return !evaluateFilter(expr.expr, obj);
    case '==':
    case '!=': {
      const v = select(obj, expr.selector);
      const eq = v !== MISSING && equal(v, expr.value);
      return expr.op === '==' ? eq : !eq;
    }
    case 'empty':
    case 'not empty':
      return isEmpty(select(obj, expr.selector)) === (expr.op === 'empty');
    case 'in':
    case 'not in':
    case 'contains':
    case 'not contains': {
      const c = contains(select(obj, expr.selector), expr.value);
      return expr.op === 'in' || expr.op === 'contains' ? c : !c;
    }
    case 'matches':
    case 'not matches': {
      const v = select(obj, expr.selector);
      const m = typeof v === 'string' && expr.re.test(v);
      return expr.op === 'matches' ? m : !m;
    }
  }
}
