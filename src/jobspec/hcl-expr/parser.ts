/**
 * Reads HCL2 expression source (hclsyntax's grammar: operators by precedence, conditionals, for-expressions,
 * function calls, splats, quoted templates and heredocs) into the tree of ast.ts. Whitespace, newlines and
 * comments between tokens are skipped, as inside HCL's brackets.
 */
import type { BinaryOp, Expr, Op, TemplatePart } from './ast.ts';
import { ExprError } from './errors.ts';
import { buildTemplate, type FlatPart } from './template-tree.ts';

const ID_START = /[\p{ID_Start}_]/u;
const ID_PART = /[\p{ID_Continue}_-]/u;

/** Binary operators by precedence level, lowest first (hclsyntax spec, "Operations"). */
const LEVELS: BinaryOp[][] = [['||'], ['&&'], ['==', '!='], ['<=', '>=', '<', '>'], ['+', '-'], ['*', '/', '%']];

/** Parses a whole expression; `src` is the text inside `${ }` (or an attribute's expression). */
export function parseExpression(src: string): Expr {
  const p = new Parser(src, 0);
  const e = p.expression();
  p.skip();
  if (p.pos < src.length) throw new ExprError(`Extra characters after expression: ${JSON.stringify(src.slice(p.pos, p.pos + 20))}`, p.pos);
  return e;
}

/**
 * Parses a string as hcl2json gives it: literal text already unescaped (HCL's `$${` / `%%{` escapes kept as
 * written), `${expr}` interpolations and `%{if}` / `%{for}` directives with their expressions as source.
 */
export function parseTemplate(src: string): TemplatePart[] {
  const p = new Parser(src, 0);
  const flat = p.templateFlat('end', false);
  return buildTemplate(flat, src.length);
}

export class Parser {
  constructor(
    readonly src: string,
    public pos: number,
  ) {}

  fail(message: string, at = this.pos): never {
    throw new ExprError(message, at);
  }

  skip(): void {
    const s = this.src;
    for (;;) {
      const c = s[this.pos];
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') this.pos++;
      else if (c === '#' || (c === '/' && s[this.pos + 1] === '/')) {
        while (this.pos < s.length && s[this.pos] !== '\n') this.pos++;
      } else if (c === '/' && s[this.pos + 1] === '*') {
        const end = s.indexOf('*/', this.pos + 2);
        this.pos = end < 0 ? s.length : end + 2;
      } else return;
    }
  }

  peek(text: string): boolean {
    this.skip();
    return this.src.startsWith(text, this.pos);
  }

  eat(text: string): boolean {
    if (!this.peek(text)) return false;
    this.pos += text.length;
    return true;
  }

  expect(text: string, what: string): void {
    if (!this.eat(text)) this.fail(`Missing ${JSON.stringify(text)}: expected ${what}${this.pos < this.src.length ? `, found ${JSON.stringify(this.src.slice(this.pos, this.pos + 12))}` : ' before the end'}`);
  }

  ident(): string | undefined {
    this.skip();
    const s = this.src;
    if (!ID_START.test(s[this.pos] ?? '')) return undefined;
    const start = this.pos++;
    while (this.pos < s.length && ID_PART.test(s[this.pos]!)) this.pos++;
    return s.slice(start, this.pos);
  }

  /** A keyword (`for`, `in`, `if`) only where a whole identifier equals it. */
  keyword(word: string): boolean {
    const save = this.pos;
    if (this.ident() === word) return true;
    this.pos = save;
    return false;
  }

  expression(): Expr {
    const cond = this.binary(0);
    if (!this.peek('?')) return cond;
    this.pos++;
    const yes = this.expression();
    this.expect(':', 'the ":" of a conditional (c ? a : b)');
    const no = this.expression();
    return { k: 'conditional', cond, then: yes, else: no, at: cond.at };
  }

  binary(level: number): Expr {
    if (level === LEVELS.length) return this.unary();
    let left = this.binary(level + 1);
    for (;;) {
      this.skip();
      // Longer operators come first in each level (`<=` before `<`); `=`, `=>` and `!` alone are not binary.
      const op = LEVELS[level]!.find((o) => this.src.startsWith(o, this.pos));
      if (!op) return left;
      const at = this.pos;
      this.pos += op.length;
      const right = this.binary(level + 1);
      left = { k: 'binary', op, left, right, at };
    }
  }

