/**
 * The pieces of HCL2 expressions allocrun evaluates in job files: references to input variables and locals
 * (`var.image`, `local.ports[0]`, `var.tags["env"]`), alone or inside string templates, and plain comparisons
 * in a variable's `validation` condition. hcl2json hands every other expression back as its source text in
 * `${...}`; those stay untouched unless they refer to `var.`/`local.`, which this module reports (there is no
 * HCL2 expression evaluator for JavaScript, and half of one would be worse than a clear refusal).
 */

/** One part of a string as hcl2json writes it: literal text, a `${...}` interpolation, or a `%{...}` directive. */
export type TemplatePart =
  | { kind: 'literal'; text: string }
  | { kind: 'interpolation' | 'directive'; expr: string; text: string };

/**
 * Splits a string into its template parts. `$${` and `%%{` are HCL's escapes for literal `${` and `%{`: they
 * stay literal text, as written (the escape is removed later, once for the whole file).
 */
export function templateParts(s: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let literal = '';
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if ((c === '$' || c === '%') && s[i + 1] === c && s[i + 2] === '{') {
      literal += s.slice(i, i + 3);
      i += 3;
    } else if ((c === '$' || c === '%') && s[i + 1] === '{') {
      const end = closingBrace(s, i + 2);
      if (end < 0) {
        literal += s.slice(i);
        break;
      }
      if (literal) parts.push({ kind: 'literal', text: literal });
      literal = '';
      parts.push({ kind: c === '$' ? 'interpolation' : 'directive', expr: s.slice(i + 2, end).trim(), text: s.slice(i, end + 1) });
      i = end + 1;
    } else {
      literal += c;
      i++;
    }
  }
  if (literal) parts.push({ kind: 'literal', text: literal });
  return parts;
}

/** The index of the `}` closing a template that opened before `from`, past nested braces and quoted strings; -1 if none. */
function closingBrace(s: string, from: number): number {
  let depth = 1;
  let k = from;
  while (k < s.length) {
    const c = s[k]!;
    if (c === '"') {
      k = endOfString(s, k);
      continue;
    }
    if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return k;
    k++;
  }
  return -1;
}

/** The index just past the quoted string starting at `start` (which may hold templates of its own). */
function endOfString(s: string, start: number): number {
  let k = start + 1;
  while (k < s.length) {
    const c = s[k]!;
    if (c === '\\') k += 2;
    else if (c === '"') return k + 1;
    else if ((c === '$' || c === '%') && s[k + 1] === '{') {
      const end = closingBrace(s, k + 2);
      if (end < 0) return s.length;
      k = end + 1;
    } else k++;
  }
  return s.length;
}

/** A reference to an input variable or a local, with the attribute and index steps that follow it. */
export interface Reference {
  root: 'var' | 'local';
  name: string;
  steps: (string | number)[];
}

const IDENT = /^[\p{ID_Start}_][\p{ID_Continue}_-]*/u;

/** Reads `var.x`, `local.y.z`, `var.list[0]`, `var.map["key"]`; undefined when the text is anything more. */
export function parseReference(expr: string): Reference | undefined {
  const head = /^(var|local)\s*\.\s*/.exec(expr);
  if (!head) return undefined;
  let rest = expr.slice(head[0].length);
  const name = IDENT.exec(rest)?.[0];
  if (!name) return undefined;
  rest = rest.slice(name.length);
  const steps: (string | number)[] = [];
  while (rest.trim() !== '') {
    const attr = /^\s*\.\s*([\p{ID_Start}_][\p{ID_Continue}_-]*|\d+)/u.exec(rest);
    const index = /^\s*\[\s*(\d+|"(?:[^"\\$%]|\\.)*")\s*\]/.exec(rest);
    const m = attr ?? index;
    if (!m) return undefined;
    const key = m[1]!;
    steps.push(/^\d+$/.test(key) ? Number(key) : key.startsWith('"') ? (JSON.parse(key) as string) : key);
    rest = rest.slice(m[0].length);
  }
  return { root: head[1] as 'var' | 'local', name, steps };
}

/** How a reference is written back in messages: `var.ports[0]`. */
export function referenceText(ref: Reference): string {
  return `${ref.root}.${ref.name}${ref.steps.map((s) => (typeof s === 'number' ? `[${s}]` : /^[\p{ID_Start}_][\p{ID_Continue}_-]*$/u.test(s) ? `.${s}` : `[${JSON.stringify(s)}]`)).join('')}`;
}

/**
 * Whether an expression refers to an input variable or a local anywhere (`upper(var.x)`, `var.n + 1`); plain
 * quoted strings inside it do not count. Nomad's runtime references (`NOMAD_PORT_http`, `attr.kernel.name`,
 * `meta.local`) do not either: only `var` and `local` as the root of a traversal.
 */
