// machines/context-assign.ts: `assignContext` makes the snapshot XState's `assign` makes, without computing the
// state value and tags again; an update that sets nothing is no new snapshot. The same machine is run with
// each, step by step, and every snapshot compared field by field (an XState upgrade that adds a field or
// computes one from the context fails here first).
import { assign, createActor, setup, type AnyMachineSnapshot } from 'xstate';
import { describe, expect, it } from 'vitest';
import { assignContext } from '../../machines/context-assign.ts';

interface Ctx {
  n: number;
  log: string[];
  fixed: { name: string };
}
type Ev = { type: 'ADD'; by: number } | { type: 'NOTHING' } | { type: 'GO' } | { type: 'MAP' } | { type: 'SPAWN' };

function machineWith(a: typeof assign) {
  return setup({
    types: { context: {} as Ctx, events: {} as Ev },
    actions: {
      add: a(({ context, event }) => (event.type === 'ADD' ? { n: context.n + event.by, log: [...context.log, `add ${event.by}`] } : {})),
      nothing: a(() => ({})),
      byMap: a({ n: ({ context }) => context.n * 2, log: ['mapped'] }),
      withParams: a(({ context }, p: { tag: string }) => ({ log: [...context.log, p.tag] })),
    },
  }).createMachine({
    context: { n: 0, log: [], fixed: { name: 'x' } },
    initial: 'idle',
    states: {
      idle: {
        tags: ['waiting'],
        on: {
          ADD: { actions: 'add' },
          NOTHING: { actions: 'nothing' },
          MAP: { actions: 'byMap' },
          GO: { target: 'busy', actions: ['add', { type: 'withParams', params: { tag: 'leaving' } }] },
        },
      },
      busy: {
        type: 'parallel',
        entry: { type: 'withParams', params: { tag: 'entered' } },
        states: {
          a: { tags: ['a'], initial: 'one', states: { one: { on: { ADD: { target: 'two', actions: 'add' } } }, two: {} } },
          b: { initial: 'one', states: { one: { on: { MAP: { actions: 'byMap' } } } } },
        },
      },
    },
  });
}

// Each run has its own machine object: compared by its id, the state nodes by theirs.
const plain = (s: AnyMachineSnapshot) => ({ ...s, machine: s.machine.id, tags: [...s.tags].sort(), _nodes: s._nodes.map((n) => n.id) });

describe('assignContext', () => {
  const events: Ev[] = [{ type: 'ADD', by: 2 }, { type: 'NOTHING' }, { type: 'MAP' }, { type: 'GO' }, { type: 'ADD', by: 5 }, { type: 'MAP' }, { type: 'NOTHING' }];

  it("makes XState's snapshot at every step, field by field", () => {
    const xs = createActor(machineWith(assign)).start();
    const ours = createActor(machineWith(assignContext)).start();
    expect(plain(ours.getSnapshot())).toEqual(plain(xs.getSnapshot()));
    for (const e of events) {
      xs.send(e);
      ours.send(e);
      const [a, b] = [ours.getSnapshot(), xs.getSnapshot()];
      expect(Object.keys(a).sort(), e.type).toEqual(Object.keys(b).sort());
      expect(plain(a), e.type).toEqual(plain(b));
      expect(a.hasTag('a'), e.type).toBe(b.hasTag('a'));
    }
    expect(ours.getSnapshot().context).toEqual({ n: 18, log: ['mapped'], fixed: { name: 'x' } });
    expect(ours.getSnapshot().value).toEqual({ busy: { a: 'two', b: 'one' } });
    expect(ours.getPersistedSnapshot()).toEqual(xs.getPersistedSnapshot());
  });

  it('keeps the snapshot and its context when the update sets nothing, and copies the context when it sets something', () => {
    const actor = createActor(machineWith(assignContext)).start();
    const before = actor.getSnapshot();
    actor.send({ type: 'NOTHING' });
    expect(actor.getSnapshot().context).toBe(before.context);
    actor.send({ type: 'ADD', by: 1 });
    const after = actor.getSnapshot();
    expect(after.context).not.toBe(before.context);
    expect(before.context.n).toBe(0);
    expect(after.context.fixed).toBe(before.context.fixed);
  });

  it('refuses to spawn from an assignment, loudly', () => {
    const m = setup({ types: { context: {} as { ref?: unknown }, events: {} as { type: 'SPAWN' } } }).createMachine({
      context: {},
      on: { SPAWN: { actions: assignContext(({ spawn }) => ({ ref: (spawn as (src: string) => unknown)('x') })) } },
    });
    const actor = createActor(m);
    const errors: unknown[] = [];
    actor.subscribe({ error: (e) => errors.push(e) });
    actor.start();
    actor.send({ type: 'SPAWN' });
    expect(String(errors[0])).toMatch(/assignContext: an assignment cannot spawn actors/);
  });
});