  unary(): Expr {
    this.skip();
    const c = this.src[this.pos];
    if ((c === '!' && this.src[this.pos + 1] !== '=') || c === '-') {
      const at = this.pos++;
      return { k: 'unary', op: c, operand: this.unary(), at };
    }
    return this.postfix(this.primary());
  }

  postfix(base: Expr): Expr {
    let e = base;
    for (;;) {
      this.skip();
      const at = this.pos;
      if (this.src.startsWith('[*]', at) || /^\[\s*\*\s*\]/.test(this.src.slice(at, at + 8))) {
        this.pos = this.src.indexOf(']', at) + 1;
        e = { k: 'splat', target: e, ops: this.ops(true), at };
      } else if (this.src.startsWith('.*', at)) {
        this.pos += 2;
        e = { k: 'splat', target: e, ops: this.ops(false), at };
      } else {
        const op = this.op();
        if (!op) return e;
        e = { k: 'op', target: e, op, at };
      }
    }
  }

  /** The steps after a splat: index steps only after `[*]` (a legacy `.*` takes attributes only). */
  private ops(withIndex: boolean): Op[] {
    const out: Op[] = [];
    for (;;) {
      this.skip();
      if (!withIndex && this.src[this.pos] === '[') return out;
      const op = this.op();
      if (!op) return out;
      out.push(op);
    }
  }

  private op(): Op | undefined {
    this.skip();
    const at = this.pos;
    const c = this.src[at];
    if (c === '.' && this.src[at + 1] !== '.' && this.src[at + 1] !== '*') {
      this.pos++;
      this.skip();
      const num = /^\d+/.exec(this.src.slice(this.pos));
      if (num) {
        this.pos += num[0].length;
        return { k: 'index', key: { k: 'literal', value: Number(num[0]), at }, at };
      }
      const name = this.ident();
      if (name === undefined) this.fail('Invalid attribute name: an attribute name is required after a dot', this.pos);
      return { k: 'attr', name, at };
    }
    if (c === '[') {
      this.pos++;
      const key = this.expression();
      this.expect(']', 'the "]" closing an index');
      return { k: 'index', key, at };
    }
    return undefined;
  }

  primary(): Expr {
    this.skip();
    const at = this.pos;
    const s = this.src;
    const c = s[at];
    if (c === undefined) this.fail('Missing expression: expected an expression before the end');
    const num = /^\d+(\.\d+)?([eE][+-]?\d+)?/.exec(s.slice(at, at + 400));
    if (num) {
      this.pos += num[0].length;
      return { k: 'literal', value: Number(num[0]), at };
    }
    if (c === '"') return this.quoted();
    if (c === '<' && s[at + 1] === '<') return this.heredoc();
    if (c === '(') {
      this.pos++;
      const inner = this.expression();
      this.expect(')', 'the ")" closing a parenthesis');
      return { k: 'paren', inner, at };
    }
    if (c === '[') return this.tuple();
    if (c === '{') return this.object();
    const name = this.ident();
    if (name === undefined) this.fail(`Invalid expression: expected the start of an expression, found ${JSON.stringify(s.slice(at, at + 12))}`);
    if (name === 'true' || name === 'false') return { k: 'literal', value: name === 'true', at };
    if (name === 'null') return { k: 'literal', value: null, at };
    if (this.peek('(')) return this.call(name, at);
    return this.scope(name, at);
  }

  private scope(root: string, at: number): Expr {
    const steps: { step: string | number; at: number }[] = [];
    let end = this.pos;
    for (;;) {
      const save = this.pos;
      this.skip();
      const here = this.pos;
      const attr = this.src[here] === '.' ? /^\.\s*(\d+|[\p{ID_Start}_][\p{ID_Continue}_-]*)/u.exec(this.src.slice(here, here + 300)) : null;
      const index = this.src[here] === '[' ? /^\[\s*(\d+|"(?:[^"\\$%]|\\.)*")\s*\]/.exec(this.src.slice(here, here + 300)) : null;
      const m = attr ?? index;
      if (!m) {
        this.pos = save;
        return { k: 'scope', root, steps, at, end };
      }
      const key = m[1]!;
      steps.push({ step: /^\d+$/.test(key) ? Number(key) : key.startsWith('"') ? (JSON.parse(key) as string) : key, at: here });
      this.pos = here + m[0].length;
      end = this.pos;
    }
  }

