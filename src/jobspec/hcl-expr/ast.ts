/**
 * The syntax tree of an HCL2 expression (hashicorp/hcl hclsyntax spec). Every node keeps `at`, its offset in
 * the text it was read from, so an error can say where in the job file it is.
 */

/** A static step of a traversal: `.name`, `.0`, `["key"]`, `[0]`. */
export type Step = string | number;

/** A postfix operation applied to a value (also to each element after a splat). */
export type Op = { k: 'attr'; name: string; at: number } | { k: 'index'; key: Expr; at: number };

export type Expr =
  | { k: 'literal'; value: unknown; at: number }
  | { k: 'template'; parts: TemplatePart[]; at: number }
  | { k: 'tuple'; items: Expr[]; at: number }
  | { k: 'object'; items: { key: Expr; value: Expr }[]; at: number }
  /** A name with the static steps after it (`var.ports[0]`, `attr.kernel.name`); `end` is the offset just past it. */
  | { k: 'scope'; root: string; steps: { step: Step; at: number }[]; at: number; end: number }
  | { k: 'op'; target: Expr; op: Op; at: number }
  /** `target[*].ops...` (or `.*`): `ops` apply to each element. */
  | { k: 'splat'; target: Expr; ops: Op[]; at: number }
  | { k: 'call'; name: string; args: Expr[]; expand: boolean; at: number; argText: string[] }
  | { k: 'unary'; op: '!' | '-'; operand: Expr; at: number }
  | { k: 'binary'; op: BinaryOp; left: Expr; right: Expr; at: number }
  | { k: 'conditional'; cond: Expr; then: Expr; else: Expr; at: number }
  | { k: 'for'; object: boolean; keyVar?: string; valVar: string; coll: Expr; key?: Expr; value: Expr; cond?: Expr; group: boolean; at: number }
  | { k: 'paren'; inner: Expr; at: number };

export type BinaryOp = '||' | '&&' | '==' | '!=' | '<' | '<=' | '>' | '>=' | '+' | '-' | '*' | '/' | '%';

/** A piece of a string template: literal text, an interpolation, or an `%{if}` / `%{for}` directive. */
export type TemplatePart =
  | { k: 'text'; text: string }
  /** `text` is the interpolation as written (`${ attr.x }`): a runtime reference alone in it stays exactly that. */
  | { k: 'interp'; expr: Expr; text: string; at: number }
  | { k: 'if'; cond: Expr; then: TemplatePart[]; else: TemplatePart[]; at: number }
  | { k: 'for'; keyVar?: string; valVar: string; coll: Expr; body: TemplatePart[]; at: number };
