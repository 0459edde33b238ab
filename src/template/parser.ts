/**
 * The parser of Go's text/template (text/template/parse/parse.go): actions, pipelines with `$x :=` and
 * `$x =`, `if`/`else if`/`range`/`with`/`else with`, `break`/`continue` inside `range`, `define`, `block`
 * and `template`. Functions and variables are checked as Go checks them, at parse time.
 */
import { TemplateParseError } from './errors.ts';
import { LexError, lex, type Token } from './lexer.ts';
import { lineCol, type ArgNode, type CommandNode, type Node, type PipeNode, type Tree } from './nodes.ts';

/** What the parser needs to know: the template's name, its delimiters and which function names exist. */
export interface ParseOptions {
  name: string;
  leftDelim?: string;
  rightDelim?: string;
  hasFunction(name: string): boolean;
}

/** The trees of one text: the main one (named `name`) and every `define`/`block` in it. */
export function parseTemplate(text: string, opts: ParseOptions): Map<string, Tree> {
  let tokens: Token[];
  try {
    tokens = lex(text, opts.leftDelim, opts.rightDelim);
  } catch (err) {
    if (err instanceof LexError) throw new TemplateParseError(opts.name, lineCol(text, err.pos).line, err.message);
    throw err;
  }
  return new Parser(text, tokens, opts).parse();
}

type ListEnd = { kind: 'end'; pos: number } | { kind: 'else'; pos: number; chained?: 'if' | 'with' };

class Parser {
  private i = 0;
  private vars: string[] = ['$'];
  private rangeDepth = 0;
  private readonly trees = new Map<string, Tree>();
  private treeName: string;

  constructor(
    private readonly text: string,
    private readonly tokens: Token[],
    private readonly opts: ParseOptions,
  ) {
    this.treeName = opts.name;
  }

  parse(): Map<string, Tree> {
    const root: Node[] = [];
    while (this.peek().kind !== 'eof') {
      if (this.peek().kind === 'leftDelim') {
        const delim = this.next();
        if (this.peekNonSpace().kind === 'keyword' && this.peekNonSpace().value === 'define') {
          this.nextNonSpace();
          this.parseDefinition(delim.pos);
          continue;
        }
        this.i--;
      }
      const node = this.textOrAction();
      if (!node) continue;
      if ('kind' in node) this.unexpectedEnd(node);
      else root.push(node);
    }
    this.addTree(this.opts.name, root, 0);
    return this.trees;
  }

  private fail(message: string, pos = this.tokens[Math.max(0, this.i - 1)]!.pos): never {
    throw new TemplateParseError(this.treeName, lineCol(this.text, pos).line, message);
  }

  private next(): Token {
    return this.tokens[this.i++] ?? this.tokens[this.tokens.length - 1]!;
  }
  private peek(): Token {
    return this.tokens[this.i] ?? this.tokens[this.tokens.length - 1]!;
  }
  private nextNonSpace(): Token {
    let t = this.next();
    while (t.kind === 'space') t = this.next();
    return t;
  }
  private peekNonSpace(): Token {
    const save = this.i;
    const t = this.nextNonSpace();
    this.i = save;
    return t;
  }
  private expect(kind: Token['kind'], context: string): Token {
    const t = this.nextNonSpace();
    if (t.kind !== kind) this.unexpected(t, context);
    return t;
  }
  private unexpected(t: Token, context: string): never {
    const what = t.kind === 'eof' ? 'EOF' : t.kind === 'rightDelim' ? `"${t.value}"` : t.kind === 'keyword' ? `<${t.value}>` : `${JSON.stringify(t.value)}`;
    this.fail(`unexpected ${what} in ${context}`, t.pos);
  }
  private unexpectedEnd(end: ListEnd): never {
    this.fail(`unexpected {{${end.kind}}}`, end.pos);
  }

  private parseDefinition(pos: number): void {
    const nameTok = this.nextNonSpace();
    const name = this.templateName(nameTok, 'define clause');
    this.expect('rightDelim', 'define clause');
    const outerName = this.treeName;
    const outerVars = this.vars;
    this.treeName = name;
    this.vars = ['$'];
    const [list, end] = this.itemList();
    if (end.kind !== 'end') this.fail('unexpected {{else}} in define clause', end.pos);
    this.addTree(name, list, pos);
    this.treeName = outerName;
    this.vars = outerVars;
  }

