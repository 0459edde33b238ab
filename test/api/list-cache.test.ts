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
