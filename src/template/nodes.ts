/**
 * The parse tree of Go's text/template (text/template/parse/node.go), as plain data: the executor walks it.
 * `pos` is the node's offset in the template text, for error messages.
 */

/** A literal or reference inside a command. */
export type ArgNode =
  | { type: 'field'; pos: number; idents: string[] }
  | { type: 'variable'; pos: number; idents: string[] }
  | { type: 'chain'; pos: number; node: ArgNode; fields: string[] }
  | { type: 'identifier'; pos: number; name: string }
  | { type: 'dot'; pos: number }
  | { type: 'nil'; pos: number }
  | { type: 'bool'; pos: number; value: boolean }
  | { type: 'number'; pos: number; value: number; text: string; isInt: boolean }
  | { type: 'string'; pos: number; value: string; text: string }
  | { type: 'pipe'; pos: number; pipe: PipeNode };

/** One command of a pipeline: its operands (the first may be a function name). */
export interface CommandNode {
  pos: number;
  args: ArgNode[];
}

/** `$x := cmd | cmd`: declarations (or an assignment with `=`) and the commands. */
export interface PipeNode {
  pos: number;
  isAssign: boolean;
  decl: string[];
  cmds: CommandNode[];
}

/** A node of a template's body. */
export type Node =
  | { type: 'text'; pos: number; text: string }
  | { type: 'action'; pos: number; pipe: PipeNode }
  | { type: 'if' | 'with'; pos: number; pipe: PipeNode; list: Node[]; elseList?: Node[] }
  | { type: 'range'; pos: number; pipe: PipeNode; list: Node[]; elseList?: Node[] }
  | { type: 'template'; pos: number; name: string; pipe?: PipeNode }
  | { type: 'break' | 'continue'; pos: number };

/** A parsed template body with its name and source (for positions in errors). */
export interface Tree {
  name: string;
  text: string;
  root: Node[];
}

/** Go's ErrorContext: `line:col` (col counts from 0) of an offset in the text. */
export function lineCol(text: string, pos: number): { line: number; col: number } {
  const before = text.slice(0, pos);
  const lastNewline = before.lastIndexOf('\n');
  return { line: 1 + (before.match(/\n/g)?.length ?? 0), col: lastNewline < 0 ? pos : pos - lastNewline - 1 };
}

/** How an argument reads in the template (for error contexts like `<.Values.x>`). */
export function argString(arg: ArgNode): string {
  switch (arg.type) {
    case 'field':
      return arg.idents.map((i) => `.${i}`).join('');
    case 'variable':
      return arg.idents.join('.');
    case 'chain':
      return `${arg.node.type === 'pipe' ? argString(arg.node) : argString(arg.node)}${arg.fields.map((f) => `.${f}`).join('')}`;
    case 'identifier':
      return arg.name;
    case 'dot':
      return '.';
    case 'nil':
      return 'nil';
    case 'bool':
      return String(arg.value);
    case 'number':
    case 'string':
      return arg.text;
    case 'pipe':
      return `(${pipeString(arg.pipe)})`;
  }
}

/** How a pipeline reads in the template. */
export function pipeString(pipe: PipeNode): string {
  const decl = pipe.decl.length > 0 ? `${pipe.decl.join(', ')} ${pipe.isAssign ? '=' : ':='} ` : '';
  return decl + pipe.cmds.map((c) => c.args.map(argString).join(' ')).join(' | ');
}
