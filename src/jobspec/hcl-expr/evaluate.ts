/**
 * Evaluates an HCL2 expression tree over plain JSON values with HCL's rules (hclsyntax spec, go-cty
 * conversions). Names other than `var`, `local` and a `for` expression's iterators are Nomad's runtime
 * names (`attr.*`, `node.*`, `meta.*`, `env[...]`, `NOMAD_*`): as jobspec2 does, such a reference evaluates
 * to its own text in `${...}`, for the client to interpolate when the task runs.
 */
import type { Expr, Op, TemplatePart } from './ast.ts';
import { ExprError } from './errors.ts';
import { callFunction, type FunctionContext } from './call.ts';
import { asBool, asNumber, asString, equal, isObject, show, sortedKeys, typeOf, type Value } from './values.ts';

/** What an expression can see: variables and locals (resolved on demand), and what file functions need. */
export interface EvalScope extends FunctionContext {
  /** The value of `var.NAME` or `local.NAME`; throws ExprError (or AlreadyReported) when there is none. */
  reference(root: 'var' | 'local', name: string, at: number): Value;
  /** Other names in scope (a dynamic block's iterator), or undefined for none of that name. */
  variable?(root: string): Value | undefined;
}

/** A runtime value carried as text (`${attr.kernel.name}`): it cannot be computed with at parse time. */
const RUNTIME = /^\$\{[\s\S]*\}$/;

export class Evaluator {
  private readonly iterators: Map<string, Value>[] = [];

  constructor(
    /** The text the tree was read from: messages quote it. */
    readonly src: string,
    readonly scope: EvalScope,
  ) {}

  text(from: number, to: number): string {
    return this.src.slice(from, to).trim();
  }

  evaluate(e: Expr): Value {
    switch (e.k) {
      case 'literal':
        return e.value;
      case 'paren':
        return this.evaluate(e.inner);
      case 'template':
        return this.template(e.parts);
      case 'tuple':
        return e.items.map((i) => this.evaluate(i));
      case 'object': {
        const out: Record<string, Value> = {};
        for (const { key, value } of e.items) {
          const k = this.evaluate(key);
          const name = asString(k);
          if (name === undefined) throw new ExprError(`Invalid object key: a key must be a string, got ${show(k)}`, key.at);
          out[name] = this.evaluate(value);
        }
        return out;
      }
      case 'scope':
        return this.scopeValue(e);
      case 'op':
        return this.apply(this.evaluate(e.target), e.op, this.text(e.target.at, e.op.at));
      case 'splat': {
        const target = this.evaluate(e.target);
        const label = `${this.text(e.target.at, e.at)}[*]`;
        const items = target === null ? [] : Array.isArray(target) ? target : [target];
        return items.map((item) => e.ops.reduce((v, op) => this.apply(v, op, label), item));
      }
      case 'call':
        return callFunction(e, this);
      case 'unary': {
        const v = this.evaluate(e.operand);
        if (e.op === '-') return -this.number(v, e.operand, 'the operand of unary -');
        return !this.bool(v, e.operand, 'the operand of !');
      }
      case 'binary':
        return this.binary(e);
      case 'conditional':
        return this.conditional(e);
      case 'for':
        return this.forExpr(e);
    }
  }

  private scopeValue(e: Extract<Expr, { k: 'scope' }>): Value {
    for (let i = this.iterators.length - 1; i >= 0; i--) {
      const frame = this.iterators[i]!;
      if (frame.has(e.root)) return this.steps(frame.get(e.root), e, 0, e.root);
    }
    const bound = this.scope.variable?.(e.root);
    if (bound !== undefined) return this.steps(bound, e, 0, e.root);
    if (e.root === 'var' || e.root === 'local') {
      const first = e.steps[0];
      if (first === undefined || typeof first.step !== 'string') throw new ExprError(`Invalid reference: ${e.root} must be followed by a name (${e.root}.name)`, e.at);
      return this.steps(this.scope.reference(e.root, first.step, e.at), e, 1, `${e.root}.${first.step}`);
    }
    // Nomad's runtime names: kept as text for the client to interpolate (jobspec2's UnknownVariable).
    return `\${${this.text(e.at, e.end)}}`;
  }

  private steps(value: Value, e: Extract<Expr, { k: 'scope' }>, from: number, label: string): Value {
    let v = value;
    for (const s of e.steps.slice(from)) {
      const at = this.text(e.at, s.at);
      v = this.step(v, s.step, typeof s.step === 'string' && /^[\p{ID_Start}_]/u.test(s.step) && this.src[s.at] === '.', at || label, s.at);
    }
    return v;
  }

  apply(v: Value, op: Op, label: string): Value {
    if (op.k === 'attr') return this.step(v, op.name, true, label, op.at);
    const key = this.evaluate(op.key);
    if (typeof key !== 'string' && typeof key !== 'number') throw new ExprError(`Invalid index: ${label} cannot be indexed with ${show(key)}: a key is a number or a string`, op.at);
    return this.step(v, key, false, label, op.at);
  }

