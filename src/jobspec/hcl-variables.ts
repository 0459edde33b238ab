/**
 * HCL2 input variables and locals in job files, as Nomad's jobspec2 reads them: `variable "x" { type, default,
 * description, validation }` (and the older `variables { x = ... }`), `locals { ... }`, and the values a user
 * passes. A variable's value is the last of: its default, `NOMAD_VAR_<name>` in the environment, each
 * `-var-file` in order, each `-var name=value` in order (Nomad's order in jobspec2's
 * collectInputVariableValues). Values convert to the declared type. Then every expression of the file is
 * evaluated (hcl-expr/: operators, conditionals, for-expressions, Nomad's functions), with `var.` and `local.`
 * in scope: a field that is one expression takes its value with its type (`count = var.n` is a number), a
 * string template renders. Nomad's runtime names (`${NOMAD_PORT_http}`, `${attr.kernel.name}`) stay as text.
 */
import { parseHclSource } from './hcl-source.ts';
import { scanHcl } from './hcl-locator.ts';
import { parseJsonSource } from './json-source.ts';
import type { ParseLimits } from './limits.ts';
import { isPlainObject as isObject } from './normalize.ts';
import type { LineIndex } from './positions.ts';
import { SpecError, formatPath, isSpecError, type PathSegment, type SpecProblem } from './spec-error.ts';
import { mentionsVariables, templateParts } from './hcl-references.ts';
import { expandDynamic, mergeBlocks, type DynamicHost, type ExpandedBlocks } from './hcl-dynamic.ts';
import { AlreadyReported, ExprError, evaluateParts, hasExpressions, parseTemplate, referencesIn, type EvalScope } from './hcl-expr/index.ts';
import { convertToType, describe, parseTypeConstraint, TypeSyntaxError, typeName, type HclType } from './hcl-type-constraint.ts';

/** The values a user passes for a job file's variables. */
export interface VariableInputs {
  /** `-var name=value` flags, in the order given (a later one wins). */
  args?: readonly string[];
  /** `-var-file` files (HCL, or JSON when the name ends in .json or the text starts with `{`), in order. */
  files?: readonly { file: string; text: string }[];
  /** The environment: `NOMAD_VAR_<name>` sets a declared variable, others are ignored (as in Nomad). */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Whether a value for an undeclared variable (a `-var`, or a name in a var file) is an error, as Nomad's
   * `-hcl2-strict` (default true) makes it; when false it is ignored, as Nomad's `/v1/jobs/parse` does.
   */
  strict?: boolean;
}

/** The job file the values go into: its text and how to find a path in it. */
export interface VariableSource {
  file?: string;
  /** The job file's directory, for file(), fileset() and the like; absent for a job given as text. */
  baseDir?: string;
  text: string;
  lines: LineIndex;
  locate: (path: readonly PathSegment[]) => number | undefined;
}

/** The keys of a job file that declare variables and locals rather than the job. */
const DECLARATION_KEYS = new Set(['variable', 'variables', 'locals']);

/** Nomad's prefix for variables set in the environment. */
export const VAR_ENV_PREFIX = 'NOMAD_VAR_';

/** Whether the inputs pass any value (flags or files): the environment alone does not count. */
export function hasVariableValues(inputs: VariableInputs | undefined): boolean {
  return (inputs?.args?.length ?? 0) > 0 || (inputs?.files?.length ?? 0) > 0;
}

interface Declared {
  name: string;
  type?: HclType;
  /** Whether a value from a flag or the environment is read as an expression (lists, maps, bools) rather than a string. */
  parsesExpressions: boolean;
  value?: { value: unknown; from: string; where: Where };
  validations: { condition: unknown; message: unknown; path: PathSegment[] }[];
  path: PathSegment[];
}

/** Where a problem is: in the job file at a path (optionally the text searched for from there), or at a place of its own. */
type Where = { path: PathSegment[]; needle?: string; within?: { text: string; at: number } } | { file: string; line: number; column: number; path?: string };

/** A value that failed to resolve (its problem is already reported). */
const FAILED = Symbol('failed');

/**
 * Evaluates the variables and locals of a job file's raw value (hcl2json's shape, `$${` escapes still in
 * place) with the user's inputs: returns the value without its declarations and with every reference
 * replaced; throws a SpecError listing every problem.
 */
