/**
 * The executor of Go's text/template (text/template/exec.go): walks a parse tree with a dot and a stack of
 * variables, evaluating pipelines, fields (methods first, then map keys or struct fields), function calls
 * and the control actions, writing text and printed values to the output.
 */
import { TemplateExecError } from './errors.ts';
import { arityProblem, type FuncMap, type TemplateFunc } from './funcs.ts';
import { printValue } from './go-fmt.ts';
import { argString, lineCol, type ArgNode, type CommandNode, type Node, type PipeNode, type Tree } from './nodes.ts';
import { isTrue, kindOf, mapGet, mapKeys, methodOf, typeName } from './values.ts';

/** What a missing map key gives (Go's `missingkey=` option): `default`/`invalid`/`zero` print `<no value>`. */
export type MissingKey = 'default' | 'invalid' | 'zero' | 'error';

/** Nested `template` calls beyond this fail (Go allows 100000; a JavaScript stack does not). */
export const MAX_TEMPLATE_DEPTH = 1000;
/** A template's output beyond this fails instead of exhausting memory (a `range` over a huge number). */
export const MAX_OUTPUT_CHARS = 64 * 1024 * 1024;

const MISSING = Symbol('missing');
type Final = unknown;

class BreakSignal {}
class ContinueSignal {}

interface Variable {
  name: string;
  value: unknown;
}

/** Everything one execution shares: the templates of the set, the functions, the option, the output. */
interface Shared {
  trees: ReadonlyMap<string, Tree>;
  funcs: FuncMap;
  missingKey: MissingKey;
  out: string[];
  size: number;
}

/** Runs the template `name` of a set with `data` as dot; the rendered text. */
export function execute(trees: ReadonlyMap<string, Tree>, name: string, funcs: FuncMap, data: unknown, missingKey: MissingKey = 'default'): string {
  const tree = trees.get(name);
  if (!tree) throw new TemplateExecError(name, `no template "${name}" associated with template "${name}"`);
  const shared: Shared = { trees, funcs, missingKey, out: [], size: 0 };
  new State(shared, tree, [{ name: '$', value: data }], 0).walkList(data, tree.root);
  return shared.out.join('');
}

class State {
  private node: { pos: number; text: string } | undefined;

  constructor(
    private readonly shared: Shared,
    private readonly tree: Tree,
    private readonly vars: Variable[],
    private readonly depth: number,
  ) {}

  private fail(message: string): never {
    if (!this.node) throw new TemplateExecError(this.tree.name, message);
    const { line, col } = lineCol(this.tree.text, this.node.pos);
    throw new TemplateExecError(this.tree.name, message, { line, col, action: this.node.text });
  }

  private at(pos: number, text: string): void {
    this.node = { pos, text };
  }

  private write(s: string): void {
    this.shared.size += s.length;
    if (this.shared.size > MAX_OUTPUT_CHARS) this.fail(`output exceeds ${MAX_OUTPUT_CHARS} characters`);
    this.shared.out.push(s);
  }

  walkList(dot: unknown, list: readonly Node[]): void {
    for (const node of list) this.walk(dot, node);
  }

  private walk(dot: unknown, node: Node): void {
    switch (node.type) {
      case 'text':
        this.write(node.text);
        return;
      case 'action': {
        const value = this.evalPipeline(dot, node.pipe);
        if (node.pipe.decl.length === 0) this.print(value);
        return;
      }
      case 'if':
      case 'with': {
        const mark = this.vars.length;
        const value = this.evalPipeline(dot, node.pipe);
        if (isTrue(value)) this.walkList(node.type === 'with' ? value : dot, node.list);
        else if (node.elseList) this.walkList(dot, node.elseList);
        this.vars.length = mark;
        return;
      }
      case 'range':
        this.walkRange(dot, node);
        return;
      case 'template':
        this.walkTemplate(dot, node);
        return;
      case 'break':
        throw new BreakSignal();
      case 'continue':
        throw new ContinueSignal();
    }
  }

  private print(value: unknown): void {
    if (typeof value === 'function') this.fail(`can't print value of type func`);
    this.write(value === undefined || value === null ? '<no value>' : printValue(value));
  }