  /** One `.name` or `[key]` step into `v` (`label` is how `v` was written). */
  step(v: Value, key: string | number, isAttr: boolean, label: string, at: number): Value {
    if (v === null || v === undefined) {
      throw new ExprError(isAttr ? `Attempt to get attribute from null value: ${label} is null, so it has no attribute "${key}"` : `Attempt to index null value: ${label} is null`, at);
    }
    if (Array.isArray(v)) {
      const n = asNumber(key);
      if (n === undefined || (isAttr && typeof key === 'string')) {
        if (isAttr) throw new ExprError(`Unsupported attribute: ${label} is a list, which has no attribute "${key}"; for that attribute of each item write ${label}[*].${key}`, at);
        throw new ExprError(`Invalid index: ${label} is a list, indexed by number; got ${show(key)}`, at);
      }
      if (!Number.isInteger(n) || n < 0 || n >= v.length) throw new ExprError(`${label} has ${v.length} item(s): there is no index ${show(n)}`, at);
      return v[n];
    }
    if (isObject(v)) {
      const k = asString(key)!;
      if (!Object.hasOwn(v, k)) throw new ExprError(isAttr ? `Unsupported attribute: ${label} has no attribute "${k}"` : `Invalid index: ${label} has no key ${JSON.stringify(k)}`, at);
      return v[k];
    }
    if (typeof v === 'string' && RUNTIME.test(v)) throw new ExprError(`Invalid ${isAttr ? 'attribute' : 'index'}: ${label} is a runtime value (${v}), known only when the task runs; it cannot be ${isAttr ? `followed by .${key}` : 'indexed'} here`, at);
    throw new ExprError(isAttr ? `Unsupported attribute: ${label} is a ${typeOf(v)}, which has no attributes (asked for "${key}")` : `Invalid index: ${label} is a ${typeOf(v)}, which cannot be indexed`, at);
  }

  number(v: Value, e: Expr, what: string): number {
    const n = asNumber(v);
    if (n === undefined) throw new ExprError(`Invalid operand: ${what} must be a number, got ${show(v)}${this.runtimeHint(v)}`, e.at);
    return n;
  }

  bool(v: Value, e: Expr, what: string): boolean {
    const b = asBool(v);
    if (b === undefined) throw new ExprError(`Invalid operand: ${what} must be true or false, got ${show(v)}${this.runtimeHint(v)}`, e.at);
    return b;
  }

  private runtimeHint(v: Value): string {
    return typeof v === 'string' && RUNTIME.test(v) ? ` (a runtime value, known only when the task runs)` : '';
  }

  private binary(e: Extract<Expr, { k: 'binary' }>): Value {
    const a = this.evaluate(e.left);
    const b = this.evaluate(e.right);
    const side = (which: string): string => `the ${which} operand of ${e.op}`;
    switch (e.op) {
      case '==':
        return equal(a, b);
      case '!=':
        return !equal(a, b);
      case '&&':
        return this.bool(a, e.left, side('left')) && this.bool(b, e.right, side('right'));
      case '||':
        return this.bool(a, e.left, side('left')) || this.bool(b, e.right, side('right'));
    }
    const x = this.number(a, e.left, side('left'));
    const y = this.number(b, e.right, side('right'));
    switch (e.op) {
      case '<':
        return x < y;
      case '<=':
        return x <= y;
      case '>':
        return x > y;
      case '>=':
        return x >= y;
      case '+':
        return x + y;
      case '-':
        return x - y;
      case '*':
        return x * y;
      case '/':
        if (y === 0) throw new ExprError('Division by zero: the right operand of / is 0', e.right.at);
        return x / y;
      case '%':
        if (y === 0) throw new ExprError('Division by zero: the right operand of % is 0', e.right.at);
        return x % y;
    }
  }

  private conditional(e: Extract<Expr, { k: 'conditional' }>): Value {
    const c = this.evaluate(e.cond);
    if (c === null) throw new ExprError('Null condition: the condition of a conditional (c ? a : b) is null', e.cond.at);
    const yes = asBool(c);
    if (yes === undefined) throw new ExprError(`Incorrect condition type: the condition must be true or false, got ${show(c)}`, e.cond.at);
    const chosen = this.evaluate(yes ? e.then : e.else);
    // HCL gives both results one type: a number or bool beside a string becomes a string.
    if (chosen === null || typeof chosen === 'string' || typeof chosen === 'object') return chosen;
    let other: Value;
    try {
      other = this.evaluate(yes ? e.else : e.then);
    } catch {
      return chosen;
    }
    return typeof other === 'string' || (other !== null && typeof other !== 'object' && typeof other !== typeof chosen) ? asString(chosen) : chosen;
  }