export async function resolveVariables(raw: unknown, inputs: VariableInputs, source: VariableSource, limits: ParseLimits): Promise<unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return raw;
  const r = new Resolver(raw as Record<string, unknown>, source);
  r.declare();
  await r.collectEnv(inputs.env ?? {}, limits);
  for (const f of inputs.files ?? []) await r.collectFile(f, inputs.strict ?? true, limits);
  await r.collectArgs(inputs.args ?? [], inputs.strict ?? true, limits);
  r.checkValues();
  r.evaluateLocals();
  const job = r.job();
  if (r.problems.length > 0) throw new SpecError(r.problems);
  return job;
}

class Resolver {
  readonly problems: SpecProblem[] = [];
  private readonly vars = new Map<string, Declared>();
  private readonly locals = new Map<string, { raw: unknown; path: PathSegment[] }>();
  private readonly localValues = new Map<string, unknown>();
  private readonly evaluating: string[] = [];
  /** The iterators of the dynamic blocks being expanded, innermost last. */
  private readonly iterators: Map<string, unknown>[] = [];
  /** Variables whose default or given value was refused (already reported): not also "unset". */
  private readonly invalid = new Set<string>();

  constructor(
    private readonly raw: Record<string, unknown>,
    private readonly source: VariableSource,
  ) {}

  report(where: Where, message: string): void {
    if ('file' in where) {
      this.problems.push({ path: where.path ?? '', message, file: where.file, line: where.line, column: where.column });
      return;
    }
    const start = this.source.locate(where.path) ?? 0;
    let offset = start;
    if (where.needle) {
      const found = this.source.text.indexOf(where.needle, start);
      offset = found >= 0 ? found : start;
    } else if (where.within) offset = placeIn(this.source.text, start, where.within);
    this.problems.push({ path: displayPath(this.raw, where.path), message, ...(this.source.file !== undefined && { file: this.source.file }), ...this.source.lines.at(offset) });
  }

  /** Reads `variable` and `variables` blocks and `locals`. */
  declare(): void {
    const blocks = this.raw['variable'];
    if (blocks !== undefined) {
      if (!isObject(blocks)) this.report({ path: ['variable'] }, 'a variable block needs a name: variable "name" { ... }');
      else for (const [name, bodies] of Object.entries(blocks)) this.declareBlock(name, bodies);
    }
    for (const [i, body] of bodiesOf(this.raw['variables']).entries()) {
      for (const [name, value] of Object.entries(body)) {
        const path = ['variables', i, name];
        if (this.duplicate(name, path)) continue;
        this.vars.set(name, { name, path, validations: [], ...inferredType(value), ...this.defaultOf(name, value, undefined, path) });
      }
    }
    for (const [i, body] of bodiesOf(this.raw['locals']).entries()) {
      for (const [name, value] of Object.entries(body)) {
        const path = ['locals', i, name];
        if (this.locals.has(name)) this.report({ path }, `Duplicate value in locals: local "${name}" is defined more than once`);
        else this.locals.set(name, { raw: value, path });
      }
    }
  }

  private duplicate(name: string, path: PathSegment[]): boolean {
    if (this.vars.has(name)) {
      this.report({ path }, `Duplicate variable: variable "${name}" is declared more than once`);
      return true;
    }
    if (!/^[\p{ID_Start}_][\p{ID_Continue}_-]*$/u.test(name)) {
      this.report({ path }, `Invalid variable name ${JSON.stringify(name)}: a name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes`);
      return true;
    }
    return false;
  }

  private declareBlock(name: string, bodies: unknown): void {
    const list = Array.isArray(bodies) ? bodies : [bodies];
    for (const [i, body] of list.entries()) {
      const path = ['variable', name, i];
      if (this.duplicate(name, path)) continue;
      if (!isObject(body)) {
        this.report({ path }, 'expected a variable block: variable "name" { type = ..., default = ... }');
        continue;
      }
      let type: HclType | undefined;
      for (const key of Object.keys(body)) {
        if (!['type', 'default', 'description', 'validation', 'sensitive'].includes(key)) {
          this.report({ path: [...path, key] }, `Unsupported argument "${key}" in variable "${name}": a variable takes type, default, description, sensitive and validation`);
        }
      }
      if (body['type'] !== undefined) {
        try {
          type = typeof body['type'] === 'string' ? parseTypeConstraint(body['type']) : undefined;
          if (!type) throw new TypeSyntaxError(`expected a type such as string or list(string), got ${describe(body['type'])}`);
        } catch (err) {
          if (!(err instanceof TypeSyntaxError)) throw err;
          this.report({ path: [...path, 'type'] }, `Invalid type of variable "${name}": ${err.message}`);
          this.invalid.add(name);
        }
      }
      const validations = bodiesOf(body['validation']).map((v, k) => ({ condition: v['condition'], message: v['error_message'], path: [...path, 'validation', k] }));
      const declared: Declared = { name, path, validations, parsesExpressions: type ? !['string', 'number'].includes(type.kind) : false, ...(type && { type }) };
      if (Object.hasOwn(body, 'default')) {
        Object.assign(declared, this.defaultOf(name, body['default'], type, [...path, 'default']));
        // Without a type, Nomad takes the default's: a flag's "3" is the number 3 when the default is a number.
        if (!type) Object.assign(declared, inferredType(body['default']));
      }
      this.vars.set(name, declared);
    }
  }

