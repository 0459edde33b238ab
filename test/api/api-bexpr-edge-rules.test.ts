/**
 * go-bexpr's grammar at its edges (src/api/bexpr.ts): a token where the grammar does not expect it, each
 * refused with its own message and place; a value before `in`; a path that steps into a string; and each
 * comparison branch with a row whose answer differs from the fall-through's.
 */
import { describe, expect, it } from 'vitest';
import { evaluateFilter, FilterError, parseFilter } from '../../src/api/bexpr.ts';

const ITEM = {
  Status: 'running',
  Zero: 0,
  Ports: [80, 443],
  Meta: { tag: 'blue' },
  Words: ['a'],
  None: null,
  Blank: '',
  Flag: false,
  Nested: { Empty: {}, List: [] },
};

const matches = (filter: string, item: unknown = ITEM) => evaluateFilter(parseFilter(filter), item);

describe('a token out of place', () => {
  it.each<[string, string]>([
    ['Status ( == "x"', 'expected ==, !=, is, contains or matches after Status at character 8'],
    ['Status ] == "x"', 'expected ==, !=, is, contains or matches after Status at character 8'],
    ['Meta[tag] == "x"', 'expected a quoted key in [...] at character 6'],
    ['Meta[', 'expected a quoted key in [...] at the end'],
    ['Meta["tag" == "x"', 'expected "]" at character 12'],
    ['Meta["tag"', 'expected "]" at the end'],
    ['Meta["tag") == "x"', 'expected "]" at character 11'],
    ['(Status == "running"', 'expected ")" at the end'],
    ['(Status == "running"]', 'expected ")" at character 21'],
    ['(Status == "running" Zero == 0)', 'expected ")" at character 22'],
    ['Status == "running")', 'unexpected ")" at character 20'],
    ['.Status == "x"', 'expected a field name at character 1'],
    [']', 'expected a field name at character 1'],
    // An operator first is no value before `in`, even when `in` follows it.
    ['== in Ports', 'expected a field name at character 1'],
  ])('%s: %s', (filter, message) => {
    expect(() => parseFilter(filter)).toThrow(FilterError);
    expect(() => parseFilter(filter)).toThrow(message);
  });
});

describe('what a filter selects and compares', () => {
  it.each<[string, boolean]>([
    // A value first: a number, a string, a bare word before `in` / `not in`.
    ['80 in Ports', true],
    ['81 in Ports', false],
    ['443 not in Ports', false],
    ['"a" in Words', true],
    ['tag in Meta', true],
    ['color not in Meta', true],
    // A field first, then `not contains` / `not matches`: not a value before `not in`.
    ['Words not contains "b"', true],
    ['Words not contains "a"', false],
    ['Status not matches "^x"', true],
    // A parenthesised expression is one operand.
    ['(Status == "x" or Zero == 0) and Status == "running"', true],
    ['not (Zero == 0)', false],
    // A path does not step into a string's characters.
    ['Status.0 == "r"', false],
    ['Status.0 is empty', true],
    ['Status.length is empty', true],
    // A number field: compared as a number, never to a boolean.
    ['Zero == 0', true],
    ['Zero == "0"', true],
    ['Zero == 0.0', true],
    ['Zero == false', false],
    ['Zero != false', true],
    // null equals only an empty or null value.
    ['None == null', true],
    ['None == ""', true],
    ['None == "x"', false],
    // A map or a list equals nothing, not even null or "".
    ['Meta == null', false],
    ['Words == ""', false],
    ['Nested.Empty == null', false],
    // contains on a map asks for a key; on anything else that is not a string or a list, never.
    ['Meta contains tag', true],
    ['Meta contains blue', false],
    ['Zero contains 0', false],
    ['None contains x', false],
    ['Flag contains false', false],
    // is empty on each kind of value.
    ['Blank is empty', true],
    ['None is empty', true],
    ['Missing is empty', true],
    ['Nested.Empty is empty', true],
    ['Nested.List is empty', true],
    ['Words is empty', false],
    ['Meta is empty', false],
    ['Zero is empty', false],
    ['Flag is empty', false],
    ['Status is not empty', true],
    // A missing field is never equal, so always unequal.
    ['Missing == ""', false],
    ['Missing != ""', true],
  ])('%s → %s', (filter, result) => {
    expect(matches(filter)).toBe(result);
  });
});
