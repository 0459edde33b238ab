/**
 * Time travel from checkpoints (visualizer/src/model.ts): for any pick, the picture rebuilt from the
 * nearest checkpoint equals the picture rebuilt from the very first message, also after the cap dropped
 * the oldest history; the cap keeps the messages and checkpoints bounded and says what it dropped.
 * The messages are a real alloc runner's inspection stream (tasks failing and restarting, hooks called
 * again and again), sent through JSON as the page gets them.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createInspectionStream } from '../../src/inspect/inspection-stream.ts';
import { applyContextPatch, type InspectMessage, type JsonValue } from '../../src/inspect/protocol.ts';
import { createAllocRunner } from '../../src/runtime/create-alloc-runner.ts';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.ts';
import { SimulatedClock } from '../../src/testing/simulated-clock.ts';
import { KEEP_TASK_EVENTS, Model } from '../../visualizer/src/model.ts';
import { TEST_NODE } from '../properties/world.ts';
import { alloc, mockTask } from './fixtures.ts';

let messages: InspectMessage[] = [];
/** Every event of a1's web task, as its runner keeps them (all of them). */
let webEvents: { type: string; time: number }[] = [];

beforeAll(async () => {
  const clock = new SimulatedClock(0);
  const stream = createInspectionStream({ now: () => clock.now(), schedule: (fn) => queueMicrotask(fn) });
  const out: InspectMessage[] = [];
  stream.subscribe((b) => out.push(...b));
  const restart = { attempts: 1_000, interval: 3_600_000, delay: 200, mode: 'delay' as const };
  const runners = ['a1', 'a2'].map((id, i) =>
    createAllocRunner(
      alloc(id, [mockTask('init', { run_for: '100ms' }, { lifecycle: { hook: 'prestart' } }), mockTask('web', { run_for: `${1 + i}s`, exit_code: 1 }), mockTask('side', { run_for: '1h' }, { lifecycle: { hook: 'poststart', sidecar: true } })], {
        type: 'service',
        restart,
      }),
      { clock, builtinHooks: false, node: TEST_NODE, hostEnv: {}, seed: 1, drivers: { mock: createMockDriver() }, inspect: stream.inspect },
    ).start(),
  );
  for (let i = 0; i < 3_000 && out.length < 3_000; i++) await clock.advance(100);
  for (const r of runners) r.send({ type: 'KILL' });
  for (let i = 0; i < 50; i++) await clock.advance(100);
  stream.flush();
  webEvents = runners[0]!.getState().taskStates.web!.events.map((e) => ({ type: e.type, time: e.time }));
  for (const r of runners) r.stop();
  messages = JSON.parse(JSON.stringify(out)) as InspectMessage[];
}, 60_000);

/** The parts of a picture the views read, comparable with toEqual. */
function picture(m: Model) {
  const actors = [...m.actors.values()].map((a) => ({ ...a, lastEdges: [...a.lastEdges] })).sort((x, y) => (x.sessionId < y.sessionId ? -1 : 1));
  return { definitions: [...m.definitions.keys()].sort(), actors, roots: [...m.roots], origin: m.origin };
}

/** The picture after message `seq`, from message 0 with no checkpoints at all. */
function fromScratch(seq: number, checkpointEvery: number): Model {
  const m = new Model({ keepLog: false, checkpointEvery });
  m.apply(messages.slice(0, seq + 1));
  return m;
}

/** Feeds `model` all messages in batches of the given sizes (cycled), as the live feed does. */
function feed(model: Model, sizes: number[]): void {
  let i = 0;
  for (let k = 0; i < messages.length; k++) {
    const n = sizes[k % sizes.length]!;
    model.apply(messages.slice(i, i + n));
    i += n;
  }
}

