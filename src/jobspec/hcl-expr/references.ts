/** The `var.` and `local.` names an expression refers to (a validation condition may refer only to its own variable). */
import type { Expr, Op, TemplatePart } from './ast.ts';

export interface NamedReference {
  root: 'var' | 'local';
  name: string;
  at: number;
}

export function referencesIn(parts: TemplatePart[]): NamedReference[] {
  const out: NamedReference[] = [];
  const op = (o: Op): void => {
    if (o.k === 'index') expr(o.key);
  };
  const expr = (e: Expr | undefined): void => {
    if (!e) return;
    switch (e.k) {
      case 'scope': {
        const first = e.steps[0]?.step;
        if ((e.root === 'var' || e.root === 'local') && typeof first === 'string') out.push({ root: e.root, name: first, at: e.at });
        return;
      }
      case 'template':
        return template(e.parts);
      case 'tuple':
        return e.items.forEach(expr);
      case 'object':
        return e.items.forEach((i) => (expr(i.key), expr(i.value)));
      case 'op':
        return expr(e.target), op(e.op);
      case 'splat':
        return expr(e.target), e.ops.forEach(op);
      case 'call':
        return e.args.forEach(expr);
      case 'unary':
        return expr(e.operand);
      case 'binary':
        return expr(e.left), expr(e.right);
      case 'conditional':
        return expr(e.cond), expr(e.then), expr(e.else);
      case 'for':
        return expr(e.coll), expr(e.key), expr(e.value), expr(e.cond);
      case 'paren':
        return expr(e.inner);
      case 'literal':
        return;
    }
  };
  const template = (ps: TemplatePart[]): void => {
    for (const p of ps) {
      if (p.k === 'interp') expr(p.expr);
      else if (p.k === 'if') expr(p.cond), template(p.then), template(p.else);
      else if (p.k === 'for') expr(p.coll), template(p.body);
    }
  };
  template(parts);
  return out;
}
