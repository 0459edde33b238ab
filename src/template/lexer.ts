/**
 * The lexer of Go's text/template (text/template/parse/lex.go): text and actions between delimiters,
 * `{{- ` / ` -}}` trimming the whitespace beside them, `{{/* comments *\/}}`, and inside actions the
 * tokens the parser reads. Spaces inside an action are tokens too: they separate a command's arguments
 * (`.a .b` is two arguments, `.a.b` one chained field).
 */

/** What a token is. `char` is a lone punctuation character the parser checks (Go's itemChar: `,`). */
export type TokenKind =
  | 'text' | 'leftDelim' | 'rightDelim' | 'comment' | 'identifier' | 'keyword' | 'field' | 'variable' | 'dot'
  | 'string' | 'rawString' | 'charConstant' | 'number' | 'bool' | 'nil' | 'pipe' | 'leftParen' | 'rightParen'
  | 'declare' | 'assign' | 'char' | 'space' | 'eof';

/** One token: its kind, its text as written, and where it starts (offset into the template text). */
export interface Token {
  kind: TokenKind;
  value: string;
  pos: number;
}

/** Go's keywords inside actions. */
export const KEYWORDS = new Set(['block', 'break', 'continue', 'define', 'else', 'end', 'if', 'range', 'template', 'with']);

/** A lexing problem, with the offset it was found at (the parser turns it into a TemplateParseError). */
export class LexError extends Error {
  constructor(
    message: string,
    readonly pos: number,
  ) {
    super(message);
  }
}

const isSpace = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isAlphaNumeric = (c: string | undefined): boolean => c !== undefined && (c === '_' || /[\p{L}\p{Nd}]/u.test(c));

/** Splits a template's text into tokens, with the delimiters given (Go's defaults `{{` and `}}`). */
export function lex(text: string, leftDelim = '{{', rightDelim = '}}'): Token[] {
  const left = leftDelim === '' ? '{{' : leftDelim;
  const right = rightDelim === '' ? '}}' : rightDelim;
  const tokens: Token[] = [];
  let pos = 0;
  let trimNextText = false;

  const emit = (kind: TokenKind, start: number, end: number): void => {
    tokens.push({ kind, value: text.slice(start, end), pos: start });
  };
  /** At the right delimiter, possibly preceded by the trim marker " -": how long it is and whether it trims. */
  const atRightDelim = (at: number): { len: number; trim: boolean } | undefined => {
    if (isSpace(text[at]) && text[at + 1] === '-' && text.startsWith(right, at + 2)) return { len: 2 + right.length, trim: true };
    if (text.startsWith(right, at)) return { len: right.length, trim: false };
    return undefined;
  };
  const skipSpace = (at: number): number => {
    while (at < text.length && isSpace(text[at])) at++;
    return at;
  };

  while (pos < text.length) {
    const open = text.indexOf(left, pos);
    let start = trimNextText ? skipSpace(pos) : pos;
    trimNextText = false;
    if (open < 0) {
      if (start < text.length) emit('text', start, text.length);
      break;
    }
    if (start > open) start = open;
    const trimLeft = text[open + left.length] === '-' && isSpace(text[open + left.length + 1]);
    let textEnd = open;
    if (trimLeft) while (textEnd > start && isSpace(text[textEnd - 1])) textEnd--;
    if (textEnd > start) emit('text', start, textEnd);
    pos = open + left.length + (trimLeft ? 2 : 0);

    if (text.startsWith('/*', pos)) {
      const close = text.indexOf('*/', pos + 2);
      if (close < 0) throw new LexError('unclosed comment', open);
      const delim = atRightDelim(close + 2);
      if (!delim) throw new LexError('comment ends before closing delimiter', close);
      emit('comment', pos, close + 2);
      pos = close + 2 + delim.len;
      trimNextText = delim.trim;
      continue;
    }

    emit('leftDelim', open, open + left.length);
    let parenDepth = 0;
    for (;;) {
      const delim = atRightDelim(pos);
      if (delim) {
        if (parenDepth > 0) throw new LexError('unclosed left paren', pos);
        tokens.push({ kind: 'rightDelim', value: right, pos: pos + (delim.trim ? 2 : 0) });
        pos += delim.len;
        trimNextText = delim.trim;
        break;
      }
      if (pos >= text.length) throw new LexError('unclosed action', open);
      const c = text[pos]!;
      const begin = pos;
      if (isSpace(c)) {
        pos = skipSpace(pos);
        // " -}}": the space belongs to the trim marker, not to the action.
        emit('space', begin, pos);
        continue;
      }
      if (c === '=') {
        pos++;
        emit('assign', begin, pos);
      } else if (c === ':') {
        if (text[pos + 1] !== '=') throw new LexError('expected :=', pos);
        pos += 2;
        emit('declare', begin, pos);
      } else if (c === '|') {
        pos++;
        emit('pipe', begin, pos);
      } else if (c === '"') {
        pos = scanQuoted(text, pos, '"', 'unterminated quoted string');
        emit('string', begin, pos);
      } else if (c === '`') {
        const close = text.indexOf('`', pos + 1);
        if (close < 0) throw new LexError('unterminated raw quoted string', pos);
        pos = close + 1;
        emit('rawString', begin, pos);
      } else if (c === "'") {
        pos = scanQuoted(text, pos, "'", 'unterminated character constant');
        emit('charConstant', begin, pos);
      } else if (c === '$') {
        pos++;
        while (isAlphaNumeric(text[pos])) pos++;
        checkTerminator(pos);
        emit('variable', begin, pos);
      } else if (c === '.' && /[0-9]/.test(text[pos + 1] ?? '')) {
        pos = scanNumber(text, pos);
        emit('number', begin, pos);
      } else if (c === '.') {
        pos++;
        while (isAlphaNumeric(text[pos])) pos++;
        checkTerminator(pos);
        emit(pos === begin + 1 ? 'dot' : 'field', begin, pos);
      } else if (c === '+' || c === '-' || /[0-9]/.test(c)) {
        pos = scanNumber(text, pos);
        emit('number', begin, pos);
      } else if (isAlphaNumeric(c)) {
        while (isAlphaNumeric(text[pos])) pos++;
        checkTerminator(pos);
        const word = text.slice(begin, pos);
        const kind: TokenKind = KEYWORDS.has(word) ? 'keyword' : word === 'true' || word === 'false' ? 'bool' : word === 'nil' ? 'nil' : 'identifier';
        // `.` after a keyword is a field of something else: Go lexes `end.x` as an identifier's field chain; keep it simple.
        emit(kind, begin, pos);
      } else if (c === '(') {
        pos++;
        parenDepth++;
        emit('leftParen', begin, pos);
      } else if (c === ')') {
        pos++;
        parenDepth--;
        if (parenDepth < 0) throw new LexError('unexpected right paren', begin);
        emit('rightParen', begin, pos);
      } else if (c.charCodeAt(0) < 0x7f && c.charCodeAt(0) > 0x20) {
        pos++;
        emit('char', begin, pos);
      } else {
        throw new LexError(`unrecognized character in action: ${describeRune(c)}`, pos);
      }
    }

    function checkTerminator(at: number): void {
      const c = text[at];
      if (c === undefined || isSpace(c) || '.,|:)('.includes(c) || atRightDelim(at)) return;
      throw new LexError(`bad character ${describeRune(c)}`, at);
    }
  }
  tokens.push({ kind: 'eof', value: '', pos: text.length });
  return tokens;
}