describe('time travel from checkpoints', () => {
  it('has a long enough stream to cross many checkpoints, with repeated calls folded away', () => {
    expect(messages.length).toBeGreaterThan(1_500);
    const model = new Model({ checkpointEvery: 100 });
    model.apply(messages);
    // Restarted tasks' old runners are folded into a count on their allocation, not kept as actors.
    // Each run of a task calls its driver again: the old calls are folded into a count on the task.
    const web = model.findByPath(['a1', 'web'])!;
    expect(web.retired?.['driver:start'] ?? 0).toBeGreaterThan(20);
    expect(web.children.map((sid) => model.actors.get(sid)!.id).filter((id) => id === 'driver:start')).toHaveLength(1);
    expect(model.actors.size).toBeLessThan(60);
  });

  it("keeps each task's latest 10 events, as Nomad does, in the alloc's and the task's contexts", () => {
    expect(webEvents.length).toBeGreaterThan(KEEP_TASK_EVENTS * 3);
    const model = new Model();
    model.apply(messages);
    const alloc = model.findByPath(['a1'])!;
    const task = model.findByPath(['a1', 'web'])!;
    // The contexts as the stream sent them, patches applied with nothing cut.
    const full = new Map<string, JsonValue | undefined>();
    for (const m of messages) {
      if (m.kind !== 'transition') continue;
      if (m.context !== undefined) full.set(m.sessionId, m.context);
      else if (m.patch) full.set(m.sessionId, applyContextPatch(full.get(m.sessionId), m.patch, (sid) => full.get(sid)));
    }
    const sent = (full.get(alloc.sessionId) as { taskStates: Record<string, { events: unknown[] }> }).taskStates.web!.events;
    expect(sent.length).toBeGreaterThan(KEEP_TASK_EVENTS * 3);
    const shownByAlloc = (alloc.context as { taskStates: Record<string, { events: unknown[] }> }).taskStates.web!.events;
    expect(shownByAlloc).toEqual(sent.slice(-KEEP_TASK_EVENTS));
    const sentToTask = (full.get(task.sessionId) as { taskState: { events: unknown[] } }).taskState.events;
    expect((task.context as { taskState: { events: unknown[] } }).taskState.events).toEqual(sentToTask.slice(-KEEP_TASK_EVENTS));
    // The rest of the context is the stream's.
    expect({ ...(alloc.context as object), taskStates: undefined }).toEqual({ ...(full.get(alloc.sessionId) as object), taskStates: undefined });
  });

  it('rebuilds any pick from the nearest checkpoint exactly as from the first message', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 7, max: 300 }),
        fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 6 }),
        (every, sizes, picks) => {
          const model = new Model({ checkpointEvery: every, maxLog: 1_000_000 });
          feed(model, sizes);
          for (const p of picks) {
            const seq = p % messages.length;
            expect(picture(model.at(seq))).toEqual(picture(fromScratch(seq, every)));
          }
        },
      ),
      { numRuns: 25 },
    );
  });

  it('keeps the messages under the cap, says what it dropped, and still travels exactly within what is kept', () => {
    fc.assert(
      fc.property(fc.integer({ min: 20, max: 120 }), fc.integer({ min: 2, max: 6 }), fc.array(fc.nat(), { minLength: 1, maxLength: 5 }), (every, blocks, picks) => {
        const maxLog = every * blocks;
        const model = new Model({ checkpointEvery: every, maxLog });
        feed(model, [37, 250, 3]);
        expect(model.kept.messages).toBeLessThanOrEqual(maxLog);
        expect(model.kept.checkpoints).toBeLessThanOrEqual(blocks + 1);
        const cut = model.historyCut!;
        expect(cut.dropped).toBe(model.earliestSeq);
        expect(cut.seq).toBe(model.earliestSeq);
        expect(model.timeline.every((e) => e.seq >= model.earliestSeq)).toBe(true);
        for (const p of picks) {
          const seq = model.earliestSeq + (p % (messages.length - model.earliestSeq));
          expect(picture(model.at(seq))).toEqual(picture(fromScratch(seq, every)));
        }
        // A pick older than what is kept shows the oldest kept moment.
        expect(picture(model.at(0))).toEqual(picture(fromScratch(model.earliestSeq - 1, every)));
      }),
      { numRuns: 15 },
    );
  });

  it("gives the past only the timeline up to the pick, and counts event numbers from the last reset", () => {
    const model = new Model({ checkpointEvery: 100 });
    model.apply(messages.slice(0, 50));
    model.reset();
    model.apply(messages);
    const pick = model.timeline[Math.floor(model.timeline.length / 2)]!;
    const past = model.at(pick.seq);
    expect(past.timeline.length).toBeGreaterThan(0);
    expect(past.timeline.every((e) => e.seq <= pick.seq)).toBe(true);
    expect(past.timeline.at(-1)!.seq).toBe(Math.max(...model.timeline.filter((e) => e.seq <= pick.seq).map((e) => e.seq)));
    expect(model.eventNumber(pick.seq)).toBe(pick.seq - 50 + 1);
  });
});