  private defaultOf(name: string, value: unknown, type: HclType | undefined, path: PathSegment[]): Pick<Declared, 'value'> {
    const where = { path };
    const mention = findMention(value);
    // Nomad reads a default without an evaluation context: no variables, no functions, no operators.
    const expression = mention ?? findInterpolation(value);
    if (expression !== undefined) {
      const why = mention !== undefined ? 'it cannot refer to var. or local.' : 'functions, operators and references are not evaluated there';
      // A bare expression has no `${` in the source (hcl2json adds it): look for what is inside.
      const needle = mention ?? expression.replace(/^[$%]\{/, '').replace(/\}$/, '');
      this.report({ path, needle }, `a variable's default must be a literal value; ${why} (${expression})`);
      this.invalid.add(name);
      return {};
    }
    if (!type) return { value: { value, from: 'its default', where } };
    const c = convertToType(value, type);
    if (!c.ok) {
      this.report(where, `Invalid default value for variable: this default value is not compatible with the variable's type constraint ${typeName(type)}: ${c.error}`);
      this.invalid.add(name);
      return {};
    }
    return { value: { value: c.value, from: 'its default', where } };
  }

  /** `NOMAD_VAR_<name>` for declared variables; the rest of the environment is not the job's business. */
  async collectEnv(env: Readonly<Record<string, string | undefined>>, limits: ParseLimits): Promise<void> {
    for (const [key, text] of Object.entries(env)) {
      if (!key.startsWith(VAR_ENV_PREFIX) || text === undefined) continue;
      const v = this.vars.get(key.slice(VAR_ENV_PREFIX.length));
      if (v) await this.assign(v, text, `<value for var.${v.name} from env>`, `from ${key}`, undefined, limits);
    }
  }

  /** A var file: `name = value` lines for declared variables. */
  async collectFile(input: { file: string; text: string }, strict: boolean, limits: ParseLimits): Promise<void> {
    const json = input.file.toLowerCase().endsWith('.json') || input.text.trimStart().startsWith('{');
    let parsed;
    try {
      parsed = json ? parseJsonSource(input.text, input.file, limits.maxDepth) : await parseHclSource(input.text, input.file, limits, { keepEscapes: true });
    } catch (err) {
      if (!isSpecError(err)) throw err;
      this.problems.push(...err.problems.map((p) => ({ ...p, file: p.file ?? input.file })));
      return;
    }
    const at = (path: PathSegment[]): { file: string; line: number; column: number } => ({ file: input.file, ...parsed.lines.at(parsed.locate(path) ?? 0) });
    if (!json) {
      const blocks = scanHcl(input.text).filter((it) => it.kind === 'block');
      for (const b of blocks) {
        const label = b.labels[0]?.value;
        const message =
          b.type === 'variable' && label !== undefined
            ? `Variable declaration in a .var file: a var file assigns values to variables declared in the job file; to set "${label}" here, write ${label} = <value>`
            : `Unexpected "${b.type}" block: a var file holds only name = value lines`;
        this.problems.push({ path: '', message, file: input.file, ...parsed.lines.at(b.offset) });
      }
      if (blocks.length > 0) return;
    }
    if (!isObject(parsed.value)) {
      this.problems.push({ path: '', message: 'a var file holds name = value lines (a JSON var file: one object)', ...at([]) });
      return;
    }
    for (const [name, value] of Object.entries(parsed.value)) {
      const v = this.vars.get(name);
      if (!v) {
        if (strict) this.problems.push({ path: name, message: `Undefined variable: a "${name}" variable was set but was not found in known variables; to declare variable "${name}", place a variable "${name}" { ... } block in your job file`, ...at([name]) });
        continue;
      }
      const mention = findInterpolation(value);
      if (mention !== undefined) {
        this.problems.push({ path: name, message: `a var file holds literal values, not expressions: ${mention} (write $\${ for a literal \${)`, ...at([name]) });
        continue;
      }
      await this.assign(v, value, undefined, `from ${input.file}`, { ...at([name]), path: name }, limits);
    }
  }

