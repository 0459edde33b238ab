/** How a function of the table is described: its parameters (with the type each argument converts to) and its body. */
import type { Value } from '../values.ts';

/** The types arguments convert to before a function sees them (go-cty's parameter types, as far as JSON needs). */
export type ParamType = 'any' | 'string' | 'number' | 'bool' | 'list' | 'map' | 'collection' | 'list(string)' | 'list(number)';

export interface Param {
  name: string;
  type: ParamType;
  allowNull?: boolean;
}

/** What file functions need: the job file's directory, or undefined for a job given as text. */
export interface FunctionContext {
  baseDir?: string;
}

export interface HclFunction {
  params: Param[];
  /** The type of any further arguments; none: the function takes exactly `params`. */
  variadic?: Param;
  impl(args: Value[], ctx: FunctionContext): Value;
}

/** A function's own failure on valid-typed input (an index past the end, text that is not JSON). */
export class FunctionError extends Error {}

/** Shorthand for a table entry: `fn('str:string', ...)` reads as the parameter list. */
export function fn(params: string[], impl: HclFunction['impl'], variadic?: string): HclFunction {
  const parse = (p: string): Param => {
    const [name, type] = p.split(':') as [string, string];
    const allowNull = type.endsWith('?');
    return { name, type: type.replace('?', '') as ParamType, ...(allowNull && { allowNull }) };
  };
  return { params: params.map(parse), ...(variadic && { variadic: parse(variadic) }), impl };
}
