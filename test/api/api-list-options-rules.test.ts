/**
 * Nomad's list query options as one pure step (applyListOptions in src/api/query-options.ts), option by
 * option, in Nomad's order: namespace, filter, reverse, next_token, per_page.
 */
import { describe, expect, it } from 'vitest';
import { applyListOptions } from '../../src/api/query-options.ts';

const ITEMS = [
  { ID: 'a', Namespace: 'default', Tag: 'blue' },
  { ID: 'b', Namespace: 'ops', Tag: 'green' },
  { Name: 'c', Tag: 'blue' },
  { ID: 'd', Namespace: 'default', Tag: 'blue' },
];
const keys = (items: unknown[]) => items.map((i) => (i as { ID?: string; Name?: string }).ID ?? (i as { Name: string }).Name);

describe('applyListOptions: each option', () => {
  it.each<[string, Record<string, unknown>, string[], string | undefined]>([
    ['no options: every item, no token', {}, ['a', 'b', 'c', 'd'], undefined],
    ['a namespace keeps its items and those without a namespace', { namespace: 'ops' }, ['b', 'c'], undefined],
    ['namespace * is every namespace', { namespace: '*' }, ['a', 'b', 'c', 'd'], undefined],
    ['an empty namespace is every namespace', { namespace: '' }, ['a', 'b', 'c', 'd'], undefined],
    ['the first of repeated values counts', { namespace: ['ops', 'default'] }, ['b', 'c'], undefined],
    ['a value that is neither a string nor a list is ignored', { namespace: 5 }, ['a', 'b', 'c', 'd'], undefined],
    ['a filter', { filter: 'Tag == blue' }, ['a', 'c', 'd'], undefined],
    ['an empty filter keeps all', { filter: '' }, ['a', 'b', 'c', 'd'], undefined],
    ['reverse=true', { reverse: 'true' }, ['d', 'c', 'b', 'a'], undefined],
    ['reverse=1, as Go reads it', { reverse: '1' }, ['d', 'c', 'b', 'a'], undefined],
    ['reverse=false', { reverse: 'false' }, ['a', 'b', 'c', 'd'], undefined],
    ['an empty reverse', { reverse: '' }, ['a', 'b', 'c', 'd'], undefined],
    ['per_page cuts the page and names the next key', { per_page: '2' }, ['a', 'b'], 'c'],
    ['per_page of exactly the length: no token', { per_page: '4' }, ['a', 'b', 'c', 'd'], undefined],
    ['per_page past the length: no token', { per_page: '9' }, ['a', 'b', 'c', 'd'], undefined],
    ['an empty per_page is no paging', { per_page: '' }, ['a', 'b', 'c', 'd'], undefined],
    ['next_token starts the page at that key', { next_token: 'c' }, ['c', 'd'], undefined],
    ['next_token matches a Name where there is no ID', { next_token: 'c', per_page: '1' }, ['c'], 'd'],
    ['a next_token naming the first item is the whole list', { next_token: 'a' }, ['a', 'b', 'c', 'd'], undefined],
    ['a next_token that names nothing gives an empty page', { next_token: 'zz' }, [], undefined],
    ['an empty next_token is the first page', { next_token: '' }, ['a', 'b', 'c', 'd'], undefined],
    ['reverse, then next_token, then per_page', { reverse: 'true', next_token: 'c', per_page: '1' }, ['c'], 'b'],
    ['namespace and filter, then paging', { namespace: 'default', filter: 'Tag == blue', per_page: '1' }, ['a'], 'c'],
  ])('%s', (_what, query, expected, nextToken) => {
    const answer = applyListOptions(ITEMS, query);
    expect(keys(answer.items)).toEqual(expected);
    expect(answer.nextToken).toBe(nextToken);
    expect('nextToken' in answer).toBe(nextToken !== undefined);
  });

  it('keys a string item by itself and any other by its JSON', () => {
    expect(applyListOptions(['x', 'y'], { per_page: '1' }).nextToken).toBe('y');
    expect(applyListOptions([{ n: 1 }, { n: 2 }], { per_page: '1' }).nextToken).toBe('{"n":2}');
    expect(applyListOptions([{ n: 1 }, { n: 2 }], { next_token: '{"n":2}' }).items).toEqual([{ n: 2 }]);
    expect(applyListOptions([1, null], { per_page: '1' }).nextToken).toBe('null');
  });

  it('reverse leaves the list it was given in its order', () => {
    const list = [{ ID: 'a' }, { ID: 'b' }];
    applyListOptions(list, { reverse: 'true' });
    expect(keys(list)).toEqual(['a', 'b']);
  });
});

describe('applyListOptions: each refusal is a 400 naming the option', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['a filter that does not parse', { filter: 'Tag ==' }, 'failed to read filter expression: expected a value at the end'],
    ['a reverse that is not a boolean', { reverse: 'yes' }, 'reverse: "yes" is not a boolean'],
    ['a per_page of zero', { per_page: '0' }, 'per_page: expected a positive integer, got "0"'],
    ['a negative per_page', { per_page: '-1' }, 'per_page: expected a positive integer, got "-1"'],
    ['a fractional per_page', { per_page: '1.5' }, 'per_page: expected a positive integer, got "1.5"'],
    ['a per_page that is not a number', { per_page: 'x' }, 'per_page: expected a positive integer, got "x"'],
  ])('%s', (_what, query, message) => {
    expect(() => applyListOptions(ITEMS, query)).toThrow(expect.objectContaining({ name: 'HttpError', statusCode: 400, message }));
  });
});

describe('applyListOptions on odd items', () => {
  it('keeps a null item when filtering by namespace, as it keeps any item without a string Namespace', () => {
    expect(applyListOptions([null, { ID: 'a', Namespace: 'x' }, { ID: 'b', Namespace: 'y' }], { namespace: 'x' }).items).toEqual([null, { ID: 'a', Namespace: 'x' }]);
  });
});