  /** `-var name=value` flags: the text is a string for string and number variables, an HCL expression otherwise (as in Nomad). */
  async collectArgs(args: readonly string[], strict: boolean, limits: ParseLimits): Promise<void> {
    for (const arg of args) {
      const eq = arg.indexOf('=');
      if (eq <= 0) {
        this.report({ path: [] }, `-var ${JSON.stringify(arg)}: expected -var NAME=VALUE`);
        continue;
      }
      const name = arg.slice(0, eq);
      const v = this.vars.get(name);
      if (!v) {
        if (strict) this.report({ path: [] }, `Undefined -var variable: a "${name}" variable was passed in the command line but was not found in known variables; to declare variable "${name}", place a variable "${name}" { ... } block in your job file`);
        continue;
      }
      const fake = `<value for var.${name} from arguments>`;
      await this.assign(v, arg.slice(eq + 1), fake, `from -var ${arg}`, undefined, limits);
    }
  }

  /**
   * Records a value for `v`, converted to its type. A flag's or the environment's text (`fake` names where it
   * came from, as Nomad's diagnostics do) is an expression for variables that are not strings or numbers.
   */
  private async assign(v: Declared, value: unknown, fake: string | undefined, from: string, where: Where | undefined, limits: ParseLimits): Promise<void> {
    const place: Where = where ?? { file: fake!, line: 1, column: 1 };
    let val = value;
    if (fake !== undefined && typeof value === 'string' && v.parsesExpressions) {
      val = await this.parseExpression(value, fake, limits);
      if (val === FAILED) {
        this.invalid.add(v.name);
        return;
      }
    }
    if (v.type) {
      const c = convertToType(val, v.type);
      if (!c.ok) {
        this.report(place, `Invalid value for variable: the value for ${v.name} is not compatible with the variable's type constraint ${typeName(v.type)}: ${c.error}`);
        this.invalid.add(v.name);
        return;
      }
      val = c.value;
    }
    v.value = { value: val, from, where: place };
  }

  /** A flag's or the environment's text read as an HCL literal (`["a", "b"]`, `{ a = 1 }`, `true`). */
  private async parseExpression(text: string, fake: string, limits: ParseLimits): Promise<unknown> {
    try {
      const parsed = await parseHclSource(`value = ${text}\n`, fake, limits, { keepEscapes: true });
      const value = (parsed.value as Record<string, unknown> | undefined)?.['value'];
      const mention = findInterpolation(value);
      if (mention === undefined && value !== undefined) return value;
      this.problems.push({ path: '', message: `Invalid value ${JSON.stringify(text)}: a value passed for a variable is a literal (a string, number, bool, list or map), not an expression`, file: fake, line: 1, column: 1 });
    } catch (err) {
      if (!isSpecError(err)) throw err;
      this.problems.push({ path: '', message: `Invalid value ${JSON.stringify(text)}: ${err.problems.map((p) => p.message).join('; ')}`, file: fake, line: 1, column: 1 });
    }
    return FAILED;
  }

  /** Every variable has a value, and each value passes its validations. */
  checkValues(): void {
    for (const v of this.vars.values()) {
      if (!v.value) {
        if (!this.invalid.has(v.name)) this.report({ path: v.path }, `Unset variable "${v.name}": a used variable must be set or have a default value (-var ${v.name}=..., a -var-file, or ${VAR_ENV_PREFIX}${v.name})`);
        continue;
      }
      for (const check of v.validations) this.validate(v, check);
    }
  }

