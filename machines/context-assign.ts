/**
 * `assignContext`: XState's `assign` for a machine whose assigns only update context, made without the
 * work an assign never needs. XState 5 resolves every `assign` into a whole new machine snapshot
 * (`cloneMachineSnapshot` → `createMachineSnapshot`): the state value computed again from the active state
 * nodes (`getStateValue`: `getAllStateNodes`, `getAdjList`), a new tags `Set`, a spawner closure. An assign
 * changes neither the configuration nor the tags, so the next snapshot is the current one with its context
 * replaced; and an update that sets nothing (an action that found nothing to record) is no new snapshot.
 *
 * The action is XState's own `assign` (same type `xstate.assign`, same typing, same place in the action
 * order), with only its `resolve` replaced. `spawn` is not offered: no assignment of ours spawns (actors are
 * invoked or `spawnChild`ed), and one that tried would fail loudly. test/machines/context-assign.test.ts
 * pins that the snapshot made is XState's, field by field, so an XState upgrade that changes the snapshot's
 * shape fails there first.
 */
import { assign, type AnyActorScope, type AnyMachineSnapshot, type EventObject } from 'xstate';
import { snapshotWith } from './snapshot-copy.ts';

type Assignment = ((args: Record<string, unknown>, params: unknown) => object) | Record<string, unknown>;

function noSpawn(): never {
  throw new Error('assignContext: an assignment cannot spawn actors; use spawnChild or invoke');
}

function partialOf(assignment: Assignment, args: Record<string, unknown>, params: unknown): object {
  if (typeof assignment === 'function') return assignment(args, params);
  const partial: Record<string, unknown> = {};
  for (const key of Object.keys(assignment)) {
    const value = assignment[key];
    partial[key] = typeof value === 'function' ? (value as (a: unknown, p: unknown) => unknown)(args, params) : value;
  }
  return partial;
}

function hasOwnKey(o: object): boolean {
  for (const key in o) if (Object.prototype.hasOwnProperty.call(o, key)) return true;
  return false;
}

/** The `resolve` of an assign that replaces only the snapshot's context (see the file's comment). */
function resolveContextOnly(
  actorScope: AnyActorScope,
  snapshot: AnyMachineSnapshot,
  actionArgs: { event: EventObject },
  actionParams: unknown,
  { assignment }: { assignment: Assignment },
): [AnyMachineSnapshot, undefined, undefined] {
  const partial = partialOf(assignment, { context: snapshot.context, event: actionArgs.event, spawn: noSpawn, self: actorScope.self, system: actorScope.system }, actionParams);
  if (!hasOwnKey(partial)) return [snapshot, undefined, undefined];
  return [snapshotWith(snapshot, { ...snapshot.context, ...partial }, snapshot.children), undefined, undefined];
}

/** XState's `assign`, resolved without recomputing what an assign cannot change (see the file's comment). */
export const assignContext = ((assignment: Assignment) => {
  const action = (assign as unknown as (a: Assignment) => { resolve: unknown })(assignment);
  action.resolve = resolveContextOnly;
  return action;
}) as unknown as typeof assign;
