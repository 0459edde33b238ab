/**
 * HCL2 type constraints of `variable` blocks (`type = list(string)`) and the conversions HCL applies to a
 * value given for such a variable: `"3"` becomes the number 3 for `number`, `true` the string "true" for
 * `string`, each item of a list is converted to the list's element type. What does not convert is an error
 * naming what was expected, as HCL's own conversion refuses it.
 */

/** A parsed type constraint. `any` accepts every value as it is. */
export type HclType =
  | { kind: 'string' | 'number' | 'bool' | 'any' }
  | { kind: 'list' | 'set' | 'map'; of: HclType }
  | { kind: 'tuple'; items: HclType[] }
  | { kind: 'object'; attrs: Record<string, HclType> };

/** A type constraint that could not be read, with what was wrong. */
export class TypeSyntaxError extends Error {}

/**
 * Parses a type expression as hcl2json writes it (`${list(string)}`) or as JSON/YAML write it (`list(string)`).
 * Throws TypeSyntaxError naming what it could not read.
 */
export function parseTypeConstraint(text: string): HclType {
  const src = /^\$\{([\s\S]*)\}$/.exec(text)?.[1] ?? text;
  let i = 0;
  const ws = (): void => {
    while (i < src.length && /\s/.test(src[i]!)) i++;
  };
  const expect = (c: string): void => {
    ws();
    if (src[i] !== c) throw new TypeSyntaxError(`expected "${c}" at "${src.slice(i, i + 20) || 'the end'}" in type ${JSON.stringify(src)}`);
    i++;
  };
  const ident = (): string => {
    ws();
    const m = /^[A-Za-z_][\w-]*/.exec(src.slice(i));
    if (!m) throw new TypeSyntaxError(`expected a type at "${src.slice(i, i + 20) || 'the end'}" in ${JSON.stringify(src)}`);
    i += m[0].length;
    return m[0];
  };
  const skipSeparators = (): void => {
    while (i < src.length && /[\s,]/.test(src[i]!)) i++;
  };
  const type = (): HclType => {
    const name = ident();
    switch (name) {
      case 'string':
      case 'number':
      case 'bool':
      case 'any':
        return { kind: name };
      case 'list':
      case 'set':
      case 'map': {
        expect('(');
        const of = type();
        expect(')');
        return { kind: name, of };
      }
      case 'tuple': {
        expect('(');
        expect('[');
        const items: HclType[] = [];
        for (skipSeparators(); src[i] !== ']'; skipSeparators()) {
          if (i >= src.length) throw new TypeSyntaxError(`unterminated tuple type in ${JSON.stringify(src)}`);
          items.push(type());
        }
        i++;
        expect(')');
        return { kind: 'tuple', items };
      }
      case 'object': {
        expect('(');
        expect('{');
        const attrs: Record<string, HclType> = {};
        for (skipSeparators(); src[i] !== '}'; skipSeparators()) {
          if (i >= src.length) throw new TypeSyntaxError(`unterminated object type in ${JSON.stringify(src)}`);
          const key = ident();
          ws();
          if (src[i] !== '=' && src[i] !== ':') throw new TypeSyntaxError(`expected "=" after "${key}" in ${JSON.stringify(src)}`);
          i++;
          attrs[key] = type();
        }
        i++;
        expect(')');
        return { kind: 'object', attrs };
      }
      default:
        throw new TypeSyntaxError(`unknown type "${name}": use string, number, bool, any, list(T), set(T), map(T), tuple([...]) or object({...})`);
    }
  };
  const t = type();
  skipSeparators();
  if (i < src.length) throw new TypeSyntaxError(`unexpected "${src.slice(i, i + 20)}" after the type in ${JSON.stringify(src)}`);
  return t;
}

/** How a type is written: `list(string)`. */
export function typeName(t: HclType): string {
  switch (t.kind) {
    case 'list':
    case 'set':
    case 'map':
      return `${t.kind}(${typeName(t.of)})`;
    case 'tuple':
      return `tuple([${t.items.map(typeName).join(', ')}])`;
    case 'object':
      return `object({${Object.entries(t.attrs).map(([k, v]) => `${k} = ${typeName(v)}`).join(', ')}})`;
    default:
      return t.kind;
  }
}

/** The result of a conversion: the converted value, or why it does not convert. */
export type Converted = { ok: true; value: unknown } | { ok: false; error: string };

const NUMBER = /^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** Converts `value` to type `t` as HCL does (null converts to every type, as null). */
export function convertToType(value: unknown, t: HclType, at = ''): Converted {
  const fail = (what: string): Converted => ({ ok: false, error: `${at ? `${at}: ` : ''}${what} required, got ${describe(value)}` });
  if (value === null || t.kind === 'any') return { ok: true, value };
  switch (t.kind) {
    case 'string':
      if (typeof value === 'string') return { ok: true, value };
      if (typeof value === 'number' || typeof value === 'boolean') return { ok: true, value: String(value) };
      return fail('a string');
    case 'number':
      if (typeof value === 'number') return { ok: true, value };
      if (typeof value === 'string' && NUMBER.test(value.trim())) return { ok: true, value: Number(value.trim()) };
      return fail('a number');
    case 'bool':
      if (typeof value === 'boolean') return { ok: true, value };
      if (value === 'true' || value === 'false') return { ok: true, value: value === 'true' };
      return fail('a bool');
    case 'list':
    case 'set': {
      if (!Array.isArray(value)) return fail(`a ${typeName(t)}`);
      const out: unknown[] = [];
      for (const [k, item] of value.entries()) {
        const c = convertToType(item, t.of, `${at}[${k}]`);
        if (!c.ok) return c;
        if (t.kind === 'set' && out.some((o) => JSON.stringify(o) === JSON.stringify(c.value))) continue;
        out.push(c.value);
      }
      return { ok: true, value: out };
    }
    case 'tuple': {
      if (!Array.isArray(value) || value.length !== t.items.length) return fail(`a ${typeName(t)} (${t.items.length} items)`);
      const out: unknown[] = [];
      for (const [k, item] of value.entries()) {
        const c = convertToType(item, t.items[k]!, `${at}[${k}]`);
        if (!c.ok) return c;
        out.push(c.value);
      }
      return { ok: true, value: out };
    }
    case 'map': {
      if (!isObject(value)) return fail(`a ${typeName(t)}`);
      const out: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(value)) {
        const c = convertToType(item, t.of, `${at}[${JSON.stringify(k)}]`);
        if (!c.ok) return c;
        out[k] = c.value;
      }
      return { ok: true, value: out };
    }
    case 'object': {
      if (!isObject(value)) return fail(`an ${typeName(t)}`);
      const out: Record<string, unknown> = {};
      for (const [k, attr] of Object.entries(t.attrs)) {
        if (!Object.hasOwn(value, k)) return { ok: false, error: `${at ? `${at}: ` : ''}attribute "${k}" is required` };
        const c = convertToType(value[k], attr, `${at}.${k}`);
        if (!c.ok) return c;
        out[k] = c.value;
      }
      return { ok: true, value: out };
    }
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A value as a message shows it: strings and numbers as written, collections by kind. */
export function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (isObject(value)) return 'an object';
  if (value === null) return 'null';
  return JSON.stringify(value);
}
