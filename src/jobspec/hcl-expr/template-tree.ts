/** Turns a template's flat sequence (text, interpolations, `%{if}`…`%{endif}`, `%{for}`…`%{endfor}`) into a tree. */
import type { Expr, TemplatePart } from './ast.ts';
import { ExprError } from './errors.ts';

/** A template part before directives are matched with their ends. */
export type FlatPart =
  | Extract<TemplatePart, { k: 'text' | 'interp' }>
  | { k: 'if'; cond: Expr; at: number }
  | { k: 'for'; keyVar?: string; valVar: string; coll: Expr; at: number }
  | { k: 'else' | 'endif' | 'endfor'; at: number };

/** The tree of `flat`; an unmatched directive is an error at it (`end` when one is never closed). */
export function buildTemplate(flat: FlatPart[], end: number): TemplatePart[] {
  let i = 0;
  const body = (stop: string[]): { parts: TemplatePart[]; stoppedBy?: FlatPart } => {
    const parts: TemplatePart[] = [];
    while (i < flat.length) {
      const p = flat[i++]!;
      if (stop.includes(p.k)) return { parts, stoppedBy: p };
      if (p.k === 'text' || p.k === 'interp') parts.push(p);
      else if (p.k === 'if') {
        const yes = body(['else', 'endif']);
        if (!yes.stoppedBy) throw new ExprError('Unterminated template directive: %{if} has no %{endif}', p.at);
        const no = yes.stoppedBy.k === 'else' ? body(['endif']) : { parts: [], stoppedBy: yes.stoppedBy };
        if (!no.stoppedBy) throw new ExprError('Unterminated template directive: %{if} has no %{endif}', p.at);
        parts.push({ k: 'if', cond: p.cond, then: yes.parts, else: no.parts, at: p.at });
      } else if (p.k === 'for') {
        const inner = body(['endfor']);
        if (!inner.stoppedBy) throw new ExprError('Unterminated template directive: %{for} has no %{endfor}', p.at);
        parts.push({ k: 'for', ...(p.keyVar !== undefined && { keyVar: p.keyVar }), valVar: p.valVar, coll: p.coll, body: inner.parts, at: p.at });
      } else throw new ExprError(`Unexpected %{${p.k}}: there is no open ${p.k === 'endfor' ? '%{for}' : '%{if}'} for it`, p.at);
    }
    return { parts };
  };
  void end;
  return body([]).parts;
}
