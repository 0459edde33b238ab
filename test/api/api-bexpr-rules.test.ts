/**
 * go-bexpr's grammar as Nomad's `filter` takes it (src/api/bexpr.ts), rule by rule: how strings, numbers and
 * words are read, each parse error by its message and place, and how a value is compared as the field's type.
 */
import { describe, expect, it } from 'vitest';
import { evaluateFilter, FilterError, parseFilter } from '../../src/api/bexpr.ts';

const ITEM = {
  Status: 'running',
  Quote: 'a"b',
  Lines: 'x\ny\tz\rw',
  Slash: 'a\\b',
  Priority: 50,
  Negative: -5,
  Ratio: 1.5,
  Stop: false,
  Ready: true,
  None: null,
  Blank: '',
  NoList: [],
  NoMap: {},
  Zero: 0,
  Ports: [80, 443],
  Flags: [true],
  Meta: { tag: 'blue', 'a-b/c': 'slashed' },
  Arr: ['first'],
  not: 'xyz',
  Words: ['not'],
};

describe('bexpr: what a filter matches', () => {
  it.each<[string, boolean]>([
    ['Quote == "a\\"b"', true],
    ['Lines == "x\\ny\\tz\\rw"', true],
    ['Slash == "a\\\\b"', true],
    ['Negative == -5', true],
    ['Ratio == 1.5', true],
    ['Priority == 5e1', true],
    ['Priority == 0.5E2', true],
    ['Ratio == 1.50', true],
    ['Priority == 5e+1', true],
    ['Priority == 500e-01', true],
    ['Ratio == 15e-01', true],
    ['Priority == true', false],
    ['Priority == "fifty"', false],
    ['Stop == "false"', true],
    ['Stop == 0', false],
    ['Stop == true', false],
    ['Ready == true', true],
    ['Ready == yes', false],
    ['None == ""', true],
    ['None == null', true],
    ['None == x', false],
    ['Meta == x', false],
    ['Meta.a-b/c == slashed', true],
    ['Arr.0 == first', true],
    ['Status.x is empty', true],
    ['None.x is empty', true],
    ['Meta.toString is empty', true],
    ['Blank is empty', true],
    ['NoList is empty', true],
    ['NoMap is empty', true],
    ['Zero is empty', false],
    ['Stop is empty', false],
    ['Status is empty', false],
    ['Meta is not empty', true],
    ['Priority contains 5', false],
    ['Ports contains 80', true],
    ['Ports contains 81', false],
    ['Flags contains true', true],
    ['Meta contains tag', true],
    ['Meta contains toString', false],
    ['Status contains unn', true],
    ['Status not contains unn', false],
    ['Priority matches "5"', false],
    ['Priority not matches "5"', true],
    ['Status not matches "^r"', false],
    ['dc2 in Words', false],
    ['not in Words', true],
    ['not contains y', true],
    ['not matches "^x"', true],
    ['not not Status == running', true],
    ['Status == running and Stop == true', false],
    ['Stop == true and Status == running', false],
    ['Stop == true or Status == running', true],
    ['Status == running or Stop == true', true],
    ['Stop == true or Ready == false', false],
    ['Missing != x', true],
    ['Missing == x', false],
  ])('%s is %s', (filter, matches) => {
    expect(evaluateFilter(parseFilter(filter), ITEM)).toBe(matches);
  });
});

describe('bexpr: each parse error, by its message and place', () => {
  it.each<[string, string]>([
    ['   ', 'the filter is empty'],
    ['Status == "abc\\', 'unterminated string starting at character 11'],
    ['ID matches `x', 'unterminated raw string starting at character 12'],
    ['Status == "x" & y', 'unexpected "&" at character 15'],
    ['Status == -x', 'unexpected "-" at character 11'],
    ['Status == -x1', 'unexpected "-" at character 11'],
    ['Meta. == x', 'expected a field name after "." at character 7'],
    ['Meta.', 'expected a field name after "." at the end'],
    ['Meta[x] == 1', 'expected a quoted key in [...] at character 6'],
    ['Meta["a" == 1', 'expected "]" at character 10'],
    ['== x', 'expected a field name at character 1'],
    ['not', 'expected a field name at the end'],
    ['Status == )', 'expected a value, got ")" at character 11'],
    ['"x" Status', 'expected "in" at character 5'],
    ['"x" not Status', 'expected "in" at character 9'],
    ['Status is not', 'expected "empty" at the end'],
    ['Status is not full', 'expected "empty" at character 15'],
    ['Status not likes x', 'expected ==, !=, is, contains or matches after Status at character 12'],
    ['Meta.tag likes x', 'expected ==, !=, is, contains or matches after Meta.tag at character 10'],
    ['Status', 'expected ==, !=, is, contains or matches after Status at the end'],
    ['(Status == x or', 'expected a field name at the end'],
    ['(Status == x) )', 'unexpected ")" at character 15'],
    ['ID matches "["', '"[" is not a regular expression: Invalid regular expression: /[/: Unterminated character class'],
  ])('%s', (filter, message) => {
    let error: unknown;
    try {
      parseFilter(filter);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FilterError);
    expect(error).toMatchObject({ name: 'FilterError', code: 'ErrBadFilter', message });
  });
});

describe('bexpr: what a filter parses to', () => {
  it.each<[string, unknown]>([
    ['a == "s"', { op: '==', selector: ['a'], value: { kind: 'string', text: 's' } }],
    ['a != `r`', { op: '!=', selector: ['a'], value: { kind: 'string', text: 'r' } }],
    ['a == -1.5e3', { op: '==', selector: ['a'], value: { kind: 'number', text: '-1.5e3' } }],
    ['a == false', { op: '==', selector: ['a'], value: { kind: 'bool', text: 'false' } }],
    ['a == true', { op: '==', selector: ['a'], value: { kind: 'bool', text: 'true' } }],
    ['a == w', { op: '==', selector: ['a'], value: { kind: 'word', text: 'w' } }],
    ['a.b["c d"].e is empty', { op: 'empty', selector: ['a', 'b', 'c d', 'e'] }],
    ['a is not empty', { op: 'not empty', selector: ['a'] }],
    ['1 in a', { op: 'in', selector: ['a'], value: { kind: 'number', text: '1' } }],
    ['w not in a', { op: 'not in', selector: ['a'], value: { kind: 'word', text: 'w' } }],
    ['a contains x', { op: 'contains', selector: ['a'], value: { kind: 'word', text: 'x' } }],
    ['a not contains x', { op: 'not contains', selector: ['a'], value: { kind: 'word', text: 'x' } }],
    ['not a is empty', { op: 'not', expr: { op: 'empty', selector: ['a'] } }],
    [
      'a is empty or b is empty and c is empty',
      { op: 'or', left: { op: 'empty', selector: ['a'] }, right: { op: 'and', left: { op: 'empty', selector: ['b'] }, right: { op: 'empty', selector: ['c'] } } },
    ],
    [
      'a is empty and b is empty and c is empty',
      { op: 'and', left: { op: 'and', left: { op: 'empty', selector: ['a'] }, right: { op: 'empty', selector: ['b'] } }, right: { op: 'empty', selector: ['c'] } },
    ],
  ])('%s', (filter, expr) => {
    expect(parseFilter(filter)).toStrictEqual(expr);
  });

  it('a matches keeps its regular expression', () => {
    const e = parseFilter('a not matches "^x+$"') as { op: string; re: RegExp };
    expect(e.op).toBe('not matches');
    expect(e.re.source).toBe('^x+$');
  });
});
