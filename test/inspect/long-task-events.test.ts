/**
 * A task that flaps for a long time has more events than the sanitizer keeps per list (500): the page must
 * still get the newest ones (Recent Events shows the latest), each new event must stay one small append
 * rather than the whole cut list again, and a page that connects late gets only the latest few (the
 * picture, which is also what the feed's history checkpoints are made of).
 */
import { assign, createActor, setup } from 'xstate';
import { describe, expect, it } from 'vitest';
import { createInspectionStream } from '../../src/inspect/inspection-stream.ts';
import type { InspectMessage } from '../../src/inspect/protocol.ts';
import { DEFAULT_LIMITS } from '../../src/inspect/sanitize.ts';
import { KEEP_TASK_EVENTS, Model } from '../../visualizer/src/model.ts';

interface TaskEvent {
  type: string;
  time: number;
  message: string;
}

/** A task runner's context in miniature: every event kept, as the runtime keeps them. */
const flapping = setup({
  types: { context: {} as { taskState: { state: string; events: TaskEvent[] } }, events: {} as { type: 'EVENT'; n: number } },
}).createMachine({
  id: 'task',
  context: { taskState: { state: 'running', events: [] } },
  on: {
    EVENT: {
      actions: assign({
        taskState: ({ context, event }) => ({ ...context.taskState, events: [...context.taskState.events, { type: event.n % 2 ? 'Restarting' : 'Terminated', time: event.n, message: `event ${event.n}` }] }),
      }),
    },
  },
});

describe('a task with more events than the sanitizer keeps', () => {
  it('shows the newest 10 of 600 events in the page, each later event sent as one small append, and a late joiner the same', () => {
    const stream = createInspectionStream({ schedule: () => undefined });
    const model = new Model();
    const frames: string[] = [];
    stream.subscribe((batch) => {
      const frame = JSON.stringify(batch);
      frames.push(frame);
      model.apply(JSON.parse(frame) as InspectMessage[]);
    });
    const actor = createActor(flapping, { inspect: stream.inspect }).start();
    for (let n = 0; n < 600; n++) {
      actor.send({ type: 'EVENT', n });
      // One batch per event, as a flapping task's events arrive seconds apart.
      stream.flush();
    }
    const task = [...model.actors.values()].find((a) => a.machineId === 'task')!;
    const shown = (task.context as unknown as { taskState: { events: TaskEvent[] } }).taskState.events;
    expect(shown.map((e) => e.time)).toEqual(Array.from({ length: KEEP_TASK_EVENTS }, (_, i) => 590 + i));
    // Past the limit a batch is as small as before it: no batch carries the kept list again.
    const after = frames.slice(DEFAULT_LIMITS.items + 10);
    expect(after.length).toBeGreaterThan(50);
    for (const f of after) expect(f.length).toBeLessThan(600);

    // A page that connects now gets a picture with the task's latest events only (the history's checkpoints
    // are such pictures), and shows the same as the page that watched all along.
    const picture = stream.snapshotForLateJoiner();
    const late = new Model();
    late.apply(JSON.parse(JSON.stringify(picture)) as InspectMessage[]);
    const lateTask = [...late.actors.values()].find((a) => a.machineId === 'task')!;
    expect(lateTask.context).toEqual(task.context);
    expect(JSON.stringify(picture.filter((m) => m.kind === 'transition')).length).toBeLessThan(3_000);
    // And later events reach it as they reach the other.
    actor.send({ type: 'EVENT', n: 600 });
    stream.flush();
    late.apply(JSON.parse(frames.at(-1)!) as InspectMessage[]);
    const now = [...late.actors.values()].find((a) => a.machineId === 'task')!;
    expect(now.context).toEqual([...model.actors.values()].find((a) => a.machineId === 'task')!.context);
    expect((now.context as unknown as { taskState: { events: TaskEvent[] } }).taskState.events.at(-1)!.time).toBe(600);
    actor.stop();
  });
});
