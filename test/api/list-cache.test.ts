/**
 * The list cache behind blocking list queries: a scope's list is built once per index and each query's
 * answer serialised once, with the prefix and list options applied per query exactly as an uncached list
 * has them; a new index builds again. Also the entry memo and the Accept-Encoding rule.
 */
import { describe, expect, it } from 'vitest';
import { acceptsGzip, ListCache, StubMemo } from '../../src/api/list-cache.ts';
import { applyListOptions } from '../../src/api/query-options.ts';

const items = [
  { ID: 'api-1', Namespace: 'default', Status: 'running' },
  { ID: 'api-2', Namespace: 'prod', Status: 'pending' },
  { ID: 'web-1', Namespace: 'default', Status: 'running' },
];

/** A build that counts its calls. */
function counted(list: typeof items) {
  const build = () => {
    build.calls++;
    return list;
  };
  build.calls = 0;
  return build;
}

describe('ListCache', () => {
  it('builds a scope’s list once per index, however many queries read it', () => {
    const cache = new ListCache();
    const build = counted(items);
    cache.answer('allocs', 5, {}, build);
    cache.answer('allocs', 5, { index: '4', wait: '5m' }, build);
    cache.answer('allocs', 5, { filter: 'Status == "running"' }, build);
    cache.answer('allocs', 5, { prefix: 'api' }, build);
    expect(build.calls).toBe(1);
  });

  it('gives watchers of the same query at the same index the same text, whatever index and wait they asked with', () => {
    const cache = new ListCache();
    const a = cache.answer('jobs', 7, { index: '3', wait: '1m' }, counted(items));
    const b = cache.answer('jobs', 7, { index: '6', wait: '5m' }, counted(items));
    expect(b).toBe(a);
    expect(JSON.parse(a.body)).toEqual(items);
  });

  it('builds again at a new index, and answers from the new list', () => {
    const cache = new ListCache();
    const build = counted(items);
    cache.answer('allocs', 5, {}, build);
    const later = counted(items.slice(0, 1));
    const answer = cache.answer('allocs', 6, {}, later);
    expect([build.calls, later.calls]).toEqual([1, 1]);
    expect(JSON.parse(answer.body)).toEqual(items.slice(0, 1));
  });

  it('keeps scopes apart at the same index', () => {
    const cache = new ListCache();
    cache.answer('job-allocs:a', 9, {}, () => items.slice(0, 1));
    const b = cache.answer('job-allocs:b', 9, {}, () => items.slice(2));
    expect(JSON.parse(b.body)).toEqual(items.slice(2));
  });

  it.each([
    ['a prefix', { prefix: 'api' }],
    ['a filter', { filter: 'Status == "running"' }],
    ['a namespace', { namespace: 'prod' }],
    ['reverse', { reverse: 'true' }],
    ['a page', { per_page: '2' }],
    ['the next page', { per_page: '2', next_token: 'web-1' }],
  ])('applies %s per query as an uncached list has it', (_what, query: Record<string, string>) => {
    const cache = new ListCache();
    cache.answer('allocs', 5, {}, () => items);
    const answer = cache.answer('allocs', 5, query, () => items);
    const prefixed = items.filter((i) => i.ID.startsWith(query['prefix'] ?? ''));
    const expected = applyListOptions(prefixed, query);
    expect(JSON.parse(answer.body)).toEqual(expected.items);
    expect(answer.nextToken).toBe(expected.nextToken);
  });

  it('names the next page when a page is cut', () => {
    expect(new ListCache().answer('allocs', 5, { per_page: '2' }, () => items).nextToken).toBe('web-1');
  });

  it('keeps nothing for a query it refuses, and refuses it again', () => {
    const cache = new ListCache();
    expect(() => cache.answer('allocs', 5, { filter: 'Status ==' }, () => items)).toThrow(/failed to read filter expression/);
    expect(() => cache.answer('allocs', 5, { filter: 'Status ==' }, () => items)).toThrow(/failed to read filter expression/);
  });
});

describe('StubMemo', () => {
  it('remakes an entry’s form only when its index moves', () => {
    let made = 0;
    const memo = new StubMemo((e: { id: string }) => ({ ID: e.id, n: ++made }));
    const entry = { id: 'a' };
    const first = memo.of(entry, 3);
    expect(memo.of(entry, 3)).toBe(first);
    expect(memo.of(entry, 4)).toEqual({ ID: 'a', n: 2 });
    expect(memo.of({ id: 'a' }, 4)).toEqual({ ID: 'a', n: 3 });
  });

  it('has a list rebuilt at a new index serialise only the entries remade, in the same text as the whole list’s JSON', () => {
    // toJSON counts how often JSON.stringify reads a form (it reads it once per serialisation).
    let serialised = 0;
    const memo = new StubMemo((e: { id: string; at: number }) => ({ ID: e.id, At: e.at, Gone: undefined, toJSON() { serialised++; return { ID: this.ID, At: this.At, Gone: this.Gone }; } }));
    const entries = [{ id: 'a', at: 1 }, { id: 'b', at: 1 }, { id: 'c', at: 1 }];
    const cache = new ListCache();
    const build = () => entries.map((e) => memo.of(e, e.at));
    const first = cache.answer('allocs', 1, {}, build);
    expect(serialised).toBe(3);
    entries[1]!.at = 2;
    const second = cache.answer('allocs', 2, {}, build);
    expect(serialised).toBe(4);
    expect(second.body).toBe(JSON.stringify(build()));
    expect(JSON.parse(second.body)).toEqual([{ ID: 'a', At: 1 }, { ID: 'b', At: 2 }, { ID: 'c', At: 1 }]);
    expect(first.body).toBe('[{"ID":"a","At":1},{"ID":"b","At":1},{"ID":"c","At":1}]');
  });

  it('serialises entries no memo made each time, as JSON.stringify of the list would', () => {
    const cache = new ListCache();
    const list = [{ ID: 'x', N: 1 }];
    expect(cache.answer('deployments', 1, {}, () => list).body).toBe('[{"ID":"x","N":1}]');
    // The same object changed in place (a list that is not a memo's): its new text at the next index.
    list[0]!.N = 2;
    expect(cache.answer('deployments', 2, {}, () => list).body).toBe('[{"ID":"x","N":2}]');
  });
});

describe('acceptsGzip', () => {
  it.each([
    [undefined, false],
    ['', false],
    ['gzip', true],
    ['deflate, gzip;q=0.5', true],
    ['GZIP', true],
    ['gzip;q=0', false],
    ['identity', false],
    ['*', true],
    ['gzip;q=0, *', false],
    ['*;q=0', false],
    [['br', 'gzip'], true],
  ])('%j → %s', (header, accepted) => {
    expect(acceptsGzip(header)).toBe(accepted);
  });
});