  private walkRange(dot: unknown, node: Extract<Node, { type: 'range' }>): void {
    const mark = this.vars.length;
    const value = this.evalPipeline(dot, node.pipe);
    const { decl, isAssign } = node.pipe;
    const iteration = (key: unknown, elem: unknown): boolean => {
      if (decl.length > 0) {
        if (isAssign) {
          if (decl.length > 1) {
            this.setVar(decl[0]!, key);
            this.setVar(decl[1]!, elem);
          } else this.setVar(decl[0]!, elem);
        } else if (decl.length > 1) {
          this.vars[this.vars.length - 1]!.value = elem;
          this.vars[this.vars.length - 2]!.value = key;
        } else this.vars[this.vars.length - 1]!.value = elem;
      }
      const inner = this.vars.length;
      try {
        this.walkList(elem, node.list);
      } catch (err) {
        if (err instanceof BreakSignal) return false;
        if (!(err instanceof ContinueSignal)) throw err;
      } finally {
        this.vars.length = inner;
      }
      return true;
    };
    let ran = false;
    switch (kindOf(value)) {
      case 'slice':
        for (const [i, e] of (value as unknown[]).entries()) {
          ran = true;
          if (!iteration(i, e)) break;
        }
        break;
      case 'map': {
        const m = value as Map<unknown, unknown> | Record<string, unknown>;
        for (const k of mapKeys(m)) {
          ran = true;
          if (!iteration(k, mapGet(m, k)!.value)) break;
        }
        break;
      }
      case 'int': {
        if (decl.length > 1) this.fail(`can't use ${printValue(value)} to iterate over more than one variable`);
        for (let i = 0; i < Number(value); i++) {
          ran = true;
          if (!iteration(i, i)) break;
        }
        break;
      }
      case 'invalid':
      case 'nil':
        break;
      default:
        this.at(node.pos, 'range');
        this.fail(`range can't iterate over ${printValue(value)}`);
    }
    if (!ran && node.elseList) this.walkList(dot, node.elseList);
    this.vars.length = mark;
  }

  private walkTemplate(dot: unknown, node: Extract<Node, { type: 'template' }>): void {
    this.at(node.pos, `template "${node.name}"`);
    const tree = this.shared.trees.get(node.name);
    if (!tree) this.fail(`template "${node.name}" not defined`);
    if (this.depth >= MAX_TEMPLATE_DEPTH) this.fail(`exceeded maximum template depth (${MAX_TEMPLATE_DEPTH})`);
    const newDot = node.pipe ? this.evalPipeline(dot, node.pipe) : undefined;
    new State(this.shared, tree, [{ name: '$', value: newDot }], this.depth + 1).walkList(newDot, tree.root);
  }

