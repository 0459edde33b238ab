/**
 * The list cache's bounds and keys (src/api/list-cache.ts): which query parameters tell answers apart, and
 * that both memos drop their oldest entry past 512 entries and the answers past 32 MiB.
 */
import { describe, expect, it } from 'vitest';
import { ListCache } from '../../src/api/list-cache.ts';

const items = [{ ID: 'a' }, { ID: 'b' }];

describe('ListCache keys', () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown>, boolean]>([
    ['index, wait and stale do not tell answers apart', { prefix: 'a' }, { prefix: 'a', index: '5', wait: '1s', stale: '' }, true],
    ['the order of the parameters does not matter', { prefix: 'a', reverse: 'true' }, { reverse: 'true', prefix: 'a' }, true],
    ['another value is another answer', { prefix: 'a' }, { prefix: 'b' }, false],
    ['another parameter is another answer', { prefix: 'a' }, { prefix: 'a', per_page: '1' }, false],
  ])('%s', (_what, q1, q2, same) => {
    const cache = new ListCache();
    const first = cache.answer('jobs', 1, q1, () => items);
    expect(cache.answer('jobs', 1, q2, () => items) === first).toBe(same);
  });

  it('a prefix that is not a string is no prefix; an item without a string ID never matches a prefix', () => {
    const cache = new ListCache();
    const list = [{ ID: 'a' }, { ID: 7 }, {}];
    expect(cache.answer('s', 1, { prefix: ['a'] }, () => list).body).toBe(JSON.stringify(list));
    expect(cache.answer('s', 1, { prefix: 'a' }, () => list).body).toBe('[{"ID":"a"}]');
    expect(cache.answer('s', 1, { prefix: '' }, () => list).body).toBe(JSON.stringify(list));
  });

  it('an answer without a next page has no nextToken key', () => {
    expect('nextToken' in new ListCache().answer('s', 1, {}, () => items)).toBe(false);
    expect(new ListCache().answer('s', 1, { per_page: '1' }, () => items).nextToken).toBe('b');
  });
});

describe('ListCache bounds', () => {
  it('keeps the answers of 512 queries: the 513th drops the oldest written', () => {
    const cache = new ListCache();
    const first = cache.answer('s', 1, { prefix: 'q0' }, () => items);
    const second = cache.answer('s', 1, { prefix: 'q1' }, () => items);
    for (let i = 2; i < 512; i++) cache.answer('s', 1, { prefix: `q${i}` }, () => items);
    expect(cache.answer('s', 1, { prefix: 'q0' }, () => items)).toBe(first);
    cache.answer('s', 1, { prefix: 'q512' }, () => items);
    expect(cache.answer('s', 1, { prefix: 'q1' }, () => items)).toBe(second);
    expect(cache.answer('s', 1, { prefix: 'q0' }, () => items)).not.toBe(first);
  });

  it('keeps the lists of 512 scopes: the 513th drops the oldest built', () => {
    const cache = new ListCache();
    let builds = 0;
    const build = () => (builds++, items);
    for (let i = 0; i < 512; i++) cache.answer(`s${i}`, 1, {}, build);
    cache.answer('s0', 1, { prefix: 'a' }, build);
    expect(builds).toBe(512);
    cache.answer('s512', 1, {}, build);
    cache.answer('s1', 1, { prefix: 'b' }, build);
    expect(builds).toBe(513);
    cache.answer('s0', 1, { prefix: 'b' }, build);
    expect(builds).toBe(514);
  });

  it('drops the oldest answers once they hold more than 32 MiB', () => {
    const cache = new ListCache();
    const big = [{ ID: 'x'.repeat(17 * 1024 * 1024) }];
    const a = cache.answer('s', 1, { reverse: 'true' }, () => big);
    const b = cache.answer('s', 1, { reverse: 'false' }, () => big);
    expect(cache.answer('s', 1, { reverse: 'false' }, () => big)).toBe(b);
    expect(cache.answer('s', 1, { reverse: 'true' }, () => big)).not.toBe(a);
  });

  it('keeps the newest answer even when it alone holds more than 32 MiB', () => {
    const cache = new ListCache();
    const huge = [{ ID: 'x'.repeat(33 * 1024 * 1024) }];
    const a = cache.answer('s', 1, {}, () => huge);
    expect(cache.answer('s', 1, {}, () => huge)).toBe(a);
  });

  it('keeps answers that hold exactly 32 MiB together', () => {
    const cache = new ListCache();
    const overhead = JSON.stringify([{ ID: '' }]).length;
    const half = [{ ID: 'x'.repeat(16 * 1024 * 1024 - overhead) }];
    const a = cache.answer('s', 1, { reverse: 'true' }, () => half);
    cache.answer('s', 1, { reverse: 'false' }, () => half);
    expect(cache.answer('s', 1, { reverse: 'true' }, () => half)).toBe(a);
  });

  it('an eviction takes the evicted answer\'s size off: a small answer after it evicts nothing more', () => {
    const cache = new ListCache();
    const big = [{ ID: 'x'.repeat(20 * 1024 * 1024) }];
    cache.answer('s', 1, { reverse: 'true' }, () => big);
    const second = cache.answer('s', 1, { reverse: 'false' }, () => big); // evicts the first: 20 MiB kept
    cache.answer('t', 1, {}, () => [{ ID: 'small' }]);
    expect(cache.answer('s', 1, { reverse: 'false' }, () => big)).toBe(second);
  });

  it('an answer replaced at a new index counts its new size only', () => {
    const cache = new ListCache();
    const big = [{ ID: 'x'.repeat(12 * 1024 * 1024) }];
    // Three answers of 12 MiB, each rebuilt at index 2: 36 MiB if the old sizes were still counted.
    for (const q of ['a', 'b']) cache.answer('s', 1, { reverse: q === 'a' ? 'true' : 'false' }, () => big);
    const b1 = cache.answer('s', 2, { reverse: 'false' }, () => big);
    const a2 = cache.answer('s', 2, { reverse: 'true' }, () => big);
    expect(cache.answer('s', 2, { reverse: 'false' }, () => big)).toBe(b1);
    expect(cache.answer('s', 2, { reverse: 'true' }, () => big)).toBe(a2);
  });
});