  private validate(v: Declared, check: Declared['validations'][number]): void {
    const message = check.message;
    if (typeof message !== 'string' || !/^[^\p{Ll}][\s\S]*[.?!]$/u.test(message.trim())) {
      this.report({ path: [...check.path, 'error_message'] }, 'Invalid validation error message: it must be at least one full sentence, starting with an uppercase letter and ending with a period or question mark');
      return;
    }
    const where = { path: [...check.path, 'condition'] };
    const text = typeof check.condition === 'string' ? check.condition : JSON.stringify(check.condition);
    let result: unknown;
    try {
      const parts = parseTemplate(text);
      const refs = referencesIn(parts);
      if (refs.length === 0 || refs.some((r) => r.root !== 'var' || r.name !== v.name)) {
        this.report(where, `Invalid variable validation condition: the condition for variable "${v.name}" must refer to var.${v.name}, and only to it`);
        return;
      }
      result = evaluateParts(text, parts, { reference: () => v.value!.value });
    } catch (err) {
      if (!(err instanceof ExprError)) throw err;
      this.report({ ...where, within: { text, at: err.at } }, `Invalid variable validation result: ${err.message}`);
      return;
    }
    if (typeof result !== 'boolean' && result !== 'true' && result !== 'false') {
      this.report(where, `Invalid variable validation result: the condition must be true or false, got ${describe(result)}`);
      return;
    }
    if (result === false || result === 'false') {
      const rule = this.source.lines.at(this.source.locate(check.path) ?? 0).line;
      const ruleAt = `line ${rule}${this.source.file !== undefined ? ` of ${this.source.file}` : ''}`;
      this.report(v.value!.where, `Invalid value for variable "${v.name}" (${v.value!.from}): ${message.trim()} (checked by the validation rule at ${ruleAt})`);
    }
  }

  /** Evaluates every local (Nomad evaluates them all, used or not), so a cycle or a bad one is reported. */
  evaluateLocals(): void {
    for (const name of this.locals.keys()) this.local(name, undefined);
  }

  private local(name: string, from: { path: PathSegment[]; needle: string } | undefined): unknown {
    if (this.localValues.has(name)) return this.localValues.get(name);
    const def = this.locals.get(name);
    if (!def) {
      if (from) this.report(from, `there is no local named "${name}": define it in a locals { ${name} = ... } block`);
      return FAILED;
    }
    if (this.evaluating.includes(name)) {
      const cycle = [...this.evaluating.slice(this.evaluating.indexOf(name)), name].map((n) => `local.${n}`).join(' → ');
      this.report({ path: this.locals.get(this.evaluating[this.evaluating.indexOf(name)]!)!.path }, `locals refer to each other in a cycle: ${cycle}`);
      this.localValues.set(name, FAILED);
      return FAILED;
    }
    this.evaluating.push(name);
    const value = this.substitute(def.raw, def.path);
    this.evaluating.pop();
    if (!this.localValues.has(name)) this.localValues.set(name, value);
    return this.localValues.get(name);
  }

  /** The file's value without its declarations, every reference replaced. */
  job(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(this.raw)) {
      if (DECLARATION_KEYS.has(key)) continue;
      out[key] = this.substitute(value, [key]);
    }
    return out;
  }

  private substitute(value: unknown, path: PathSegment[]): unknown {
    if (typeof value === 'string') return this.template(value, path);
    if (Array.isArray(value)) return value.map((v, i) => this.substitute(v, [...path, i]));
    if (!isObject(value)) return value;
    const out: [string, unknown][] = [];
    let expanded: ExpandedBlocks | undefined;
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'dynamic' && isObject(inner) && path.length > 0) {
        expanded = expandDynamic(inner, path, this.dynamicHost());
        continue;
      }
      const k = key.includes('{') ? this.template(key, path) : key;
      out.push([typeof k === 'string' ? k : key, this.substitute(inner, [...path, key])]);
      if (typeof k !== 'string' && k !== FAILED) this.report({ path: [...path, key] }, `a key must be a string; ${key} is ${describe(k)}`);
    }
    const body = Object.fromEntries(out);
    if (expanded) mergeBlocks(body, expanded);
    return body;
  }

  /** How dynamic blocks are expanded here: content evaluated like any value, with the iterator in scope. */
  private dynamicHost(): DynamicHost {
    return {
      evaluate: (value, path) => this.substitute(value, path),
      withIterator: (name, binding, fn) => {
        this.iterators.push(new Map([[name, binding]]));
        try {
          return fn();
        } finally {
          this.iterators.pop();
        }
      },
      report: (path, message) => this.report({ path }, message),
      failed: FAILED,
    };
  }

  /**
   * A string as hcl2json gives it, evaluated as HCL evaluates a template: a lone `${expr}` takes the value with
   * its type, anything else renders to a string; Nomad's runtime names stay as their `${...}` text.
   */
  private template(s: string, path: PathSegment[]): unknown {
    if (!s.includes('{')) return s; // most strings hold no template at all
    let parts;
    try {
      parts = parseTemplate(s);
    } catch (err) {
      if (!(err instanceof ExprError)) throw err;
      // hcl2json accepted this text; what it holds that is not about variables stays for the runtime, as before.
      if (!mentionsVariables(s)) return s;
      this.report({ path, within: { text: s, at: err.at } }, err.message);
      return FAILED;
    }
    if (!hasExpressions(parts)) return s;
    try {
      return evaluateParts(s, parts, this.scopeFor(path));
    } catch (err) {
      if (err instanceof AlreadyReported) return FAILED;
      if (!(err instanceof ExprError)) throw err;
      this.report({ path, within: { text: s, at: err.at } }, err.message);
      return FAILED;
    }
  }

  /** What an expression at `path` sees: variables, locals (evaluated on first use) and the job file's directory. */
  private scopeFor(path: PathSegment[]): EvalScope {
    return {
      ...(this.source.baseDir !== undefined && { baseDir: this.source.baseDir }),
      variable: (root) => this.iterators.findLast((f) => f.has(root))?.get(root),
      reference: (root, name, at) => {
        let value: unknown;
        if (root === 'local') {
          if (!this.locals.has(name)) throw new ExprError(`there is no local named "${name}": define it in a locals { ${name} = ... } block`, at);
          value = this.local(name, { path, needle: `local.${name}` });
        } else {
          const v = this.vars.get(name);
          if (!v) throw new ExprError(`there is no variable named "${name}": declare it with a variable "${name}" { ... } block`, at);
          value = v.value ? v.value.value : FAILED;
        }
        if (value === FAILED) throw new AlreadyReported();
        return value;
      },
    };
  }
}