  private addTree(name: string, root: Node[], pos: number): void {
    const existing = this.trees.get(name);
    // Go (parse.Tree.add): within one text, a name gets one non-empty body.
    if (existing && !isEmpty(existing.root)) {
      if (isEmpty(root)) return;
      this.fail(`template: multiple definition of template "${name}"`, pos);
    }
    this.trees.set(name, { name, text: this.text, root });
  }

  /** A list of nodes up to `{{end}}` or `{{else}}`. */
  private itemList(): [Node[], ListEnd] {
    const list: Node[] = [];
    while (this.peekNonSpace().kind !== 'eof') {
      const node = this.textOrAction();
      if (!node) continue;
      if ('kind' in node) return [list, node];
      list.push(node);
    }
    this.fail('unexpected EOF', this.peek().pos);
  }

  private textOrAction(): Node | ListEnd | undefined {
    const t = this.nextNonSpace();
    switch (t.kind) {
      case 'text':
        return { type: 'text', pos: t.pos, text: t.value };
      case 'leftDelim':
        return this.action();
      case 'comment':
        return undefined;
      default:
        this.unexpected(t, 'input');
    }
  }

  private action(): Node | ListEnd {
    const t = this.nextNonSpace();
    if (t.kind === 'keyword') {
      switch (t.value) {
        case 'block':
          return this.blockControl(t.pos);
        case 'break':
        case 'continue':
          if (this.rangeDepth === 0) this.fail(`{{${t.value}}} outside {{range}}`, t.pos);
          this.expect('rightDelim', `{{${t.value}}}`);
          return { type: t.value, pos: t.pos };
        case 'else': {
          const after = this.peekNonSpace();
          if (after.kind === 'keyword' && (after.value === 'if' || after.value === 'with')) {
            this.nextNonSpace();
            return { kind: 'else', pos: t.pos, chained: after.value };
          }
          this.expect('rightDelim', 'else');
          return { kind: 'else', pos: t.pos };
        }
        case 'end':
          this.expect('rightDelim', 'end');
          return { kind: 'end', pos: t.pos };
        case 'if':
        case 'range':
        case 'with':
          return this.control(t.value, t.pos);
        case 'template':
          return this.templateControl(t.pos);
        default:
          break;
      }
    }
    this.i--;
    while (this.tokens[this.i - 1]?.kind === 'space') this.i--;
    const pos = this.peekNonSpace().pos;
    return { type: 'action', pos, pipe: this.pipeline('command', 'rightDelim') };
  }

  private control(context: 'if' | 'range' | 'with', pos: number): Node {
    const mark = this.vars.length;
    const pipe = this.pipeline(context, 'rightDelim');
    if (context === 'range') this.rangeDepth++;
    let [list, next] = this.itemList();
    if (context === 'range') this.rangeDepth--;
    let elseList: Node[] | undefined;
    if (next.kind === 'else') {
      if (next.chained) {
        if (next.chained !== context) this.fail(`unexpected <${next.chained}> after {{else}} in ${context}`, next.pos);
        // {{if a}}x{{else if b}}y{{end}} is {{if a}}x{{else}}{{if b}}y{{end}}{{end}}: the inner one eats the {{end}}.
        elseList = [this.control(next.chained, next.pos)];
      } else {
        [elseList, next] = this.itemList();
        if (next.kind !== 'end') this.fail('expected end; found {{else}}', next.pos);
      }
    }
    this.vars.length = mark;
    return { type: context, pos, pipe, list, ...(elseList && { elseList }) };
  }

  private templateControl(pos: number): Node {
    const name = this.templateName(this.nextNonSpace(), 'template clause');
    let pipe: PipeNode | undefined;
    if (this.peekNonSpace().kind !== 'rightDelim') pipe = this.pipeline('template clause', 'rightDelim');
    else this.nextNonSpace();
    return { type: 'template', pos, name, ...(pipe && { pipe }) };
  }

  /** `{{block "name" pipeline}}body{{end}}`: defines `name` and executes it here. */
  private blockControl(pos: number): Node {
    const name = this.templateName(this.nextNonSpace(), 'block clause');
    const pipe = this.pipeline('block clause', 'rightDelim');
    const outerName = this.treeName;
    const outerVars = this.vars;
    this.treeName = name;
    this.vars = ['$'];
    const [list, end] = this.itemList();
    if (end.kind !== 'end') this.fail('unexpected {{else}} in block clause', end.pos);
    this.addTree(name, list, pos);
    this.treeName = outerName;
    this.vars = outerVars;
    return { type: 'template', pos, name, pipe };
  }

