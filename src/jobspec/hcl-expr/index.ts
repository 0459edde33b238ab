/**
 * HCL2 expressions in job files, evaluated as Nomad's jobspec2 evaluates them: strings as hcl2json hands
 * them over (literal text, `${expr}` interpolations, `%{if}` / `%{for}` directives) become values.
 */
import type { TemplatePart } from './ast.ts';
import { ExprError } from './errors.ts';
import { Evaluator, type EvalScope } from './evaluate.ts';
import { parseTemplate } from './parser.ts';
import type { Value } from './values.ts';

export { AlreadyReported, ExprError } from './errors.ts';
export type { EvalScope } from './evaluate.ts';
export { FUNCTION_NAMES } from './functions/index.ts';
export { parseExpression, parseTemplate } from './parser.ts';

/** Whether a template part (or one inside it) is more than literal text. */
export const hasExpressions = (parts: TemplatePart[]): boolean => parts.some((p) => p.k !== 'text');

/**
 * The value of a string from hcl2json: one interpolation alone keeps its value's type (`count = var.n` is a
 * number), anything else renders to a string. Throws ExprError with an offset into `text`.
 */
export function evaluateString(text: string, scope: EvalScope): Value {
  const parts = parseTemplate(text);
  if (!hasExpressions(parts)) return text;
  return new Evaluator(text, scope).template(parts);
}

/** Evaluates an already parsed template of `text`. */
export function evaluateParts(text: string, parts: TemplatePart[], scope: EvalScope): Value {
  return new Evaluator(text, scope).template(parts);
}

export { ExprError as HclExpressionError };
export { referencesIn, type NamedReference } from './references.ts';
