/**
 * `spawnCall` and `stopCall`: XState's `spawnChild` and `stopChild` for the runners' own spawns and stops (the
 * hook calls, the task runners, the driver's signal), made without recomputing the runner's snapshot.
 *
 * XState 5 resolves each of them into a whole new machine snapshot (`cloneMachineSnapshot` →
 * `createMachineSnapshot`: the state value computed again from the active state nodes, a new tags `Set`), only
 * to change its `children`. A spawn or stop changes neither the configuration nor the tags, so the next snapshot
 * is the current one with its children replaced: as `assignContext` does for the context (context-assign.ts).
 * With the built-in hooks a 3-task lifecycle spawns and stops 13 hooks and spawns 3 task runners.
 *
 * The actions are XState's own (same types `xstate.spawnChild` / `xstate.stopChild`, same typing, same place in
 * the action order, XState's `execute` that starts or stops the child), with only `resolve` replaced. The
 * child is made as XState makes it (`createActor` with the same options). A spawn whose `src` is not an actor
 * the machine provides (XState then leaves the child undefined) is resolved by XState's own `resolve`.
 * test/machines/child-actions.test.ts pins that every snapshot is XState's, field by field.
 */
import { createActor, spawnChild, stopChild, type AnyActorLogic, type AnyActorRef, type AnyActorScope, type AnyMachineSnapshot, type EventObject } from 'xstate';
import { snapshotWith } from './snapshot-copy.ts';
import { withEntry } from './record-copy.ts';

type Resolve = (scope: AnyActorScope, snapshot: AnyMachineSnapshot, args: ActionArgs, params: unknown, def: never) => [AnyMachineSnapshot, unknown, undefined];
interface ActionArgs {
  context: unknown;
  event: EventObject;
}
interface SpawnDef {
  id: string | ((args: ActionArgs) => string);
  systemId: string | undefined;
  src: string | AnyActorLogic;
  input: unknown;
  syncSnapshot: boolean;
}
interface StopDef {
  actorRef: string | AnyActorRef | ((args: ActionArgs, params: unknown) => string | AnyActorRef | undefined);
}

// XState's own resolves, for the case left to them.
const xstateResolveSpawn = (spawnChild('x', { id: 'x' }) as unknown as { resolve: Resolve }).resolve;

/** The `resolve` of a spawn that replaces only the snapshot's children (see the file's comment). */
function resolveSpawnCall(
  scope: AnyActorScope,
  snapshot: AnyMachineSnapshot,
  args: ActionArgs,
  params: unknown,
  def: SpawnDef,
): [AnyMachineSnapshot, unknown, undefined] {
  const { id, systemId, src, input, syncSnapshot } = def;
  // A string names a provided actor; XState's inline `xstate.invoke.*` sources are invokes', never ours.
  const logic = typeof src === 'string' ? (snapshot.machine.implementations.actors[src] as AnyActorLogic | undefined) : src;
  if (!logic || (typeof src === 'string' && src.startsWith('xstate.invoke.'))) return xstateResolveSpawn(scope, snapshot, args, params, def as never);
  const resolvedId = typeof id === 'function' ? id(args) : id;
  const resolvedInput = typeof input === 'function' ? input({ context: snapshot.context, event: args.event, self: scope.self }) : input;
  // Only the options given: XState's Actor copies them onto its defaults with `{ ...defaults, ...options }`,
  // which V8 (Node 20) does at about a microsecond a key (record-copy.ts); ours have no `systemId`.
  // (`syncSnapshot` is always given: the child's persisted snapshot records it, `false` included.)
  const options: Record<string, unknown> = { id: resolvedId, src, parent: scope.self, syncSnapshot, input: resolvedInput };
  if (systemId !== undefined) options['systemId'] = systemId;
  const actorRef = createActor(logic, options as never);
  const next = snapshotWith(snapshot, snapshot.context, withEntry(snapshot.children, resolvedId, actorRef));
  return [next, { id, systemId, actorRef, src, input: resolvedInput }, undefined];
}

/** The `resolve` of a stop that replaces only the snapshot's children (see the file's comment). */
function resolveStopCall(
  _scope: AnyActorScope,
  snapshot: AnyMachineSnapshot,
  args: ActionArgs,
  params: unknown,
  { actorRef }: StopDef,
): [AnyMachineSnapshot, AnyActorRef | undefined, undefined] {
  const refOrId = typeof actorRef === 'function' ? actorRef(args, params) : actorRef;
  const ref = typeof refOrId === 'string' ? (snapshot.children[refOrId] as AnyActorRef | undefined) : refOrId;
  // Nothing to stop (the child is gone already): the children, and so the snapshot, are as they were.
  if (!ref) return [snapshot, undefined, undefined];
  // Copied without the stopped child rather than copied and `delete`d (which turns the copy into a dictionary).
  const children: Record<string, AnyActorRef> = {};
  for (const key in snapshot.children) if (key !== ref.id) children[key] = snapshot.children[key] as AnyActorRef;
  return [snapshotWith(snapshot, snapshot.context, children), ref, undefined];
}

/** XState's `spawnChild`, resolved without recomputing the runner's snapshot (see the file's comment). */
export const spawnCall = ((...args: Parameters<typeof spawnChild>) => {
  const action = (spawnChild as unknown as (...a: unknown[]) => { resolve: unknown })(...args);
  action.resolve = resolveSpawnCall;
  return action;
}) as unknown as typeof spawnChild;

/** XState's `stopChild`, resolved without recomputing the runner's snapshot (see the file's comment). */
export const stopCall = ((actorRef: unknown) => {
  const action = (stopChild as unknown as (a: unknown) => { resolve: unknown })(actorRef);
  action.resolve = resolveStopCall;
  return action;
}) as unknown as typeof stopChild;
