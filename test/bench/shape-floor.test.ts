/**
 * P3's shape floor (bench/lib/shape-floor.ts) is only a floor while it has exactly the actors and events of
 * allocrun's P3 allocation: counted here on both, one lifecycle each, with and without built-in hooks. A change
 * to the machines that adds or removes an event per lifecycle fails this until the floor says the same.
 */
import { createActor, type InspectionEvent } from 'xstate';
import { describe, expect, it } from 'vitest';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { shapeFloorMachine } from '../../bench/lib/shape-floor.ts';
import { threeTaskSpec } from '../../bench/lib/three-task-spec.ts';
import { tempDir } from '../temp-dirs.ts';

/** Actor ids and event types with the allocation's own id folded away. */
function counter(allocId?: string) {
  const actors: string[] = [];
  const events: string[] = [];
  // A root actor created without an id (the floor's) is named `x:<n>` by XState.
  const name = (id: string) => (id === allocId || /^x:\d+$/.test(id) ? '<alloc>' : id);
  const inspect = (e: InspectionEvent) => {
    const id = name((e.actorRef as unknown as { id: string }).id);
    if (e.type === '@xstate.actor') actors.push(id);
    else if (e.type === '@xstate.event') events.push(`${id} <- ${(allocId ? e.event.type.replace(`.${allocId}`, '.<alloc>') : e.event.type)}`);
  };
  return { inspect, counts: () => ({ actors: actors.sort(), events: events.sort() }) };
}

async function allocrunCounts(builtinHooks: boolean) {
  const c = counter('floor-check');
  const r = createAllocRunner(threeTaskSpec('floor-check'), { dataDir: tempDir('allocrun-floor-'), builtinHooks, inspect: c.inspect }).start();
  await r.done;
  r.stop();
  return c.counts();
}

async function floorCounts(variant: 'hooks' | 'nohooks') {
  const c = counter();
  const actor = createActor(shapeFloorMachine(variant), { inspect: c.inspect });
  await new Promise<void>((resolve) => {
    actor.subscribe({ complete: resolve });
    actor.start();
  });
  return c.counts();
}

describe("P3's shape floor", () => {
  it.each([
    ['without built-in hooks', false, 'nohooks', 10, 38],
    ['with built-in hooks', true, 'hooks', 23, 80],
  ] as const)('has the actors and events of allocrun %s, one for one', async (_what, builtinHooks, variant, actors, events) => {
    const ours = await allocrunCounts(builtinHooks);
    const floor = await floorCounts(variant);
    // The task runners tell their alloc of news with TASK_CHANGED; the floor's tasks tell it the same way.
    expect(floor).toEqual(ours);
    expect([ours.actors.length, ours.events.length]).toEqual([actors, events]);
  });
});