/** Go's %#U of a character: `U+0022 '"'`. */
function describeRune(c: string): string {
  const cp = c.codePointAt(0)!;
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}${cp >= 0x20 && cp !== 0x7f ? ` '${c}'` : ''}`;
}

function scanQuoted(text: string, start: number, quote: string, unterminated: string): number {
  let pos = start + 1;
  for (;;) {
    const c = text[pos];
    if (c === undefined || c === '\n') throw new LexError(unterminated, start);
    if (c === '\\') {
      pos += 2;
      continue;
    }
    pos++;
    if (c === quote) return pos;
  }
}

/** Go's scanNumber: sign, base prefix, digits with `_`, fraction, exponent; a letter right after is bad syntax. */
function scanNumber(text: string, start: number): number {
  let pos = start;
  const accept = (set: string): boolean => {
    if (pos < text.length && set.includes(text[pos]!)) {
      pos++;
      return true;
    }
    return false;
  };
  const acceptRun = (set: string): void => {
    while (accept(set));
  };
  accept('+-');
  let digits = '0123456789_';
  if (accept('0')) {
    if (accept('xX')) digits = '0123456789abcdefABCDEF_';
    else if (accept('oO')) digits = '01234567_';
    else if (accept('bB')) digits = '01_';
  }
  acceptRun(digits);
  if (accept('.')) acceptRun(digits);
  if (digits.length === 11 && accept('eE')) {
    accept('+-');
    acceptRun('0123456789_');
  }
  if (digits.length === 23 && accept('pP')) {
    accept('+-');
    acceptRun('0123456789_');
  }
  if (isAlphaNumeric(text[pos])) throw new LexError(`bad number syntax: "${text.slice(start, pos + 1)}"`, start);
  return pos;
}