/**
 * The type a default gives an untyped variable: its own for a string, number or bool; for a list or a map none
 * to convert to, but a flag's text is then read as an expression (Nomad's default type would be a tuple or
 * object of exactly the default's shape, which no other value fits).
 */
function inferredType(value: unknown): Pick<Declared, 'type' | 'parsesExpressions'> {
  if (typeof value === 'string' || typeof value === 'number') return { type: { kind: typeof value as 'string' | 'number' }, parsesExpressions: false };
  if (typeof value === 'boolean') return { type: { kind: 'bool' }, parsesExpressions: true };
  return { parsesExpressions: value !== null && value !== undefined };
}

/** A block's bodies as hcl2json writes them (a list of bodies), or one body as JSON/YAML may write it. */
function bodiesOf(v: unknown): Record<string, unknown>[] {
  if (isObject(v)) return [v];
  return Array.isArray(v) ? v.filter(isObject) : [];
}

/** The first `${...}` or `%{...}` in a value (its strings and keys) that `wanted` picks, as written. */
function findTemplate(value: unknown, wanted: (expr: string) => boolean): string | undefined {
  if (typeof value === 'string') return templateParts(value).find((p) => p.kind !== 'literal' && wanted(p.expr))?.text;
  const entries = Array.isArray(value) ? value.map((v) => ['', v] as const) : isObject(value) ? Object.entries(value) : [];
  for (const [k, v] of entries) {
    const found = findTemplate(k, wanted) ?? findTemplate(v, wanted);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The first `${...}` in a value that refers to a variable or a local. */
const findMention = (value: unknown): string | undefined => findTemplate(value, mentionsVariables);

/** The first `${...}` or `%{...}` in a value. */
const findInterpolation = (value: unknown): string | undefined => findTemplate(value, () => true);

/** The path as users read it: block bodies hcl2json wraps in one-item lists lose their `[0]`. */
function displayPath(root: unknown, path: readonly PathSegment[]): string {
  const out: PathSegment[] = [];
  let v: unknown = root;
  for (const seg of path) {
    if (typeof seg === 'number' && Array.isArray(v) && v.length === 1 && isObject(v[0])) {
      v = v[0];
      continue;
    }
    out.push(seg);
    v = Array.isArray(v) ? v[seg as number] : isObject(v) ? v[seg as string] : undefined;
  }
  return formatPath(out);
}

/**
 * Where an offset of hcl2json's string is in the source: the text from there (expressions inside `${ }` are
 * kept as written) searched for from the attribute, shortened until found; the attribute itself otherwise.
 */
function placeIn(source: string, start: number, within: { text: string; at: number }): number {
  for (let k = Math.min(40, within.text.length - within.at); k > 0; k--) {
    const found = source.indexOf(within.text.slice(within.at, within.at + k), start);
    if (found >= 0) return found;
  }
  return start;
}
