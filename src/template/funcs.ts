/**
 * How template functions are declared: Go checks a function's argument count before calling it
 * ("wrong number of args for index: want at least 1 got 0"), so each carries its arity.
 */

/** A template function: its implementation and how many arguments it takes (`max` undefined: variadic). */
export interface TemplateFunc {
  readonly min: number;
  readonly max?: number;
  call(...args: unknown[]): unknown;
}

/** The functions a template may call, by name. */
export type FuncMap = Readonly<Record<string, TemplateFunc>>;

/** Declares a function taking exactly `n` arguments. */
export function fixed(n: number, call: (...args: never[]) => unknown): TemplateFunc {
  return { min: n, max: n, call: call as (...args: unknown[]) => unknown };
}

/** Declares a function taking at least `min` arguments. */
export function variadic(min: number, call: (...args: never[]) => unknown): TemplateFunc {
  return { min, call: call as (...args: unknown[]) => unknown };
}

/** Go's arity message, or undefined when `got` fits. */
export function arityProblem(name: string, f: TemplateFunc, got: number): string | undefined {
  if (f.max === undefined) return got < f.min ? `wrong number of args for ${name}: want at least ${f.min} got ${got}` : undefined;
  return got < f.min || got > f.max ? `wrong number of args for ${name}: want ${f.min} got ${got}` : undefined;
}