  private templateName(t: Token, context: string): string {
    if (t.kind === 'string' || t.kind === 'rawString') return this.unquote(t);
    this.unexpected(t, context);
  }

  private pipeline(context: string, end: 'rightDelim' | 'rightParen'): PipeNode {
    const pipe: PipeNode = { pos: this.peekNonSpace().pos, isAssign: false, decl: [], cmds: [] };
    // Declarations: `$x :=`, `$x =`, and in range `$i, $e :=`.
    decls: if (this.peekNonSpace().kind === 'variable') {
      const save = this.i;
      const v = this.nextNonSpace();
      const after = this.peekNonSpace();
      if (after.kind === 'assign' || after.kind === 'declare') {
        this.nextNonSpace();
        pipe.isAssign = after.kind === 'assign';
        if (pipe.isAssign && !this.vars.includes(v.value)) this.fail(`undefined variable "${v.value}"`, v.pos);
        pipe.decl.push(v.value);
        if (!pipe.isAssign) this.vars.push(v.value);
        break decls;
      }
      if (after.kind === 'char' && after.value === ',') {
        this.nextNonSpace();
        if (context !== 'range') this.fail(`too many declarations in ${context}`, after.pos);
        const second = this.nextNonSpace();
        if (second.kind !== 'variable') this.fail('range can only initialize variables', second.pos);
        const op = this.nextNonSpace();
        if (op.kind !== 'declare' && op.kind !== 'assign') this.fail('range can only initialize variables', op.pos);
        pipe.isAssign = op.kind === 'assign';
        pipe.decl.push(v.value, second.value);
        if (!pipe.isAssign) this.vars.push(v.value, second.value);
        break decls;
      }
      this.i = save;
    }
    for (;;) {
      const t = this.nextNonSpace();
      if (t.kind === end) {
        this.checkPipeline(pipe, context, t);
        return pipe;
      }
      switch (t.kind) {
        case 'bool': case 'charConstant': case 'dot': case 'field': case 'identifier': case 'number': case 'nil':
        case 'rawString': case 'string': case 'variable': case 'leftParen':
          this.i--;
          pipe.cmds.push(this.command());
          break;
        default:
          this.unexpected(t, context);
      }
    }
  }

  private checkPipeline(pipe: PipeNode, context: string, at: Token): void {
    if (pipe.cmds.length === 0) this.fail(`missing value for ${context}`, at.pos);
    pipe.cmds.slice(1).forEach((cmd, i) => {
      const first = cmd.args[0]!;
      if (['bool', 'dot', 'nil', 'number', 'string'].includes(first.type)) {
        this.fail(`non executable command in pipeline stage ${i + 2}`, first.pos);
      }
    });
  }

  private command(): CommandNode {
    const cmd: CommandNode = { pos: this.peekNonSpace().pos, args: [] };
    for (;;) {
      this.peekNonSpace();
      const operand = this.operand();
      if (operand) cmd.args.push(operand);
      const t = this.next();
      if (t.kind === 'space') continue;
      if (t.kind === 'rightDelim' || t.kind === 'rightParen') this.i--;
      else if (t.kind !== 'pipe') this.unexpected(t, 'operand');
      break;
    }
    if (cmd.args.length === 0) this.fail('empty command');
    return cmd;
  }

  private operand(): ArgNode | undefined {
    const node = this.term();
    if (!node) return undefined;
    if (this.peek().kind !== 'field') return node;
    const fields: string[] = [];
    while (this.peek().kind === 'field') fields.push(this.next().value.slice(1));
    switch (node.type) {
      case 'field':
        return { type: 'field', pos: node.pos, idents: [...node.idents, ...fields] };
      case 'variable':
        return { type: 'variable', pos: node.pos, idents: [...node.idents, ...fields] };
      case 'bool': case 'string': case 'number': case 'nil': case 'dot':
        this.fail(`unexpected . after term ${JSON.stringify(argText(node))}`, node.pos);
      // eslint-disable-next-line no-fallthrough
      default:
        return { type: 'chain', pos: node.pos, node, fields };
    }
  }

