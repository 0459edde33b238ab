// machines/snapshot-copy.ts: `snapshotWith` writes XState's snapshot out field by field; its field list must
// be XState's, in XState's order, or the copies would lose a field (or have another shape) after an upgrade.
import { createActor, setup } from 'xstate';
import { describe, expect, it } from 'vitest';
import { SNAPSHOT_FIELDS, snapshotWith } from '../../machines/snapshot-copy.ts';

const machine = setup({ types: { context: {} as { n: number } } }).createMachine({
  context: { n: 1 },
  initial: 'a',
  states: { a: { tags: ['t'], on: { GO: 'b' } }, b: { type: 'final' } },
});

describe('snapshotWith', () => {
  it("names the fields of the snapshots XState makes, in XState's order", () => {
    const actor = createActor(machine).start();
    expect(Object.keys(actor.getSnapshot())).toEqual([...SNAPSHOT_FIELDS]);
    actor.send({ type: 'GO' });
    expect(Object.keys(actor.getSnapshot())).toEqual([...SNAPSHOT_FIELDS]);
  });

  it('copies every field but the context and children it is given, and leaves the snapshot as it was', () => {
    const snapshot = createActor(machine).start().getSnapshot();
    const context = { n: 2 };
    const children = {};
    const copy = snapshotWith(snapshot, context, children);
    expect(copy).not.toBe(snapshot);
    expect(Object.keys(copy)).toEqual(Object.keys(snapshot));
    for (const key of SNAPSHOT_FIELDS) {
      if (key === 'context') expect(copy.context).toBe(context);
      else if (key === 'children') expect(copy.children).toBe(children);
      else expect(copy[key], key).toBe(snapshot[key]);
    }
    expect(snapshot.context).toEqual({ n: 1 });
    expect(copy.hasTag('t')).toBe(true);
    expect(copy.matches('a')).toBe(true);
  });
});
