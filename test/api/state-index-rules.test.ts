/**
 * The agent's one index (src/api/state-index.ts) is reserved durably in blocks before it is handed out, so an
 * agent that takes over the data dir, after a crash too, starts past every index the last one served.
 */
import { describe, expect, it } from 'vitest';
import { StateIndex } from '../../src/api/state-index.ts';

describe('the state index', () => {
  it('reserves the next block before handing out the first index past the last reservation', () => {
    const reserved: number[] = [];
    const index = new StateIndex(10, (upTo) => reserved.push(upTo), 4);
    expect(reserved).toEqual([]);
    expect([index.next(), index.next(), index.next(), index.next()]).toEqual([11, 12, 13, 14]);
    expect(reserved).toEqual([14]);
    expect(index.next()).toBe(15);
    expect(reserved).toEqual([14, 18]);
  });

  it('a failed reservation does not stop the change that asked; it is tried again at the next index', () => {
    const tries: number[] = [];
    let full = true;
    const index = new StateIndex(5, (upTo) => {
      tries.push(upTo);
      if (full) throw new Error('disk full');
    }, 4);
    expect(index.next()).toBe(6);
    full = false;
    expect(index.next()).toBe(7);
    expect(index.next()).toBe(8);
    expect(tries).toEqual([9, 10]);
  });

  it('without a reserve it counts on from its start', () => {
    const index = new StateIndex(3);
    expect([index.next(), index.next()]).toEqual([4, 5]);
  });
});
