/**
 * Quick looks at the strings hcl2json hands over (expressions come back as their source text in `${...}`):
 * their template parts, and whether an expression mentions `var.`/`local.`. Evaluation is hcl-expr/'s.
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

/**
 * Whether an expression refers to an input variable or a local anywhere (`upper(var.x)`, `var.n + 1`); plain
 * quoted strings inside it do not count. Nomad's runtime references (`NOMAD_PORT_http`, `attr.kernel.name`,
 * `meta.local`) do not either: only `var` and `local` as the root of a traversal.
 */
export function mentionsVariables(expr: string): boolean {
  const withoutStrings = expr.replace(/"(?:[^"\\$%]|\\.|[$%](?!\{))*"/g, '""');
  return /(?<![\p{ID_Continue}_.-])(var|local)\s*[.[]/u.test(withoutStrings);
}