  private call(name: string, at: number): Expr {
    this.expect('(', 'the "(" of a function call');
    const args: Expr[] = [];
    const argText: string[] = [];
    let expand = false;
    while (!this.eat(')')) {
      if (expand) this.fail('Missing ")": the "..." expansion must be on the last argument');
      this.skip();
      const start = this.pos;
      args.push(this.expression());
      argText.push(this.src.slice(start, this.pos));
      if (this.eat('...')) expand = true;
      if (!this.eat(',') && !this.peek(')')) this.fail(`Missing "," or ")": the arguments of ${name}() are separated by commas`);
    }
    return { k: 'call', name, args, expand, at, argText };
  }

  private tuple(): Expr {
    const at = this.pos++;
    if (this.forAhead()) return this.forExpr(false, at, ']');
    const items: Expr[] = [];
    while (!this.eat(']')) {
      items.push(this.expression());
      if (!this.eat(',') && !this.peek(']')) this.fail('Missing "," or "]": the items of a tuple are separated by commas');
    }
    return { k: 'tuple', items, at };
  }

  private object(): Expr {
    const at = this.pos++;
    if (this.forAhead()) return this.forExpr(true, at, '}');
    const items: { key: Expr; value: Expr }[] = [];
    while (!this.eat('}')) {
      this.skip();
      const keyAt = this.pos;
      const save = this.pos;
      const name = this.ident();
      let key: Expr;
      if (name !== undefined && (this.peek('=') || this.peek(':')) && !this.peek('==')) key = { k: 'literal', value: name, at: keyAt };
      else {
        this.pos = save;
        key = this.expression();
      }
      if (!this.eat('=') && !this.eat(':')) this.fail('Missing "=": an object item is key = value');
      items.push({ key, value: this.expression() });
      this.eat(',');
    }
    return { k: 'object', items, at };
  }

  private forAhead(): boolean {
    const save = this.pos;
    const yes = this.keyword('for') && this.ident() !== undefined;
    this.pos = save;
    return yes;
  }

  private forExpr(object: boolean, at: number, close: string): Expr {
    this.keyword('for');
    let valVar = this.ident()!;
    let keyVar: string | undefined;
    if (this.eat(',')) {
      keyVar = valVar;
      valVar = this.ident() ?? this.fail('Invalid "for" expression: expected a value variable name after ","');
    }
    if (!this.keyword('in')) this.fail('Invalid "for" expression: expected "in" after the iterator names');
    const coll = this.expression();
    this.expect(':', 'the ":" after a "for" expression\'s collection');
    let key: Expr | undefined;
    let value = this.expression();
    if (object) {
      this.expect('=>', 'the "=>" between key and value of a "for" expression building an object');
      key = value;
      value = this.expression();
    }
    const group = object && this.eat('...');
    const cond = this.keyword('if') ? this.expression() : undefined;
    this.expect(close, `the "${close}" closing the "for" expression`);
    return { k: 'for', object, ...(keyVar !== undefined && { keyVar }), valVar, coll, ...(key && { key }), value, ...(cond && { cond }), group, at };
  }

  private quoted(): Expr {
    const at = this.pos++;
    const flat = this.templateFlat('quote', true);
    return { k: 'template', parts: buildTemplate(flat, at), at };
  }

  private heredoc(): Expr {
    const at = this.pos;
    const m = /^<<(-?)([\p{ID_Start}_][\p{ID_Continue}_-]*)\r?\n/u.exec(this.src.slice(at));
    if (!m) this.fail('Invalid heredoc: expected <<MARKER (or <<-MARKER) and a newline');
    const bodyStart = at + m[0].length;
    const lines: string[] = [];
    let k = bodyStart;
    for (;;) {
      const nl = this.src.indexOf('\n', k);
      const line = this.src.slice(k, nl < 0 ? this.src.length : nl);
      if (line.trim() === m[2]) {
        this.pos = k + line.length;
        break;
      }
      if (nl < 0) this.fail(`Unterminated heredoc: no line closing it with ${m[2]}`, at);
      lines.push(line + '\n');
      k = nl + 1;
    }
    let body = lines.join('');
    if (m[1] === '-') {
      const indent = Math.min(...lines.filter((l) => l.trim() !== '').map((l) => /^[ \t]*/.exec(l)![0].length));
      body = lines.map((l) => l.slice(Math.min(indent, /^[ \t]*/.exec(l)![0].length))).join('');
    }
    const inner = new Parser(body, 0);
    const flat = inner.templateFlat('end', false);
    return { k: 'template', parts: buildTemplate(flat, at), at };
  }