  private forExpr(e: Extract<Expr, { k: 'for' }>): Value {
    const coll = this.evaluate(e.coll);
    const label = this.text(e.coll.at, this.src.length).split(':')[0]!.trim();
    if (coll === null) throw new ExprError(`Iteration over null value: the collection of this "for" expression (${label}) is null`, e.coll.at);
    if (typeof coll !== 'object') throw new ExprError(`Iteration over non-iterable value: the collection of this "for" expression (${label}) is ${show(coll)}; it needs a list, set, map or object`, e.coll.at);
    const entries: [Value, Value][] = Array.isArray(coll) ? coll.map((v, i) => [i, v]) : sortedKeys(coll as Record<string, unknown>).map((k) => [k, (coll as Record<string, unknown>)[k]]);
    const list: Value[] = [];
    const object: Record<string, Value> = {};
    for (const [k, v] of entries) {
      const frame = new Map<string, Value>([[e.valVar, v]]);
      if (e.keyVar !== undefined) frame.set(e.keyVar, k);
      this.iterators.push(frame);
      try {
        if (e.cond) {
          const c = this.evaluate(e.cond);
          const keep = asBool(c);
          if (keep === undefined) throw new ExprError(`Invalid "for" condition: the condition after "if" must be true or false, got ${show(c)}`, e.cond.at);
          if (!keep) continue;
        }
        if (!e.object) {
          list.push(this.evaluate(e.value));
          continue;
        }
        const keyValue = this.evaluate(e.key!);
        const key = asString(keyValue);
        if (key === undefined) throw new ExprError(`Invalid object key: a "for" expression's key must be a string, got ${show(keyValue)}`, e.key!.at);
        const value = this.evaluate(e.value);
        if (e.group) ((object[key] ??= []) as Value[]).push(value);
        else if (Object.hasOwn(object, key)) throw new ExprError(`Duplicate object key: two items produced the key "${key}" in this "for" expression; to group them, put ... after the value expression`, e.key!.at);
        else object[key] = value;
      } finally {
        this.iterators.pop();
      }
    }
    return e.object ? object : list;
  }

  /** A template's value: one interpolation alone keeps its value's type; anything else is a string. */
  template(parts: TemplatePart[]): Value {
    if (parts.length === 1 && parts[0]!.k === 'interp') {
      const only = parts[0];
      if (only.expr.k === 'scope' && this.isRuntime(only.expr.root) && only.expr.steps.length >= 0) return this.runtimeText(only);
      return this.evaluate(only.expr);
    }
    return this.render(parts);
  }

  private isRuntime(root: string): boolean {
    return root !== 'var' && root !== 'local' && !this.iterators.some((f) => f.has(root)) && this.scope.variable?.(root) === undefined;
  }

  /** A runtime reference alone in its `${ }`: the interpolation exactly as written (Nomad keeps it so). */
  private runtimeText(p: Extract<TemplatePart, { k: 'interp' }>): string {
    return p.text.replace(/^\$\{~/, '${').replace(/~\}$/, '}');
  }

  private render(parts: TemplatePart[]): string {
    let out = '';
    for (const p of parts) {
      if (p.k === 'text') out += p.text;
      else if (p.k === 'interp') {
        if (p.expr.k === 'scope' && this.isRuntime(p.expr.root)) {
          out += this.runtimeText(p);
          continue;
        }
        const v = this.evaluate(p.expr);
        const s = asString(v);
        const what = p.text.replace(/^\$\{~?/, '').replace(/~?\}$/, '').trim();
        if (v === null || v === undefined) throw new ExprError(`Invalid template interpolation value: ${what} is null, which cannot be part of a string`, p.at);
        if (s === undefined) throw new ExprError(`Invalid template interpolation value: ${what} is ${Array.isArray(v) ? 'a list' : 'an object'}, which cannot be part of a string`, p.at);
        out += s;
      } else if (p.k === 'if') {
        const c = this.evaluate(p.cond);
        const yes = asBool(c);
        if (yes === undefined) throw new ExprError(`Invalid template directive: the condition of %{if} must be true or false, got ${show(c)}`, p.cond.at);
        out += this.render(yes ? p.then : p.else);
      } else {
        const coll = this.evaluate(p.coll);
        if (coll === null || typeof coll !== 'object') throw new ExprError(`Invalid template directive: %{for} needs a list, map or object, got ${show(coll)}`, p.coll.at);
        const entries: [Value, Value][] = Array.isArray(coll) ? coll.map((v, i) => [i, v]) : sortedKeys(coll as Record<string, unknown>).map((k) => [k, (coll as Record<string, unknown>)[k]]);
        for (const [k, v] of entries) {
          const frame = new Map<string, Value>([[p.valVar, v]]);
          if (p.keyVar !== undefined) frame.set(p.keyVar, k);
          this.iterators.push(frame);
          try {
            out += this.render(p.body);
          } finally {
            this.iterators.pop();
          }
        }
      }
    }
    return out;
  }
}