export function mentionsVariables(expr: string): boolean {
  const withoutStrings = expr.replace(/"(?:[^"\\$%]|\\.|[$%](?!\{))*"/g, '""');
  return /(?<![\p{ID_Continue}_.-])(var|local)\s*[.[]/u.test(withoutStrings);
}

/** Follows a reference's steps into a value; a step that is not there is an error naming it. */
export function followSteps(value: unknown, ref: Reference): { ok: true; value: unknown } | { ok: false; error: string } {
  let v = value;
  let at = `${ref.root}.${ref.name}`;
  for (const step of ref.steps) {
    if (Array.isArray(v) && typeof step === 'number') {
      if (step >= v.length) return { ok: false, error: `${at} has ${v.length} item(s): there is no index ${step}` };
      v = v[step];
    } else if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
      const key = String(step);
      if (!Object.hasOwn(v, key)) return { ok: false, error: `${at} has no attribute or key ${JSON.stringify(key)}` };
      v = (v as Record<string, unknown>)[key];
    } else {
      return { ok: false, error: `${at} is ${v === null ? 'null' : Array.isArray(v) ? 'a list' : `a ${typeof v}`}: it has no ${typeof step === 'number' ? `index ${step}` : `attribute ${JSON.stringify(step)}`}` };
    }
    at += typeof step === 'number' ? `[${step}]` : `.${step}`;
  }
  return { ok: true, value: v };
}

/** One side of a validation condition: a reference or a literal. */
type Operand = { ref: Reference } | { literal: unknown };

const OPERATORS = ['==', '!=', '<=', '>=', '<', '>'] as const;
type Operator = (typeof OPERATORS)[number];

/** A validation condition allocrun can evaluate: `var.x`, or `A op B` with references and literals. */
export type Condition = { single: Operand } | { left: Operand; op: Operator; right: Operand };

/** Reads a condition as hcl2json writes it (`${var.port > 0}`), or undefined when it is more than a plain comparison. */
export function parseCondition(text: unknown): Condition | undefined {
  if (typeof text === 'boolean') return { single: { literal: text } };
  if (typeof text !== 'string') return undefined;
  const parts = templateParts(text);
  if (parts.length !== 1 || parts[0]!.kind !== 'interpolation') return undefined;
  const expr = parts[0].expr;
  const at = operatorAt(expr);
  if (!at) {
    const single = operand(expr);
    return single ? { single } : undefined;
  }
  const left = operand(expr.slice(0, at.index));
  const right = operand(expr.slice(at.index + at.op.length));
  return left && right ? { left, op: at.op, right } : undefined;
}

/** The first comparison operator outside strings and brackets. */
function operatorAt(expr: string): { index: number; op: Operator } | undefined {
  let depth = 0;
  for (let k = 0; k < expr.length; k++) {
    const c = expr[k]!;
    if (c === '"') {
      k = endOfString(expr, k) - 1;
      continue;
    }
    if (c === '[' || c === '(' || c === '{') depth++;
    else if (c === ']' || c === ')' || c === '}') depth--;
    else if (depth === 0) {
      const op = OPERATORS.find((o) => expr.startsWith(o, k));
      if (op) return { index: k, op };
    }
  }
  return undefined;
}

function operand(text: string): Operand | undefined {
  const t = text.trim();
  if (t === 'true' || t === 'false') return { literal: t === 'true' };
  if (t === 'null') return { literal: null };
  if (/^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(t)) return { literal: Number(t) };
  if (/^"(?:[^"\\$%]|\\.|[$%](?!\{))*"$/.test(t)) {
    try {
      return { literal: JSON.parse(t) as string };
    } catch {
      return undefined;
    }
  }
  const ref = parseReference(t);
  return ref ? { ref } : undefined;
}

/** The references a condition makes. */
export function conditionReferences(c: Condition): Reference[] {
  const sides = 'single' in c ? [c.single] : [c.left, c.right];
  return sides.flatMap((s) => ('ref' in s ? [s.ref] : []));
}

/** Evaluates a condition, references resolved by `resolve`; an error when its values cannot be compared. */
export function evaluateCondition(c: Condition, resolve: (ref: Reference) => unknown): { ok: true; value: boolean } | { ok: false; error: string } {
  const valueOf = (o: Operand): unknown => ('ref' in o ? resolve(o.ref) : o.literal);
  if ('single' in c) {
    const v = valueOf(c.single);
    if (typeof v === 'boolean') return { ok: true, value: v };
    if (v === 'true' || v === 'false') return { ok: true, value: v === 'true' };
    return { ok: false, error: `the condition must be true or false, got ${JSON.stringify(v)}` };
  }
  const a = valueOf(c.left);
  const b = valueOf(c.right);
  if (c.op === '==' || c.op === '!=') {
    const same = JSON.stringify(a) === JSON.stringify(b);
    return { ok: true, value: c.op === '==' ? same : !same };
  }
  const x = toNumber(a);
  const y = toNumber(b);
  if (x === undefined || y === undefined) return { ok: false, error: `"${c.op}" compares numbers, got ${JSON.stringify(x === undefined ? a : b)}` };
  const value = c.op === '<' ? x < y : c.op === '<=' ? x <= y : c.op === '>' ? x > y : x >= y;
  return { ok: true, value };
}

function toNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(v.trim())) return Number(v);
  return undefined;
}