  private term(): ArgNode | undefined {
    const t = this.nextNonSpace();
    switch (t.kind) {
      case 'identifier':
        if (!this.opts.hasFunction(t.value)) this.fail(`function "${t.value}" not defined`, t.pos);
        return { type: 'identifier', pos: t.pos, name: t.value };
      case 'dot':
        return { type: 'dot', pos: t.pos };
      case 'nil':
        return { type: 'nil', pos: t.pos };
      case 'variable':
        if (!this.vars.includes(t.value)) this.fail(`undefined variable "${t.value}"`, t.pos);
        return { type: 'variable', pos: t.pos, idents: [t.value] };
      case 'field':
        return { type: 'field', pos: t.pos, idents: [t.value.slice(1)] };
      case 'bool':
        return { type: 'bool', pos: t.pos, value: t.value === 'true' };
      case 'charConstant':
      case 'number':
        return this.number(t);
      case 'leftParen':
        return { type: 'pipe', pos: t.pos, pipe: this.pipeline('parenthesized pipeline', 'rightParen') };
      case 'string':
      case 'rawString':
        return { type: 'string', pos: t.pos, value: this.unquote(t), text: t.value };
      default:
        this.i--;
        return undefined;
    }
  }

  private number(t: Token): ArgNode {
    if (t.kind === 'charConstant') {
      const s = this.unquote({ ...t, value: `"${t.value.slice(1, -1).replace(/"/g, '\\"')}"`, kind: 'string' });
      const cp = s.codePointAt(0);
      if (cp === undefined || [...s].length !== 1) this.fail(`malformed character constant: ${t.value}`, t.pos);
      return { type: 'number', pos: t.pos, value: cp, text: t.value, isInt: true };
    }
    const value = parseGoNumber(t.value);
    if (value === undefined) this.fail(`illegal number syntax: ${JSON.stringify(t.value)}`, t.pos);
    return { type: 'number', pos: t.pos, value: value.value, text: t.value, isInt: value.isInt };
  }

  private unquote(t: Token): string {
    if (t.kind === 'rawString') return t.value.slice(1, -1).replace(/\r/g, '');
    try {
      return unquoteGo(t.value.slice(1, -1));
    } catch {
      this.fail(`invalid syntax: ${t.value}`, t.pos);
    }
  }
}

function argText(node: ArgNode): string {
  return 'text' in node ? node.text : node.type === 'bool' ? String(node.value) : node.type;
}

/** Go's IsEmptyTree: only whitespace text (and comments) in it. */
export function isEmpty(list: readonly Node[]): boolean {
  return list.every((n) => n.type === 'text' && n.text.trim() === '');
}

/** A Go number literal: ints in any base (`0x1F`, `0o17`, `017`, `0b101`, `1_000`), floats, with a sign. */
export function parseGoNumber(text: string): { value: number; isInt: boolean } | undefined {
  const s = text.replace(/_/g, '');
  const m = /^([+-]?)(.*)$/.exec(s)!;
  const sign = m[1] === '-' ? -1 : 1;
  const body = m[2]!;
  if (/^0[xX][0-9a-fA-F]+$/.test(body)) return { value: sign * parseInt(body.slice(2), 16), isInt: true };
  if (/^0[oO][0-7]+$/.test(body)) return { value: sign * parseInt(body.slice(2), 8), isInt: true };
  if (/^0[bB][01]+$/.test(body)) return { value: sign * parseInt(body.slice(2), 2), isInt: true };
  if (/^0[0-7]+$/.test(body)) return { value: sign * parseInt(body.slice(1), 8), isInt: true };
  if (/^[0-9]+$/.test(body)) return { value: sign * Number(body), isInt: true };
  if (/^([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/.test(body)) {
    const value = sign * Number(body);
    // Go: a float constant with an integral value is still usable as an int (`{{index .L 1.0}}`).
    return { value, isInt: false };
  }
  return undefined;
}

const SIMPLE_ESCAPES: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', "'": "'", '"': '"' };

/** strconv.Unquote's escapes inside a double-quoted Go string. */
export function unquoteGo(body: string): string {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = body[++i];
    if (e === undefined) throw new Error('trailing backslash');
    if (e in SIMPLE_ESCAPES) out += SIMPLE_ESCAPES[e];
    else if (e === 'x' || e === 'u' || e === 'U') {
      const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const hex = body.slice(i + 1, i + 1 + n);
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(hex)) throw new Error('bad escape');
      out += String.fromCodePoint(parseInt(hex, 16));
      i += n;
    } else if (/[0-7]/.test(e)) {
      const oct = body.slice(i, i + 3);
      if (!/^[0-7]{3}$/.test(oct)) throw new Error('bad escape');
      out += String.fromCharCode(parseInt(oct, 8));
      i += 2;
    } else throw new Error('bad escape');
  }
  return out;
}