  private setVar(name: string, value: unknown): void {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if (this.vars[i]!.name === name) {
        this.vars[i]!.value = value;
        return;
      }
    }
    this.fail(`undefined variable: ${name}`);
  }

  private varValue(name: string): unknown {
    for (let i = this.vars.length - 1; i >= 0; i--) if (this.vars[i]!.name === name) return this.vars[i]!.value;
    this.fail(`undefined variable: ${name}`);
  }

  private evalPipeline(dot: unknown, pipe: PipeNode): unknown {
    let value: unknown = undefined;
    let final: Final = MISSING;
    for (const cmd of pipe.cmds) {
      value = this.evalCommand(dot, cmd, final);
      final = value;
    }
    for (const name of pipe.decl) {
      if (pipe.isAssign) this.setVar(name, value);
      else this.vars.push({ name, value });
    }
    return value;
  }

  private notAFunction(args: readonly ArgNode[], final: Final): void {
    if (args.length > 1 || final !== MISSING) this.fail(`can't give argument to non-function ${argString(args[0]!)}`);
  }

  private evalCommand(dot: unknown, cmd: CommandNode, final: Final): unknown {
    const first = cmd.args[0]!;
    this.at(first.pos, argString(first));
    switch (first.type) {
      case 'field':
        return this.evalFieldChain(dot, dot, first.idents, cmd.args, final);
      case 'chain': {
        if (first.node.type === 'nil') this.fail(`indirection through explicit nil in ${argString(first)}`);
        const receiver = this.evalArg(dot, first.node);
        this.at(first.pos, argString(first));
        return this.evalFieldChain(dot, receiver, first.fields, cmd.args, final);
      }
      case 'identifier':
        return this.evalFunction(dot, first.name, cmd.args, final);
      case 'pipe':
        this.notAFunction(cmd.args, final);
        return this.evalPipeline(dot, first.pipe);
      case 'variable': {
        const value = this.varValue(first.idents[0]!);
        if (first.idents.length === 1) {
          this.notAFunction(cmd.args, final);
          return value;
        }
        return this.evalFieldChain(dot, value, first.idents.slice(1), cmd.args, final);
      }
      default:
        break;
    }
    this.notAFunction(cmd.args, final);
    switch (first.type) {
      case 'bool':
      case 'number':
      case 'string':
        return first.value;
      case 'dot':
        return dot;
      case 'nil':
        this.fail('nil is not a command');
    }
  }

  private evalArg(dot: unknown, arg: ArgNode): unknown {
    this.at(arg.pos, argString(arg));
    switch (arg.type) {
      case 'dot':
        return dot;
      case 'nil':
        return null;
      case 'field':
        return this.evalFieldChain(dot, dot, arg.idents, [arg], MISSING);
      case 'variable': {
        const value = this.varValue(arg.idents[0]!);
        return arg.idents.length === 1 ? value : this.evalFieldChain(dot, value, arg.idents.slice(1), [arg], MISSING);
      }
      case 'pipe':
        return this.evalPipeline(dot, arg.pipe);
      case 'identifier':
        return this.evalFunction(dot, arg.name, [arg], MISSING);
      case 'chain': {
        if (arg.node.type === 'nil') this.fail(`indirection through explicit nil in ${argString(arg)}`);
        return this.evalFieldChain(dot, this.evalArg(dot, arg.node), arg.fields, [arg], MISSING);
      }
      case 'bool':
      case 'number':
      case 'string':
        return arg.value;
    }
  }

  private evalFieldChain(dot: unknown, receiver: unknown, idents: readonly string[], args: readonly ArgNode[], final: Final): unknown {
    let value = receiver;
    for (let i = 0; i < idents.length - 1; i++) value = this.evalField(dot, idents[i]!, [args[0]!], MISSING, value);
    return this.evalField(dot, idents[idents.length - 1]!, args, final, value);
  }

  private evalField(dot: unknown, name: string, args: readonly ArgNode[], final: Final, receiver: unknown): unknown {
    if (receiver === undefined) {
      if (this.shared.missingKey === 'error') this.fail(`nil data; no entry for key "${name}"`);
      return undefined;
    }
    const method = methodOf(receiver, name);
    if (method) return this.evalCall(dot, name, { min: 0, call: method }, args, final, false);
    const hasArgs = args.length > 1 || final !== MISSING;
    switch (kindOf(receiver)) {
      case 'map': {
        if (hasArgs) this.fail(`${name} is not a method but has arguments`);
        const entry = mapGet(receiver as Record<string, unknown>, name);
        if (entry) return entry.value;
        if (this.shared.missingKey === 'error') this.fail(`map has no entry for key "${name}"`);
        return undefined;
      }
      case 'struct': {
        if (name in (receiver as object)) {
          if (hasArgs) this.fail(`${name} has arguments but cannot be invoked as function`);
          return (receiver as Record<string, unknown>)[name];
        }
        break;
      }
      case 'nil':
        this.fail(`nil pointer evaluating ${typeName(receiver)}.${name}`);
      // eslint-disable-next-line no-fallthrough
      default:
        break;
    }
    this.fail(`can't evaluate field ${name} in type ${typeName(receiver)}`);
  }

  private evalFunction(dot: unknown, name: string, args: readonly ArgNode[], final: Final): unknown {
    const fn = this.shared.funcs[name];
    if (!fn) this.fail(`"${name}" is not a defined function`);
    if (name === 'and' || name === 'or') return this.andOr(dot, name, fn, args, final);
    return this.evalCall(dot, name, fn, args, final, true);
  }

  /** `and`/`or` evaluate their arguments one at a time and stop at the first that decides. */
  private andOr(dot: unknown, name: 'and' | 'or', fn: TemplateFunc, args: readonly ArgNode[], final: Final): unknown {
    const count = args.length - 1 + (final === MISSING ? 0 : 1);
    const problem = arityProblem(name, fn, count);
    if (problem) this.fail(problem);
    let value: unknown;
    for (const arg of args.slice(1)) {
      value = this.evalArg(dot, arg);
      if (isTrue(value) === (name === 'or')) return value;
    }
    return final === MISSING ? value : final;
  }

  private evalCall(dot: unknown, name: string, fn: TemplateFunc, args: readonly ArgNode[], final: Final, checkArity: boolean): unknown {
    const here = this.node;
    const argv = args.slice(1).map((a) => this.evalArg(dot, a));
    if (final !== MISSING) argv.push(final);
    this.node = here;
    if (checkArity) {
      const problem = arityProblem(name, fn, argv.length);
      if (problem) this.fail(problem);
    }
    try {
      return fn.call(...argv);
    } catch (err) {
      if (err instanceof TemplateExecError) throw err;
      this.fail(`error calling ${name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
