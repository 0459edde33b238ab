/**
 * The agent's apply order (src/api/apply-order.ts), as a table of takes, applies, failures and commit-less writes:
 * an apply runs only once every lower index taken has applied or been abandoned, at once when none is open. The
 * writers that go through it are route-apply-order-rules'.
 */
import { describe, expect, it } from 'vitest';
import { ApplyOrder } from '../../src/api/apply-order.ts';

/** An order counting from 10, and what has applied (by index), in the order it did. */
function order(): { o: ApplyOrder; applied: number[]; at: (i: number) => Promise<number> } {
  let n = 10;
  const o = new ApplyOrder(() => ++n);
  const applied: number[] = [];
  return { o, applied, at: (i) => o.applyAt(i, () => (applied.push(i), i)) };
}

describe('the apply order', () => {
  it.each<[string, (t: ReturnType<typeof order>) => void, number[], number[]]>([
    ['an apply with nothing below it runs at once', (t) => void t.at(t.o.take()), [11], []],
    ['an apply waits for a lower index still committing', (t) => {
      t.o.take();
      void t.at(t.o.take());
    }, [], [11, 12]],
    ['a lower apply lets the waiting ones go, lowest first', (t) => {
      const a = t.o.take();
      const b = t.o.take();
      const c = t.o.take();
      void t.at(c);
      void t.at(b);
      void t.at(a);
    }, [11, 12, 13], []],
    ['an abandoned index lets the next go, with nothing applied of its own', (t) => {
      const a = t.o.take();
      void t.at(t.o.take());
      t.o.abandon(a);
    }, [12], []],
    ['an abandoned index in the middle: the ones past it wait only for the lower ones', (t) => {
      const a = t.o.take();
      const b = t.o.take();
      void t.at(t.o.take());
      t.o.abandon(b);
      expect(t.applied).toEqual([]);
      void t.at(a);
    }, [11, 13], []],
    ['a write with no commit runs at once when nothing is open', (t) => void t.o.applyNext((i) => t.applied.push(i)), [11], []],
    ['a write with no commit queues behind a lower index still committing', (t) => {
      t.o.take();
      t.o.applyNext((i) => t.applied.push(i));
    }, [], [11, 12]],
    ['a queued write with no commit runs once the lower one applies', (t) => {
      const a = t.o.take();
      t.o.applyNext((i) => t.applied.push(i));
      void t.at(a);
    }, [11, 12], []],
    ['a write with no commit made during an apply runs after it, not inside it', (t) => {
      const a = t.o.take();
      void t.o.applyAt(a, () => {
        t.o.applyNext((i) => t.applied.push(i));
        t.applied.push(a);
      });
    }, [11, 12], []],
    ['a second abandon of the same index changes nothing', (t) => {
      const a = t.o.take();
      t.o.take();
      t.o.abandon(a);
      t.o.abandon(a);
    }, [], [12]],
  ])('%s', (_name, run, applied, pending) => {
    const t = order();
    run(t);
    expect(t.applied).toEqual(applied);
    expect(t.o.pending).toEqual(pending);
  });

  it('resolves with what the apply returned once it ran', async () => {
    const t = order();
    const a = t.o.take();
    const b = t.at(t.o.take());
    t.o.abandon(a);
    await expect(b).resolves.toBe(12);
  });

  it('rejects with what the apply threw, and the next index still goes', async () => {
    const t = order();
    const a = t.o.take();
    const failing = t.o.applyAt(a, () => {
      throw new Error('broken apply');
    });
    await expect(failing).rejects.toThrow('broken apply');
    await expect(t.at(t.o.take())).resolves.toBe(12);
  });

  it('refuses an apply at an index not taken, or taken and already applied', async () => {
    const t = order();
    await expect(t.o.applyAt(99, () => 0)).rejects.toThrow('index 99 is not one taken');
    const a = t.o.take();
    t.o.take();
    void t.o.applyAt(a, () => 0);
    await expect(t.o.applyAt(a, () => 0)).rejects.toThrow(`index ${a} is not one taken`);
  });

  it('a queued write with no commit that throws is reported, and the ones after it still run', () => {
    const reported: unknown[] = [];
    let n = 10;
    const o = new ApplyOrder(() => ++n, (err) => reported.push(err));
    const a = o.take();
    const applied: number[] = [];
    o.applyNext(() => {
      throw new Error('broken state change');
    });
    o.applyNext((i) => applied.push(i));
    o.abandon(a);
    expect(applied).toEqual([13]);
    expect(reported).toEqual([new Error('broken state change')]);
    expect(o.pending).toEqual([]);
  });

  it.each<[string, (o: ApplyOrder) => number, boolean]>([
    ['nothing open below', (o) => o.take(), true],
    ['a lower index open', (o) => (o.take(), o.take()), false],
    ['only higher indexes open', (o) => {
      const mine = o.take();
      o.take();
      return mine;
    }, true],
  ])('settledBelow with %s: resolved at once %s', async (_name, setUp, atOnce) => {
    let n = 10;
    const o = new ApplyOrder(() => ++n);
    const mine = setUp(o);
    let resolved = false;
    void o.settledBelow(mine).then(() => (resolved = true));
    await Promise.resolve();
    expect(resolved).toBe(atOnce);
  });

  it('settledBelow resolves once every lower index has settled, not before', async () => {
    let n = 10;
    const o = new ApplyOrder(() => ++n);
    const a = o.take();
    const b = o.take();
    const mine = o.take();
    let resolved = false;
    void o.settledBelow(mine).then(() => (resolved = true));
    o.abandon(b);
    await Promise.resolve();
    expect(resolved).toBe(false);
    expect(o.waiting).toBe(1);
    await o.applyAt(a, () => undefined);
    await Promise.resolve();
    expect(resolved).toBe(true);
    expect(o.waiting, 'a woken write is waiting no more').toBe(0);
  });

  it('an apply that settles another index finishes before the next apply starts (none runs inside another)', () => {
    let n = 10;
    const o = new ApplyOrder(() => ++n);
    const log: string[] = [];
    const a = o.take();
    const b = o.take();
    const c = o.take();
    void o.applyAt(b, () => log.push('b'));
    void o.applyAt(a, () => {
      log.push('a starts');
      o.abandon(c);
      log.push('a ends');
    });
    expect(log).toEqual(['a starts', 'a ends', 'b']);
  });

  it('a write with no commit made inside another run at once runs after it, not inside it', () => {
    let n = 10;
    const o = new ApplyOrder(() => ++n);
    const log: string[] = [];
    o.applyNext((i) => {
      log.push(`outer ${i} starts`);
      o.applyNext((j) => log.push(`inner ${j}`));
      log.push('outer ends');
    });
    expect(log).toEqual(['outer 11 starts', 'outer ends', 'inner 12']);
    expect(o.pending).toEqual([]);
  });
});