  /**
   * Reads template parts up to a closing quote (`quote`, with backslash escapes and `$${` unescaped, as in
   * source) or the end of the text (`end`, hcl2json's form: `$${` stays as written). Strip markers apply.
   */
  templateFlat(until: 'quote' | 'end', escapes: boolean): FlatPart[] {
    const s = this.src;
    const out: FlatPart[] = [];
    let text = '';
    let stripNext = false;
    const flush = (): void => {
      if (text) out.push({ k: 'text', text });
      text = '';
    };
    for (;;) {
      if (this.pos >= s.length) {
        if (until === 'quote') this.fail('Unterminated template string: no closing quote', this.pos);
        break;
      }
      const c = s[this.pos]!;
      if (until === 'quote' && c === '"') {
        this.pos++;
        break;
      }
      if ((c === '$' || c === '%') && s[this.pos + 1] === c && s[this.pos + 2] === '{') {
        text += escapes ? `${c}{` : `${c}${c}{`;
        this.pos += 3;
        continue;
      }
      if ((c === '$' || c === '%') && s[this.pos + 1] === '{') {
        const at = this.pos;
        this.pos += 2;
        if (s[this.pos] === '~') {
          this.pos++;
          text = text.replace(/\s+$/, '');
        }
        flush();
        if (stripNext && out.length > 0) stripNext = false;
        if (c === '$') {
          const expr = this.expression();
          const strip = this.closeTemplate();
          out.push({ k: 'interp', expr, text: s.slice(at, this.pos), at });
          stripNext = strip;
        } else {
          out.push(this.directive(at));
          stripNext = this.closeTemplate();
        }
        continue;
      }
      if (escapes && c === '\\') {
        text += this.escape();
        continue;
      }
      if (until === 'quote' && c === '\n') this.fail('Unterminated template string: a quoted string cannot span lines', this.pos);
      this.pos++;
      if (stripNext) {
        if (/\s/.test(c)) continue;
        stripNext = false;
      }
      text += c;
    }
    flush();
    return out;
  }

  private closeTemplate(): boolean {
    this.skip();
    const strip = this.src[this.pos] === '~';
    if (strip) this.pos++;
    this.expect('}', 'the "}" closing a template sequence');
    return strip;
  }

  private directive(at: number): FlatPart {
    const word = this.ident();
    if (word === 'if') return { k: 'if', cond: this.expression(), at };
    if (word === 'else' || word === 'endif' || word === 'endfor') return { k: word, at };
    if (word === 'for') {
      let valVar = this.ident() ?? this.fail('Invalid template directive: expected an iterator name after "for"');
      let keyVar: string | undefined;
      if (this.eat(',')) {
        keyVar = valVar;
        valVar = this.ident() ?? this.fail('Invalid template directive: expected a value name after ","');
      }
      if (!this.keyword('in')) this.fail('Invalid template directive: expected "in" after the iterator names');
      return { k: 'for', ...(keyVar !== undefined && { keyVar }), valVar, coll: this.expression(), at };
    }
    return this.fail(`Invalid template directive: expected if, else, endif, for or endfor, found ${JSON.stringify(word ?? this.src.slice(this.pos, this.pos + 8))}`, at);
  }

  private escape(): string {
    const s = this.src;
    const e = s[this.pos + 1];
    const simple: Record<string, string> = { n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\' };
    if (e !== undefined && e in simple) {
      this.pos += 2;
      return simple[e]!;
    }
    const hex = e === 'u' ? 4 : e === 'U' ? 8 : 0;
    const digits = s.slice(this.pos + 2, this.pos + 2 + hex);
    if (hex > 0 && new RegExp(`^[0-9a-fA-F]{${hex}}$`).test(digits)) {
      this.pos += 2 + hex;
      return String.fromCodePoint(parseInt(digits, 16));
    }
    return this.fail(`Invalid escape sequence: \\${e ?? ''} (the escapes are \\n \\r \\t \\" \\\\ \\uNNNN \\UNNNNNNNN)`);
  }
}
