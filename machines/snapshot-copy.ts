/**
 * `snapshotWith`: a machine snapshot with its context or children replaced, written out field by field, for the
 * resolves that change only those (context-assign.ts, child-actions.ts).
 *
 * Why not `{ ...snapshot, context }`: V8 (Node 20) copies a spread object through its generic clone path
 * whenever the copies' shapes vary (these resolves see the alloc's and the task runner's snapshots, made by
 * XState and by themselves): about half a microsecond a copy against a few tens of nanoseconds for the object
 * literal below, whose shape is always the same. A lifecycle of P3 with built-in hooks makes ~90 such copies.
 *
 * The fields are `createMachineSnapshot`'s (XState 5), in its order, so the copy has the shape of the snapshots
 * XState makes. `SNAPSHOT_FIELDS` names them: test/machines/snapshot-copy.test.ts compares it with the keys of a
 * snapshot XState makes, so an XState upgrade that adds, drops or renames one fails there first.
 */
import type { AnyMachineSnapshot } from 'xstate';

export const SNAPSHOT_FIELDS = [
  'status',
  'output',
  'error',
  'machine',
  'context',
  '_nodes',
  'value',
  'tags',
  'children',
  'historyValue',
  'matches',
  'hasTag',
  'can',
  'getMeta',
  'toJSON',
] as const;

/** `snapshot` with `context` and `children` replaced (pass the snapshot's own for the one that stays). */
export function snapshotWith(snapshot: AnyMachineSnapshot, context: unknown, children: AnyMachineSnapshot['children']): AnyMachineSnapshot {
  return {
    status: snapshot.status,
    output: snapshot.output,
    error: snapshot.error,
    machine: snapshot.machine,
    context,
    _nodes: snapshot._nodes,
    value: snapshot.value,
    tags: snapshot.tags,
    children,
    historyValue: snapshot.historyValue,
    matches: snapshot.matches,
    hasTag: snapshot.hasTag,
    can: snapshot.can,
    getMeta: snapshot.getMeta,
    toJSON: snapshot.toJSON,
  } as AnyMachineSnapshot;
}
