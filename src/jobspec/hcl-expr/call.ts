/**
 * Calls a function of Nomad's jobspec2 table: arity and argument types checked as go-cty's function specs do,
 * `...` expanding a final list, and the three functions that take expressions rather than values (`try`,
 * `can`, `convert`).
 */
import type { Expr } from './ast.ts';
import { AlreadyReported, ExprError } from './errors.ts';
import type { Evaluator } from './evaluate.ts';
import { FUNCTIONS, FunctionError, type FunctionContext, type ParamType } from './functions/index.ts';
import { convertToType, parseTypeConstraint, TypeSyntaxError, typeName } from '../hcl-type-constraint.ts';
import { asBool, asNumber, asString, isObject, show, type Value } from './values.ts';

export type { FunctionContext };

export function callFunction(e: Extract<Expr, { k: 'call' }>, ev: Evaluator): Value {
  if (e.name === 'try' || e.name === 'can') return tryOrCan(e, ev);
  if (e.name === 'convert') return convert(e, ev);
  const fn = Object.hasOwn(FUNCTIONS, e.name) ? FUNCTIONS[e.name] : undefined;
  if (!fn) throw new ExprError(`Call to unknown function: there is no function named "${e.name}" in Nomad's job files`, e.at);
  let args = e.args.map((a) => ev.evaluate(a));
  if (e.expand) {
    const last = args.at(-1);
    if (!Array.isArray(last)) throw new ExprError(`Invalid expanding argument value: the argument before ... must be a list, got ${show(last)}`, e.args.at(-1)!.at);
    args = [...args.slice(0, -1), ...last];
  }
  const min = fn.params.length;
  if (args.length < min) throw new ExprError(`Not enough function arguments: ${e.name}() takes ${min}${fn.variadic ? ' or more' : ''} argument(s); missing "${fn.params[args.length]!.name}"`, e.at);
  if (!fn.variadic && args.length > min) throw new ExprError(`Too many function arguments: ${e.name}() takes only ${min} argument(s), got ${args.length}`, e.args[Math.min(min, e.args.length - 1)]!.at);
  const converted = args.map((a, i) => {
    const param = fn.params[i] ?? fn.variadic!;
    const argAt = (e.args[Math.min(i, e.args.length - 1)] ?? e).at;
    return convertArg(a, param.type, param.allowNull ?? false, `${e.name}(): invalid value for "${param.name}" parameter`, argAt);
  });
  try {
    return fn.impl(converted, ev.scope);
  } catch (err) {
    if (err instanceof FunctionError) throw new ExprError(`Error in function call: call to ${e.name}() failed: ${err.message}`, e.at);
    throw err;
  }
}

/** An argument converted to its parameter's type, as cty converts (a number from its string, and so on). */
function convertArg(v: Value, type: ParamType, allowNull: boolean, what: string, at: number): Value {
  if (v === null || v === undefined) {
    if (allowNull || type === 'any') return null;
    throw new ExprError(`Invalid function argument: ${what}: the value must not be null`, at);
  }
  const fail = (want: string): never => {
    throw new ExprError(`Invalid function argument: ${what}: ${want} required, got ${show(v)}`, at);
  };
  switch (type) {
    case 'any':
      return v;
    case 'string':
      return asString(v) ?? fail('string');
    case 'number':
      return asNumber(v) ?? fail('number');
    case 'bool':
      return asBool(v) ?? fail('bool');
    case 'list':
      return Array.isArray(v) ? v : fail('list');
    case 'map':
      return isObject(v) ? v : fail('map');
    case 'collection':
      return Array.isArray(v) || isObject(v) ? v : fail('list, map or object');
    case 'list(string)':
      if (!Array.isArray(v)) fail('list of string');
      return (v as Value[]).map((x, i) => {
        if (x === null) return null;
        const s = asString(x);
        if (s === undefined) throw new ExprError(`Invalid function argument: ${what}: element ${i}: string required, got ${show(x)}`, at);
        return s;
      });
    case 'list(number)':
      if (!Array.isArray(v)) fail('list of number');
      return (v as Value[]).map((x, i) => asNumber(x) ?? fail(`element ${i}: number`));
  }
}

function tryOrCan(e: Extract<Expr, { k: 'call' }>, ev: Evaluator): Value {
  if (e.name === 'can' && e.args.length !== 1) throw new ExprError(`can() takes exactly 1 argument, got ${e.args.length}`, e.at);
  if (e.args.length === 0) throw new ExprError('try() needs at least one argument', e.at);
  const problems: string[] = [];
  for (const arg of e.args) {
    try {
      const v = ev.evaluate(arg);
      return e.name === 'can' ? true : v;
    } catch (err) {
      if (err instanceof AlreadyReported) throw err;
      if (!(err instanceof ExprError)) throw err;
      problems.push(err.message);
    }
  }
  if (e.name === 'can') return false;
  throw new ExprError(`Error in function call: call to try() failed: no expression succeeded: ${problems.join('; ')}`, e.at);
}

function convert(e: Extract<Expr, { k: 'call' }>, ev: Evaluator): Value {
  if (e.args.length !== 2) throw new ExprError(`convert() takes 2 arguments (a value and a type), got ${e.args.length}`, e.at);
  const value = ev.evaluate(e.args[0]!);
  let type;
  try {
    type = parseTypeConstraint(e.argText[1]!.trim());
  } catch (err) {
    if (!(err instanceof TypeSyntaxError)) throw err;
    throw new ExprError(`Invalid type specification: ${err.message}`, e.args[1]!.at);
  }
  const c = convertToType(value, type);
  if (!c.ok) throw new ExprError(`Invalid value for "value" parameter: cannot convert to ${typeName(type)}: ${c.error}`, e.args[0]!.at);
  return c.value;
}
